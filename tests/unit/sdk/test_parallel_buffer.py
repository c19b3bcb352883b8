"""ParallelBuffer and RingBuffer: the official API, memory that never outlives its users, and
handing a buffer to another process without copying it."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import pickle
import re
import signal
from collections.abc import Iterator
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any

import _parallel_children as children
import numpy as np
import pytest

from aistore._internal import parallel, shm
from aistore.sdk.errors import InsufficientSharedMemoryError
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer, RingBuffer


def _memfd_maps(pid: int | str = "self") -> list[str]:
    """Mappings of our shared memory in `pid`, except this process's idle pooled segments."""
    pooled = shm.pool().idle_names
    with open(f"/proc/{pid}/maps") as f:
        lines = [line for line in f if "memfd:aistore" in line]
    return [m for m in lines if m.split("memfd:")[1].split(" ")[0] not in pooled]


_memfd_fds = children.memfd_fds


def _recv(conn: Any) -> Any:
    """The next message from a child, failing (instead of hanging) if it died."""
    assert conn.poll(60), "the child process sent nothing (did it die?)"
    return conn.recv()


@pytest.fixture(autouse=True)
def _no_pool() -> Iterator[None]:
    """Start and end every test with an empty pool, and check nothing was left in /dev/shm."""
    shm.pool().clear()
    before = set(os.listdir("/dev/shm"))
    yield
    gc.collect()
    shm.pool().clear()
    assert not {n for n in set(os.listdir("/dev/shm")) - before if n.startswith("aistore")}
    assert _memfd_maps() == [] and _memfd_fds() == []


def _filled(size: int) -> ParallelBuffer:
    buf = ParallelBuffer._allocate(size)
    buf.buf[:] = bytes(i % 251 for i in range(size))
    return buf


def test_official_api() -> None:
    buf = _filled(1000)
    assert len(buf) == 1000 and buf.buf.nbytes == 1000 and not buf.buf.readonly
    assert buf.name.startswith("aistore-buffer-")
    assert buf.tobytes() == bytes(i % 251 for i in range(1000))
    assert np.frombuffer(buf.buf, dtype=np.uint8)[3] == 3
    with buf as same:
        assert same is buf
    assert buf.closed
    buf.close()  # idempotent
    with pytest.raises(ValueError):
        buf.tobytes()
    assert "closed" in repr(buf)


def test_torch_frombuffer() -> None:
    torch = pytest.importorskip("torch")
    with _filled(4096) as buf:
        tensor = torch.frombuffer(buf.buf, dtype=torch.uint8)
        assert int(tensor[250]) == 250 and tensor.numel() == 4096


def test_caller_made_shared_memory_is_unlinked_on_close() -> None:
    mem = shared_memory.SharedMemory(create=True, size=100)
    buf = ParallelBuffer(mem, 10)
    assert buf.name == mem.name and len(buf) == 10
    buf.close()
    assert mem.name.lstrip("/") not in os.listdir("/dev/shm")


def test_nothing_in_dev_shm_ever() -> None:
    before = set(os.listdir("/dev/shm"))
    bufs = [ParallelBuffer._allocate(1 << 20) for _ in range(3)]
    assert set(os.listdir("/dev/shm")) == before
    assert len(_memfd_maps()) == 3
    for b in bufs:
        b.close()


def test_garbage_collection_releases_memory() -> None:
    buf = _filled(1 << 20)
    assert _memfd_maps()
    del buf
    gc.collect()
    assert _memfd_maps() == []


def test_ring_buffer() -> None:
    ring = RingBuffer(num_slots=3, slot_size=10)
    assert len(ring) == 30 and ring.num_slots == 3 and ring.slot_size == 10
    ring.slot_view(2)[:3] = b"abc"
    ring.slot_ready[2].set()
    assert ring.wait_slot(2) and not ring.slot_ready[2].is_set()
    assert not ring.wait_slot(2, timeout=0.01)
    assert ring.read_slot(2, 3) == b"abc"
    ring.close()
    with pytest.raises(ValueError):
        RingBuffer(0, 10)


