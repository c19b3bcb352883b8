"""Parallel range reads against a scriptable server: exact bytes, range plans, the exact-length
checks, per-range retries, error propagation and cancellation, and what is left behind."""

from __future__ import annotations

import gc
import logging
import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from _fakes import FakeServer, Reply, Req, fast_retry_config
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from requests.adapters import HTTPAdapter
from requests.exceptions import ChunkedEncodingError

from aistore import Client
from aistore._internal import shm
from aistore._internal.parallel import PIECE_SIZE, piece_pool, plan_ranges
from aistore.sdk.const import DEFAULT_PARALLEL_CHUNK_SIZE, MIB
from aistore.sdk.errors import (
    ErrObjNotFound,
    InsufficientSharedMemoryError,
    ObjectChangedError,
    UnexpectedHTTPStatusCode,
)
from aistore.sdk.obj.content_iterator import ParallelBuffer, ParallelContentIterProvider
from aistore.sdk.obj.content_iterator import parallel as content_iterator_parallel
from aistore.sdk.obj.object import parse_byte_range

KIB = 1 << 10


@dataclass
class Fault:
    """What the server does to one GET of one range (matched by its first byte)."""

    cut_after: int | None = None  # send this many body bytes, then hang up
    status: int | None = None  # reply with this status (and an AIS error body if >= 400)
    whole_object: bool = False  # ignore the Range header: 200 with everything
    length_delta: int = 0  # announce and send a range this much longer/shorter
    content_range_total: int | None = None  # lie about the object size
    version: str | None = None  # Ais-Version of this reply
    stall: float = 0.0  # send half the body, then wait this long before hanging up
    header_delay: float = 0.0  # wait this long before replying at all
    hold: threading.Event | None = None  # wait for this (at most 10 s) before replying at all


@dataclass
class ObjectServer:
    """Serves one object by HEAD and ranged GET, with scripted faults per (range start, attempt)."""

    data: bytes
    chunk_size: int | None = None
    version: str = "1"
    faults: dict[tuple[int, int], Fault] = field(default_factory=dict)
    always: dict[int, Fault] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)
    ranges: list[tuple[int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0

    def __call__(self, req: Req) -> Reply:
        size = len(self.data)
        if req.method == "HEAD":
            headers = {"Content-Length": str(size), "Ais-Present": "true"}
            if self.chunk_size:
                count = -(-size // self.chunk_size)
                headers["Ais-Chunks-Count"] = str(count)
                headers["Ais-Chunks-Max-Chunk-Size"] = str(self.chunk_size)
            return Reply(200, b"", headers)
        first, last = parse_byte_range(req.headers["Range"])
        assert first is not None and last is not None
        with self.lock:
            attempt = self.attempts.get(first, 0)
            self.attempts[first] = attempt + 1
            self.ranges.append((first, last + 1))
        if self.delay:
            time.sleep(self.delay)
        fault = self.faults.get((first, attempt)) or self.always.get(first) or Fault()
        time.sleep(fault.header_delay)
        if fault.hold is not None:
            fault.hold.wait(10)
        if fault.status is not None:
            body = b'{"message":"ais://b/o does not exist"}' if fault.status >= 400 else b""
            return Reply(fault.status, body)
        if fault.whole_object:
            return Reply(200, self.data, {"Ais-Version": self.version})
        end = min(last + 1 + fault.length_delta, size + max(fault.length_delta, 0))
        body = self.data[first:end] + b"x" * max(0, end - size)
        total = fault.content_range_total if fault.content_range_total is not None else size
        headers = {
            "Content-Range": f"bytes {first}-{last}/{total}",
            "Ais-Version": fault.version or self.version,
        }
        if fault.stall:
            return Reply(206, body, headers, cut_after=len(body) // 2, stall=fault.stall)
        return Reply(206, body, headers, cut_after=fault.cut_after)

    def gets_of(self, start: int) -> int:
        return self.attempts.get(start, 0)


def _data(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def _range_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ais-range-")]


def _memfd_maps() -> list[str]:
    """Mappings of our shared memory in this process, except idle pooled segments."""
    pooled = shm.pool().idle_names
    with open("/proc/self/maps") as f:
        lines = [line for line in f if "memfd:aistore" in line]
    return [m for m in lines if m.split("memfd:")[1].split(" ")[0] not in pooled]


def _dev_shm_ours() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("aistore")}


@pytest.fixture(autouse=True)
def _nothing_left_behind() -> Iterator[None]:
    """Every test: no range thread survives, nothing appears in /dev/shm, no mapping stays."""
    before = set(os.listdir("/dev/shm"))
    yield
    gc.collect()
    deadline = time.monotonic() + 5
    while _range_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _range_threads()
    assert not (set(os.listdir("/dev/shm")) - before) & _dev_shm_ours()
    assert _memfd_maps() == []
    shm.pool().clear()
    with open("/proc/self/maps") as f:
        assert not [line for line in f if "memfd:aistore" in line]


def _obj(client: Client) -> object:
    return client.bucket("b").object("o")


def _reader(client: Client, workers: int, chunk_size: int | None = None) -> object:
    return client.bucket("b").object("o").get_reader(num_workers=workers, chunk_size=chunk_size)


# -- plans -------------------------------------------------------------------------------------


def test_plan_ranges_aligns_to_chunks() -> None:
    assert plan_ranges(0, 10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert plan_ranges(5, 13, 4) == [(5, 8), (8, 12), (12, 13)]
    assert plan_ranges(3, 3, 4) == []
    with pytest.raises(ValueError):
        plan_ranges(0, 1, 0)


def test_head_once_with_props_chunked(server: FakeServer, client: Client) -> None:
    server.route = ObjectServer(_data(10 * KIB), chunk_size=4 * KIB)
    reader = _reader(client, 4)
    heads = [r for r in server.requests if r.method == "HEAD"]
    assert len(heads) == 1 and heads[0].query["props"] == "chunked"
    with reader.read_all() as buf:
        assert buf.tobytes() == server.route.data
    assert len([r for r in server.requests if r.method == "HEAD"]) == 1


def test_chunked_object_reads_one_chunk_per_range(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(_data(1000 * KIB + 7), chunk_size=64 * KIB)
    server.route = obj
    with _reader(client, 8).read_all() as buf:
        assert buf.tobytes() == obj.data
    assert sorted(obj.ranges) == plan_ranges(0, len(obj.data), 64 * KIB)
    obj.ranges.clear()
    assert b"".join(_reader(client, 8)) == obj.data
    assert sorted(obj.ranges) == plan_ranges(0, len(obj.data), 64 * KIB)


def test_explicit_chunk_size_wins(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(_data(100 * KIB), chunk_size=64 * KIB)
    server.route = obj
    with _reader(client, 3, chunk_size=10 * KIB).read_all() as buf:
        assert buf.tobytes() == obj.data
    assert sorted(obj.ranges) == plan_ranges(0, len(obj.data), 10 * KIB)


def test_monolithic_ranges(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(_data(20 * MIB + 3))
    server.route = obj
    reader = _reader(client, 2)
    assert b"".join(reader) == obj.data  # streaming: the official 8 MiB
    assert sorted(obj.ranges) == plan_ranges(0, len(obj.data), DEFAULT_PARALLEL_CHUNK_SIZE)
    obj.ranges.clear()
    with reader.read_all() as buf:  # whole object: few larger ranges (at least 8 MiB)
        assert buf.tobytes() == obj.data
    assert sorted(obj.ranges) == plan_ranges(0, len(obj.data), 8 * MIB)


def test_tiny_object_is_one_get_without_threads(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(b"tiny")
    server.route = obj
    started = []
    real_start = threading.Thread.start
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(threading.Thread, "start", lambda t: (started.append(t), real_start(t))[1])
        with _reader(client, 16).read_all() as buf:
            assert buf.tobytes() == b"tiny"
    assert not [t for t in started if t.name.startswith("ais-range-")]
    assert list(_reader(client, 16)) == [b"tiny"]
    assert obj.ranges == [(0, 4), (0, 4)]


def test_empty_object_is_refused(server: FakeServer, client: Client) -> None:
    server.route = ObjectServer(b"")
    with pytest.raises(ValueError, match="non-empty"):
        _reader(client, 4)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    size=st.integers(1, 300 * KIB),
    workers=st.integers(2, 9),
    chunk=st.one_of(st.none(), st.integers(1, 80 * KIB)),
    server_chunk=st.one_of(st.none(), st.integers(1 * KIB, 64 * KIB)),
    offset=st.integers(0, 300 * KIB),
)
def test_byte_exact(
    server: FakeServer,
    client: Client,
    tmp_path: Path,
    size: int,
    workers: int,
    chunk: int | None,
    server_chunk: int | None,
    offset: int,
) -> None:
    assume(size // (chunk or server_chunk or size) <= 64)  # a test-sized number of ranges
    data = _data(size, seed=size)
    server.route = ObjectServer(data, chunk_size=server_chunk)
    reader = _reader(client, workers, chunk)
    with reader.read_all() as buf:
        assert len(buf) == size and buf.buf.nbytes == size
        assert buf.buf == data
    assert b"".join(reader) == data
    provider = reader._content_provider
    assert isinstance(provider, ParallelContentIterProvider)
    assert b"".join(provider.create_iter(offset=offset)) == data[offset:]
    dest = bytearray(size + 3)
    assert reader.read_into(dest) == size and dest[:size] == data
    path = tmp_path / "out.bin"
    assert reader.download_to(path) == size and path.read_bytes() == data


def test_read_into_numpy_and_too_small(server: FakeServer, client: Client) -> None:
    data = _data(100 * KIB)
    server.route = ObjectServer(data, chunk_size=16 * KIB)
    arr = np.zeros(100 * KIB // 4, dtype=np.uint32)
    assert _reader(client, 4).read_into(arr) == len(data)
    assert arr.tobytes() == data
    with pytest.raises(ValueError, match="too small"):
        _reader(client, 4).read_into(bytearray(10))
    with pytest.raises(ValueError, match="writable"):
        _reader(client, 4).read_into(bytes(len(data)))


def test_sequential_read_into_and_download_to(
    server: FakeServer, client: Client, tmp_path: Path
) -> None:
    data = _data(50 * KIB)
    server.route = lambda req: Reply(200, data)
    reader = client.bucket("b").object("o").get_reader()
    dest = bytearray(len(data))
    assert reader.read_into(dest) == len(data) and dest == data
    with pytest.raises(ValueError, match="too small"):
        reader.read_into(bytearray(10))
    assert reader.download_to(tmp_path / "f") == len(data)
    assert (tmp_path / "f").read_bytes() == data


# -- faults ------------------------------------------------------------------------------------


def test_truncated_range_is_retried_alone(server: FakeServer, client: Client) -> None:
    data = _data(256 * KIB)
    obj = ObjectServer(data, chunk_size=32 * KIB, faults={(64 * KIB, 0): Fault(cut_after=1000)})
    server.route = obj
    with _reader(client, 4).read_all() as buf:
        assert buf.tobytes() == data
    assert obj.gets_of(64 * KIB) == 2
    assert all(obj.gets_of(s) == 1 for s, _ in plan_ranges(0, len(data), 32 * KIB) if s != 64 * KIB)


def test_truncated_range_is_retried_when_streaming(server: FakeServer, client: Client) -> None:
    data = _data(256 * KIB)
    obj = ObjectServer(data, chunk_size=32 * KIB, faults={(96 * KIB, 0): Fault(cut_after=10)})
    server.route = obj
    assert b"".join(_reader(client, 3)) == data
    assert obj.gets_of(96 * KIB) == 2


@pytest.mark.parametrize(
    "fault",
    [
        Fault(cut_after=100),  # body shorter than Content-Length, then EOF
        Fault(length_delta=-1),  # a consistent but short reply
        Fault(length_delta=+5),  # a consistent but long reply
    ],
    ids=["truncated", "short", "long"],
)
@pytest.mark.parametrize("mode", ["read_all", "stream", "file"])
def test_persistent_length_errors_surface(
    server: FakeServer, client: Client, tmp_path: Path, fault: Fault, mode: str
) -> None:
    data = _data(200 * KIB)
    obj = ObjectServer(data, chunk_size=32 * KIB, always={64 * KIB: fault})
    server.route = obj
    reader = _reader(client, 4)
    with pytest.raises(ChunkedEncodingError):
        if mode == "read_all":
            reader.read_all()
        elif mode == "stream":
            for _ in reader:
                pass
        else:
            reader.download_to(tmp_path / "out")
    assert obj.gets_of(64 * KIB) == 3  # fast_retry_config: 3 attempts
    assert not list(tmp_path.iterdir())  # no partial file either


def test_whole_object_reply_to_a_range_is_not_retried(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(
        _data(100 * KIB), chunk_size=32 * KIB, always={32 * KIB: Fault(whole_object=True)}
    )
    server.route = obj
    with pytest.raises(UnexpectedHTTPStatusCode):
        _reader(client, 2).read_all()
    assert obj.gets_of(32 * KIB) == 1


def test_object_size_change_is_detected(server: FakeServer, client: Client) -> None:
    size = 100 * KIB
    fault = Fault(content_range_total=size + 1)
    server.route = ObjectServer(_data(size), chunk_size=32 * KIB, always={32 * KIB: fault})
    with pytest.raises(ObjectChangedError, match="size"):
        _reader(client, 2).read_all()


def test_object_version_change_is_detected(server: FakeServer, client: Client) -> None:
    fault = Fault(version="2")
    obj = ObjectServer(_data(100 * KIB), chunk_size=32 * KIB, always={64 * KIB: fault})
    obj.delay = 0.01  # ranges arrive in order of their requests
    server.route = obj
    with pytest.raises(ObjectChangedError, match="version"):
        list(_reader(client, 2))


def test_http_error_is_not_retried(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(_data(100 * KIB), chunk_size=32 * KIB, always={32 * KIB: Fault(status=404)})
    server.route = obj
    with pytest.raises(ErrObjNotFound):
        _reader(client, 2).read_all()
    assert obj.gets_of(32 * KIB) == 1


def test_server_error_status_is_retried_by_urllib3(server: FakeServer) -> None:
    client = Client(server.url, retry_config=fast_retry_config(http_total=2), timeout=(2, 5))
    data = _data(100 * KIB)
    obj = ObjectServer(data, chunk_size=32 * KIB, faults={(32 * KIB, 0): Fault(status=503)})
    server.route = obj
    with _reader(client, 2).read_all() as buf:
        assert buf.tobytes() == data
    assert obj.gets_of(32 * KIB) == 2


@pytest.mark.parametrize("scheme", ["http", "https"])  # native client, requests
def test_first_error_stops_stalled_workers_at_once(
    request: pytest.FixtureRequest, tls_cert: tuple[str, str], scheme: str
) -> None:
    """One range fails while the others hang mid-body: the error arrives without waiting for
    them (their replies are aborted), and no worker is left running."""
    server: FakeServer = request.getfixturevalue("server" if scheme == "http" else "tls_server")
    client = Client(
        server.url, ca_cert=tls_cert[0], retry_config=fast_retry_config(), timeout=(2, 5)
    )
    data = _data(8 * 64 * KIB)
    stalls = {s: Fault(stall=30) for s, _ in plan_ranges(0, len(data), 64 * KIB)}
    stalls[3 * 64 * KIB] = Fault(status=404)
    server.route = ObjectServer(data, chunk_size=64 * KIB, always=stalls)
    t0 = time.monotonic()
    with pytest.raises(ErrObjNotFound):
        _reader(client, 8).read_all()
    assert time.monotonic() - t0 < 5  # not the 30 s stall
    assert _memfd_maps() == []  # every reader has let go of the buffer


def test_closing_a_stream_wakes_a_stalled_read(server: FakeServer) -> None:
    """A worker blocked mid-body on a silent server (no read timeout) is woken when the consumer
    closes the stream: closing takes no time, the worker ends."""
    client = Client(server.url, retry_config=fast_retry_config(), timeout=0)
    data = _data(8 * 64 * KIB)
    obj = ObjectServer(data, chunk_size=64 * KIB, always={64 * KIB: Fault(stall=30)})
    server.route = obj
    it = iter(_reader(client, 2))
    assert next(it) == data[: 64 * KIB]
    deadline = time.monotonic() + 5
    while obj.gets_of(64 * KIB) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # the half body is read; the worker waits for the rest
    t0 = time.monotonic()
    it.close()  # type: ignore[attr-defined]
    assert time.monotonic() - t0 < 2  # not the 30 s stall, nor the 10 s wait for readers
    deadline = time.monotonic() + 2
    while _range_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _range_threads()


def test_workers_waiting_for_headers_pin_no_memory(server: FakeServer, client: Client) -> None:
    """A worker still waiting for a reply when the run fails holds no view of the buffer: the
    error comes at once and the memory is released (or pooled) without waiting for it."""
    data = _data(4 * 64 * KIB)
    slow = {0: Fault(header_delay=3), 64 * KIB: Fault(header_delay=3)}
    slow[128 * KIB] = Fault(status=404)
    server.route = ObjectServer(data, chunk_size=64 * KIB, always=slow)
    t0 = time.monotonic()
    with pytest.raises(ErrObjNotFound):
        _reader(client, 4).read_all()
    assert time.monotonic() - t0 < 1.5
    assert _memfd_maps() == []


@pytest.mark.parametrize("mode", ["read_all", "stream"])
def test_interrupt_while_workers_start(
    server: FakeServer, client: Client, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Ctrl-C while the worker threads are being started: the ones already running stop too."""
    data = _data(64 * 16 * KIB)
    server.route = ObjectServer(data, chunk_size=16 * KIB)
    reader = _reader(client, 4)
    started = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        if thread.name.startswith("ais-range-"):
            if len(started) == 2:
                raise KeyboardInterrupt
            started.append(thread)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    with pytest.raises(KeyboardInterrupt):
        if mode == "read_all":
            reader.read_all()
        else:
            next(iter(reader))
    deadline = time.monotonic() + 5
    while any(t.is_alive() for t in started) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.is_alive() for t in started)
    assert _memfd_maps() == []


def test_closing_a_stream_stops_workers(server: FakeServer, client: Client) -> None:
    data = _data(40 * 32 * KIB)
    obj = ObjectServer(data, chunk_size=32 * KIB)
    server.route = obj
    it = iter(_reader(client, 4))
    assert next(it) == data[: 32 * KIB]
    it.close()  # type: ignore[attr-defined]
    assert _memfd_maps() == []
    assert len(obj.ranges) <= 1 + 4 + 1  # workers read at most num_workers ranges ahead


def test_streaming_memory_is_bounded(server: FakeServer, client: Client) -> None:
    """A slow consumer: workers never run more than `num_workers` ranges ahead of it."""
    data = _data(30 * 16 * KIB)
    obj = ObjectServer(data, chunk_size=16 * KIB)
    server.route = obj
    ahead = []
    for i, chunk in enumerate(_reader(client, 3)):
        time.sleep(0.005)
        ahead.append(len(obj.ranges) - (i + 1))
        assert len(chunk) == 16 * KIB
    assert max(ahead) <= 3


@pytest.fixture
def small_halves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams split chunks of 32 KiB and more into halves (normally 32 MiB and more)."""
    monkeypatch.setattr(content_iterator_parallel, "_MIN_STREAM_HALF", 16 * KIB)


@pytest.mark.usefixtures("small_halves")
def test_large_chunks_stream_as_half_ranges_within_the_same_memory(
    server: FakeServer, client: Client
) -> None:
    """A slow consumer: every range is half a chunk, the bytes are exact, and the workers never
    hold more than `num_workers` chunks ahead of it (plus the half being handed out)."""
    chunk = 64 * KIB
    data = _data(20 * chunk)
    obj = ObjectServer(data, chunk_size=chunk)
    server.route = obj
    got = bytearray()
    for piece in _reader(client, 3):
        time.sleep(0.005)
        got += piece
        with obj.lock:
            requested = sum(end - start for start, end in obj.ranges)
        assert requested - len(got) <= 3 * chunk
    assert got == data
    assert {end - start for start, end in obj.ranges} == {chunk // 2}


@pytest.mark.usefixtures("small_halves")
def test_a_slow_range_does_not_hold_the_others_back(server: FakeServer, client: Client) -> None:
    """While the first half range waits for its reply, the other worker reads on up to the
    memory bound (2 workers: 4 halves, two chunks) and no further."""
    half = 32 * KIB
    data = _data(16 * half)
    release = threading.Event()  # the first range's reply waits for it: slow until we look
    obj = ObjectServer(data, chunk_size=2 * half, always={0: Fault(hold=release)})
    server.route = obj
    it = iter(_reader(client, 2))
    first = threading.Thread(target=next, args=(it,))
    first.start()
    try:
        deadline = time.monotonic() + 4  # under the client's 5 s read timeout
        while len(obj.ranges) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # would a fifth range be asked for?
        with obj.lock:
            starts = sorted(start for start, _ in obj.ranges)
    finally:
        release.set()
        first.join()
    rest = b"".join(it)  # the stream ends normally either way
    assert starts == [0, half, 2 * half, 3 * half]
    assert len(rest) == len(data) - half


def test_streams_refill_only_pieces_nobody_holds(server: FakeServer, client: Client) -> None:
    """Pieces a stream yielded are received into again, by later ranges and streams, once the
    caller has dropped them; the ones the caller keeps are never written again."""
    pool = piece_pool()
    pool.clear()
    allocated = pool.allocated
    first = _data(6 * PIECE_SIZE, seed=1)
    server.route = ObjectServer(first, chunk_size=2 * PIECE_SIZE)
    chunks = list(_reader(client, 2))
    assert b"".join(chunks) == first
    assert pool.allocated - allocated == 6 and pool.idle_bytes == 0
    kept = {0: chunks[0], 3: chunks[3], 5: chunks[5]}
    del chunks
    assert pool.idle_bytes == 3 * PIECE_SIZE
    second = _data(6 * PIECE_SIZE, seed=2)
    server.route = ObjectServer(second, chunk_size=2 * PIECE_SIZE)
    reused = pool.reused
    pos = 0
    for chunk in _reader(client, 2):
        assert chunk == second[pos : pos + len(chunk)]
        pos += len(chunk)
    assert pos == len(second)
    assert pool.reused - reused >= 3  # at least the dropped pieces of the first stream
    for i, piece in kept.items():
        assert piece == first[i * PIECE_SIZE : (i + 1) * PIECE_SIZE]


def test_a_streamed_object_is_exact_when_the_caller_keeps_every_piece(
    server: FakeServer, client: Client
) -> None:
    """Kept pieces fill the pool with held entries: every later piece is a fresh one."""
    piece_pool().clear()
    for seed in (1, 2):
        data = _data(5 * PIECE_SIZE + 7, seed=seed)
        server.route = ObjectServer(data, chunk_size=PIECE_SIZE)
        chunks = list(_reader(client, 3))
        assert b"".join(chunks) == data
        assert len({id(c) for c in chunks}) == len(chunks)


def test_insufficient_memory_fails_before_any_get(
    server: FakeServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    obj = ObjectServer(_data(4 * MIB), chunk_size=MIB)
    server.route = obj
    reader = _reader(client, 4)
    shm.pool().clear()
    monkeypatch.setattr(shm, "available_bytes", lambda: MIB)
    with pytest.raises(InsufficientSharedMemoryError, match="need 4,194,304 bytes"):
        reader.read_all()
    assert obj.ranges == []


def test_no_pool_full_warnings_with_many_workers(
    server: FakeServer, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    data = _data(64 * 16 * KIB)
    server.route = ObjectServer(data, chunk_size=16 * KIB)
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        for _ in range(3):
            with _reader(client, 16).read_all() as buf:
                assert buf.tobytes() == data
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]


# -- which client sends the ranges ------------------------------------------------------------


def _requests_gets(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[str]:
    """The Range header ("" for none) of each request sent through `requests` from now on;
    with `fail`, such a request raises instead."""
    ranges: list[str] = []
    real = HTTPAdapter.send

    def send(self: HTTPAdapter, req: object, *args: object, **kwargs: object) -> object:
        ranges.append(req.headers.get("Range", ""))  # type: ignore[attr-defined]
        if fail:
            raise AssertionError("a request went through requests")
        return real(self, req, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HTTPAdapter, "send", send)
    return ranges


@pytest.mark.parametrize("mode", ["read_all", "stream", "file"])
def test_plain_http_ranges_go_through_the_native_client(
    server: FakeServer, client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    data = _data(10 * 32 * KIB + 5)
    obj = ObjectServer(data, chunk_size=32 * KIB)
    server.route = obj
    sent = _requests_gets(monkeypatch, fail=True)
    reader = _reader(client, 4)
    if mode == "read_all":
        with reader.read_all() as buf:
            assert buf.tobytes() == data
    elif mode == "stream":
        assert b"".join(reader) == data
    else:
        assert reader.download_to(tmp_path / "f") == len(data)
        assert (tmp_path / "f").read_bytes() == data
    assert sent == [] and len(obj.ranges) == 11


def test_https_ranges_go_through_requests(
    tls_server: FakeServer, tls_cert: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data(10 * 32 * KIB + 5)
    tls_server.route = ObjectServer(data, chunk_size=32 * KIB)
    client = Client(tls_server.url, ca_cert=tls_cert[0], retry_config=fast_retry_config())
    sent = _requests_gets(monkeypatch)
    with _reader(client, 4).read_all() as buf:
        assert buf.tobytes() == data
    assert b"".join(_reader(client, 3)) == data
    ranges = [f"bytes={s}-{e - 1}" for s, e in plan_ranges(0, len(data), 32 * KIB)]
    assert sorted(r for r in sent if r) == sorted(ranges * 2)


# -- ParallelBuffer lifetime -------------------------------------------------------------------


def test_buffer_released_on_close_and_gc(server: FakeServer, client: Client) -> None:
    data = _data(64 * KIB)
    server.route = ObjectServer(data, chunk_size=16 * KIB)
    buf = _reader(client, 2).read_all()
    assert isinstance(buf, ParallelBuffer) and _memfd_maps()
    buf.close()
    buf.close()
    assert buf.closed and _memfd_maps() == []
    with pytest.raises(ValueError):
        buf.buf[0]  # noqa: B018
    buf = _reader(client, 2).read_all()
    del buf
    gc.collect()
    assert _memfd_maps() == []


def test_exception_mid_download_releases_memory(server: FakeServer, client: Client) -> None:
    obj = ObjectServer(_data(256 * KIB), chunk_size=32 * KIB, always={160 * KIB: Fault(status=404)})
    server.route = obj
    for _ in range(3):
        with pytest.raises(ErrObjNotFound):
            _reader(client, 4).read_all()
    assert _memfd_maps() == []


def test_views_outlive_close(server: FakeServer, client: Client) -> None:
    data = _data(64 * KIB)
    server.route = ObjectServer(data, chunk_size=16 * KIB)
    buf = _reader(client, 2).read_all()
    arr = np.frombuffer(buf.buf, dtype=np.uint8)
    part = buf.buf[100:200]
    buf.close()  # no BufferError: the mapping stays while views exist
    # Another download must not reuse memory that is still visible.
    with _reader(client, 2).read_all() as other:
        other.buf[:] = b"\0" * len(other)
    assert arr.tobytes() == data and bytes(part) == data[100:200]
    del arr, part
    gc.collect()
    assert _memfd_maps() == []


def test_buffer_memory_is_reused_after_close(server: FakeServer, client: Client) -> None:
    data = _data(3 * MIB)
    server.route = ObjectServer(data, chunk_size=MIB)
    shm.pool().clear()
    with _reader(client, 3).read_all() as first:
        name = first.name
    with _reader(client, 3).read_all() as second:
        assert second.name == name and second.tobytes() == data
    shm.pool().clear()