def test_insufficient_memory_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shm, "available_bytes", lambda: 1000)
    with pytest.raises(InsufficientSharedMemoryError) as info:
        ParallelBuffer._allocate(1 << 20)
    err = info.value
    assert isinstance(err, MemoryError)
    assert (err.requested, err.available) == (1 << 20, 1000)
    assert "free RAM, cgroup memory limit or /dev/shm space" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (again.requested, again.available) == (err.requested, err.available)


def test_available_bytes_is_sensible() -> None:
    avail = shm.available_bytes()
    assert avail is not None and avail > 0
    with pytest.raises(InsufficientSharedMemoryError):
        shm.check_capacity(avail + (1 << 40))


def test_plain_pickle_is_refused() -> None:
    with _filled(10) as buf, pytest.raises(TypeError, match="multiprocessing"):
        pickle.dumps(buf)


def test_pool_reuses_cleanly_closed_memory() -> None:
    first = _filled(1 << 20)
    name = first.name
    first.close()
    assert shm.pool().idle_bytes >= 1 << 20 and name in shm.pool().idle_names
    second = ParallelBuffer._allocate((1 << 20) - 100)
    assert second.name == name and len(second) == (1 << 20) - 100
    second.close()
    third = ParallelBuffer._allocate(4 << 20)  # too big for the pooled one
    assert third.name != name
    third.close()


def test_exported_memory_is_never_reused() -> None:
    buf = _filled(1 << 20)
    arr = np.frombuffer(buf.buf, dtype=np.uint8)
    buf.close()
    assert shm.pool().idle_bytes == 0
    other = ParallelBuffer._allocate(1 << 20)
    other.buf[:] = b"\xff" * len(other)
    assert arr[7] == 7
    other.close()
    del arr
    gc.collect()


def test_pool_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = shm.SegmentPool(limit=3 << 20)
    monkeypatch.setattr(shm, "_pool", pool)
    bufs = [ParallelBuffer._allocate(1 << 20) for _ in range(5)]
    for b in bufs:
        b.close()
    assert pool.idle_bytes == 3 << 20
    pool.clear()
    assert pool.idle_bytes == 0 and _memfd_fds() == []


def test_fork_child_does_not_inherit_the_pool() -> None:
    _filled(1 << 20).close()
    assert shm.pool().idle_bytes >= 1 << 20
    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=children.report, args=(child,))
    proc.start()
    idle, fds = _recv(parent)
    proc.join()
    assert (idle, fds) == (0, 0)


def test_stream_pool_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_piece_pool", None)
    monkeypatch.setenv(parallel.STREAM_POOL_ENV, str(3 * parallel.PIECE_SIZE + 1))
    assert parallel.piece_pool().limit == 3 * parallel.PIECE_SIZE
    monkeypatch.setattr(parallel, "_piece_pool", None)
    monkeypatch.setenv(parallel.STREAM_POOL_ENV, "0")
    assert parallel.piece_pool().limit == 0


def test_fork_child_does_not_inherit_stream_pieces() -> None:
    pool = parallel.piece_pool()
    kept = [pool.fillable(parallel.PIECE_SIZE).take()]
    assert pool.kept >= 1
    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=children.report_pieces, args=(child,))
    proc.start()
    in_child = _recv(parent)
    proc.join()
    assert in_child == 0 and pool.kept >= 1
    del kept


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_handed_to_another_process_without_copy(method: str) -> None:
    """The child maps the same memory: its write is seen by the parent, and the buffer the
    child sends back is again the same memory, not a copy."""
    ctx = mp.get_context(method)
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=children.edit, args=(child,))
    proc.start()
    buf = _filled(1 << 20)
    parent.send(buf)
    head, size, name = _recv(parent)
    assert (head, size, name) == (bytes(range(5)), 1 << 20, buf.name)
    back = _recv(parent)
    assert bytes(buf.buf[:4]) == b"EDIT" and bytes(back.buf[:4]) == b"EDIT"
    back.buf[4:8] = b"BACK"
    assert bytes(buf.buf[4:8]) == b"BACK"
    parent.send(None)
    proc.join(30)
    assert proc.exitcode == 0
    back.close()
    buf.close()
    assert shm.pool().idle_bytes == 0  # memory another process saw is never reused


def _holders(name: str) -> set[int]:
    """Every process on the machine with a descriptor or mapping of segment `name`."""
    held = re.compile(re.escape(name) + r"(?![0-9])")  # not "...-4" for "...-40"
    pids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                mapped = any(held.search(line) for line in f)
            fds = os.listdir(f"/proc/{pid}/fd")
            if mapped or any(held.search(_readlink(f"/proc/{pid}/fd/{fd}")) for fd in fds):
                pids.add(int(pid))
        except OSError:  # the process ended meanwhile
            continue
    return pids


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


@pytest.mark.parametrize("segment", ["memfd", "posix shm"])
def test_a_killed_receiver_leaves_nothing(segment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL a process that holds a received buffer: once the sender closes it too, no
    process anywhere holds the memory (so the kernel freed it), no name is left in /dev/shm,
    and the sender did not keep it for reuse."""
    if segment == "posix shm":
        monkeypatch.delattr(os, "memfd_create", raising=False)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=children.hold, args=(child,))
    proc.start()
    buf = _filled(1 << 20)
    name = buf.name
    parent.send(buf)
    assert _recv(parent) == name
    assert _holders(name) == {os.getpid(), proc.pid}
    proc.kill()
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    assert _holders(name) == {os.getpid()}
    buf.close()
    assert _holders(name) == set()
    assert shm.pool().idle_bytes == 0
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(name)]


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd is Linux-only")
def test_posix_shm_fallback_unlinks_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "memfd_create")
    before = set(os.listdir("/dev/shm"))
    seg = shm.Segment.create(4096, "fallback")
    assert set(os.listdir("/dev/shm")) == before
    seg.view[:2] = b"ok"
    assert bytes(seg.view[:2]) == b"ok"
    seg.shared = True  # not pooled: close really releases it
    seg.close()


def test_cgroup_headroom_is_the_tightest_limit_on_the_path(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("0::/a/b\n")
    root = tmp_path / "fs"
    for rel, limit, current in [("", "max", 0), ("a", "1000", 300), ("a/b", "max", 50)]:
        d = root / rel
        d.mkdir(parents=True, exist_ok=True)
        (d / "memory.max").write_text(limit + "\n")
        (d / "memory.current").write_text(f"{current}\n")
    assert shm._cgroup_headroom(str(proc), str(root)) == 700
    (root / "a" / "b" / "memory.max").write_text("400\n")
    assert shm._cgroup_headroom(str(proc), str(root)) == 350
    (root / "a" / "memory.max").write_text("max\n")
    (root / "a" / "b" / "memory.max").write_text("max\n")
    assert shm._cgroup_headroom(str(proc), str(root)) is None
    assert shm._cgroup_headroom(str(tmp_path / "missing"), str(root)) is None


def test_fillable_bytes() -> None:
    """Streams receive into FillableBytes: bytes filled in place, handed out once no view of
    them is left, never writable afterwards."""
    from aistore._native import FillableBytes

    fill = FillableBytes(5)
    with memoryview(fill) as view:
        view[:] = b"hello"
        with pytest.raises(BufferError, match="still alive"):
            fill.take()
    data = fill.take()
    assert type(data) is bytes and data == b"hello"
    with pytest.raises(BufferError, match="taken"):
        memoryview(fill)
    with pytest.raises(BufferError, match="taken"):
        fill.take()
    orphan = memoryview(FillableBytes(3))  # the view keeps its storage alive
    gc.collect()
    orphan[:] = b"abc"
    assert bytes(orphan) == b"abc"
    with pytest.raises(ValueError):
        FillableBytes(-1)


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd is Linux-only")
def test_small_dev_shm_is_a_clear_error_without_memfd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where memory comes from /dev/shm (no memfd), its free space bounds a buffer."""
    monkeypatch.delattr(os, "memfd_create")
    real_statvfs = os.statvfs

    class Tiny:
        f_bavail, f_frsize = 16, 4096  # 64 KiB free

    monkeypatch.setattr(os, "statvfs", lambda p: Tiny() if p == "/dev/shm" else real_statvfs(p))
    with pytest.raises(InsufficientSharedMemoryError, match="/dev/shm"):
        ParallelBuffer._allocate(1 << 20)
    ParallelBuffer._allocate(4096).close()
