"""Parallel download against the real server: exact bytes for chunked and monolithic objects,
chunk-aligned ranges, and what is left behind when the server dies or the reader is
interrupted (listing /dev/shm, our mappings and descriptors before and after)."""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.adapters import HTTPAdapter
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_fixed
from urllib3.util.retry import Retry

from aistore._internal import shm
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.obj.content_iterator import ParallelBuffer
from aistore.sdk.obj.object_client import ObjectClient
from aistore.sdk.retry_config import NETWORK_RETRY_EXCEPTIONS, RetryConfig
from aistore.server import LocalServer

KIB, MIB = 1 << 10, 1 << 20
CHUNK = 64 * KIB


def _chunk_bucket(bucket: Bucket, objsize_limit: str = "1KiB", chunk: str = "64KiB") -> Bucket:
    value = {"chunks": {"objsize_limit": objsize_limit, "chunk_size": chunk}}
    bucket.make_request("PATCH", "set-bprops", value=value)
    return bucket


def _fast_retry() -> RetryConfig:
    return RetryConfig(
        http_retry=Retry(total=0, connect=0, read=0),
        network_retry=Retrying(
            stop=stop_after_attempt(2),
            wait=wait_fixed(0.05),
            retry=retry_if_exception_type(NETWORK_RETRY_EXCEPTIONS),
            reraise=True,
        ),
    )


def _range_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ais-range-")]


def _our_mappings() -> list[str]:
    """Our shared memory mapped in this process, idle pooled segments aside."""
    pooled = shm.pool().idle_names
    with open("/proc/self/maps") as f:
        lines = [line for line in f if "memfd:aistore" in line]
    return [m for m in lines if m.split("memfd:")[1].split(" ")[0] not in pooled]


@pytest.fixture
def dev_shm() -> Iterator[set[str]]:
    """/dev/shm before the test; afterwards nothing new of ours may be there, no range thread
    may run and no mapping of ours may remain once the pool is emptied."""
    before = set(os.listdir("/dev/shm"))
    yield before
    gc.collect()
    deadline = time.monotonic() + 10
    while _range_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _range_threads()
    new = set(os.listdir("/dev/shm")) - before
    assert not [n for n in new if n.startswith("aistore")], new
    assert _our_mappings() == []
    shm.pool().clear()
    with open("/proc/self/maps") as f:
        assert not [line for line in f if "memfd:aistore" in line]


@pytest.fixture
def chunked_bucket(client: Client) -> Iterator[Bucket]:
    """A bucket storing every object above 1 KiB as 64 KiB chunks."""
    bck = _chunk_bucket(client.bucket(f"test-c-{uuid.uuid4().hex[:10]}").create())
    yield bck
    bck.delete(missing_ok=True)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    size=st.integers(1, 3 * MIB),
    workers=st.integers(2, 16),
    chunked=st.booleans(),
    chunk_size=st.one_of(st.none(), st.integers(16 * KIB, 2 * MIB)),
    seed=st.integers(0, 2**32),
)
def test_byte_exact(
    bucket: Bucket,
    chunked_bucket: Bucket,
    dev_shm: set[str],
    tmp_path: Path,
    size: int,
    workers: int,
    chunked: bool,
    chunk_size: int | None,
    seed: int,
) -> None:
    data = random.Random(seed).randbytes(size)
    obj = (chunked_bucket if chunked else bucket).object(uuid.uuid4().hex[:8])
    obj.get_writer().put_content(data)
    reader = obj.get_reader(num_workers=workers, chunk_size=chunk_size)
    with reader.read_all() as buf:
        assert isinstance(buf, ParallelBuffer)
        assert buf.buf == data
    assert b"".join(reader) == data
    out = tmp_path / obj.name
    assert reader.download_to(out) == size and out.read_bytes() == data
    obj.delete()


def test_chunked_object_ranges_are_chunks(
    bucket: Bucket, dev_shm: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _chunk_bucket(bucket)
    data = os.urandom(10 * CHUNK + 123)
    obj = bucket.object("chunked")
    obj.get_writer().put_content(data)
    chunks = obj.head("chunked").chunks
    assert chunks is not None and chunks.max_chunk_size == CHUNK and chunks.chunk_count == 11
    seen: list[tuple[int, int]] = []
    real = ObjectClient.read_range

    def spy(self: ObjectClient, start: int, end: int, *args: object, **kw: object) -> object:
        seen.append((start, end))
        return real(self, start, end, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ObjectClient, "read_range", spy)
    with obj.get_reader(num_workers=4).read_all() as buf:
        assert buf.tobytes() == data
    assert sorted(seen) == [(s, min(s + CHUNK, len(data))) for s in range(0, len(data), CHUNK)]
    seen.clear()
    assert b"".join(obj.get_reader(num_workers=3)) == data
    assert sorted(seen) == [(s, min(s + CHUNK, len(data))) for s in range(0, len(data), CHUNK)]


def test_monolithic_object(bucket: Bucket, dev_shm: set[str]) -> None:
    data = os.urandom(20 * MIB + 5)
    obj = bucket.object("mono")
    obj.get_writer().put_content(data)
    assert obj.head("chunked").chunks is None
    with obj.get_reader(num_workers=4).read_all() as buf:
        assert buf.tobytes() == data
    assert b"".join(obj.get_reader(num_workers=4)) == data


@pytest.mark.parametrize("chunked", [False, True])
def test_ranges_skip_requests(
    bucket: Bucket, dev_shm: set[str], monkeypatch: pytest.MonkeyPatch, chunked: bool
) -> None:
    """Over plain HTTP the HEAD and every range GET go through the native client: sending
    anything through `requests` fails the read."""
    if chunked:
        _chunk_bucket(bucket, "1MiB", "1MiB")
    data = os.urandom(20 * MIB + 5)
    obj = bucket.object("native")
    obj.get_writer().put_content(data)

    def send(*args: object, **kwargs: object) -> None:
        raise AssertionError("a request went through requests")

    monkeypatch.setattr(HTTPAdapter, "send", send)
    with obj.get_reader(num_workers=4).read_all() as buf:
        assert buf.tobytes() == data
    assert b"".join(obj.get_reader(num_workers=4)) == data


def test_as_file_and_writer_over_parallel_reader(bucket: Bucket, dev_shm: set[str]) -> None:
    _chunk_bucket(bucket)
    data = os.urandom(5 * CHUNK + 9)
    obj = bucket.object("f")
    obj.get_writer().put_content(data)
    with obj.get_reader(num_workers=4).as_file() as f:
        assert f.read() == data

    class Sink:
        def __init__(self) -> None:
            self.parts: list[bytes] = []

        def writelines(self, chunks: Iterator[bytes]) -> None:
            self.parts.extend(chunks)

    sink = Sink()
    obj.get_reader(num_workers=2, writer=sink)  # type: ignore[arg-type]
    assert b"".join(sink.parts) == data


# -- the server dies ---------------------------------------------------------------------------


@pytest.fixture
def doomed_server(tmp_path: Path) -> Iterator[LocalServer]:
    srv = LocalServer(mountpaths=[tmp_path / f"mp{i}" for i in range(2)]).start()
    yield srv
    if srv.running:
        srv.kill()


def _big_object(srv: LocalServer) -> tuple[Client, bytes]:
    client = srv.client(retry_config=_fast_retry(), timeout=(1, 5))
    bucket = _chunk_bucket(client.bucket("doom").create(), "1MiB", "1MiB")
    data = os.urandom(48 * MIB)
    bucket.object("big").get_writer().put_content(data)
    return client, data


@pytest.mark.parametrize("mode", ["read_all", "stream"])
def test_server_dying_mid_transfer(
    doomed_server: LocalServer, dev_shm: set[str], mode: str
) -> None:
    """Requests are in flight (the server is paused) when it is killed: the reader raises a
    transport error within the retry budget, stops its workers, and leaves nothing behind."""
    client, data = _big_object(doomed_server)
    pid = doomed_server.pid
    assert pid is not None
    reader = client.bucket("doom").object("big").get_reader(num_workers=8)
    errors: list[BaseException] = []
    received = [0]

    def consume() -> None:
        try:
            if mode == "read_all":
                reader.read_all().close()
            else:
                for chunk in reader:
                    received[0] += len(chunk)
        except BaseException as err:  # noqa: B036 - the test inspects whatever arrives
            errors.append(err)

    os.kill(pid, signal.SIGSTOP)
    thread = threading.Thread(target=consume)
    thread.start()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    thread.join(30)
    assert not thread.is_alive()
    assert len(errors) == 1
    assert isinstance(errors[0], requests.exceptions.RequestException), repr(errors[0])
    assert received[0] < len(data)


def test_server_killed_between_chunks_of_a_stream(
    doomed_server: LocalServer, dev_shm: set[str]
) -> None:
    client, data = _big_object(doomed_server)
    it = iter(client.bucket("doom").object("big").get_reader(num_workers=4, chunk_size=MIB))
    assert next(it) == data[:MIB]
    doomed_server.kill()
    with pytest.raises(requests.exceptions.RequestException):
        for _ in it:
            pass


# -- KeyboardInterrupt -------------------------------------------------------------------------

_INTERRUPTED_CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    from aistore import Client
    from aistore._internal import shm
    from aistore.sdk.obj.object_client import ObjectClient

    client = Client(sys.argv[1])
    obj = client.bucket(sys.argv[2]).object(sys.argv[3])
    mode = sys.argv[4]
    real = ObjectClient.read_range
    done = []

    def read_range(self, start, end, read, retrying=None):
        if len(done) >= 2:
            # After the Ctrl-C the ranges go slower, so that "the interrupt stopped the rest"
            # does not depend on how soon the main thread is scheduled (the 62 others of a
            # loopback read could otherwise all land first on a busy machine).
            time.sleep(0.05)
        out = real(self, start, end, read, retrying)
        done.append(start)
        if len(done) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while other ranges are in flight
        return out

    ObjectClient.read_range = read_range
    reader = obj.get_reader(num_workers=4)
    interrupted = False
    try:
        if mode == "read_all":
            reader.read_all()
        else:
            for _ in reader:
                time.sleep(0.01)
    except KeyboardInterrupt:
        interrupted = True
    # Readers of a body stop at once; one still waiting for response headers holds no memory
    # and ends when they come.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(
        t.name.startswith("ais-range-") for t in threading.enumerate()
    ):
        time.sleep(0.05)
    pooled = shm.pool().idle_names
    def ours(lines):
        return [x for x in lines if "memfd:aistore" in x
                and x.split("memfd:")[1].split(" ")[0] not in pooled]
    live = ours(open("/proc/self/maps"))
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    fds = ours(fds)
    print(json.dumps({
        "interrupted": interrupted,
        "ranges_done": len(done),
        "threads": [t.name for t in threading.enumerate() if t.name.startswith("ais-range-")],
        "live_mappings": live,
        "live_fds": fds,
    }))
    """
)


@pytest.mark.parametrize("mode", ["read_all", "stream"])
def test_keyboard_interrupt_mid_download(
    ais_server: LocalServer, bucket: Bucket, dev_shm: set[str], mode: str
) -> None:
    _chunk_bucket(bucket, "1MiB", "1MiB")
    bucket.object("big").get_writer().put_content(os.urandom(64 * MIB))
    out = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_CHILD, ais_server.endpoint, bucket.name, "big", mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["interrupted"] and report["ranges_done"] < 64
    # Nothing is mapped or open but the memory kept for reuse.
    assert report["threads"] == [] and report["live_mappings"] == [] and report["live_fds"] == []


def test_killed_reader_process_leaves_nothing(
    ais_server: LocalServer, bucket: Bucket, dev_shm: set[str]
) -> None:
    """SIGKILL in the middle of read_all: nothing can be left, since nothing has a name."""
    _chunk_bucket(bucket, "1MiB", "1MiB")
    bucket.object("big").get_writer().put_content(os.urandom(64 * MIB))
    code = (
        "import sys; from aistore import Client\n"
        "r = Client(sys.argv[1]).bucket(sys.argv[2]).object('big').get_reader(num_workers=4)\n"
        "print('ready', flush=True)\n"
        "while True: r.read_all().close()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, ais_server.endpoint, bucket.name],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    proc.kill()
    proc.wait()
    assert not [n for n in set(os.listdir("/dev/shm")) - dev_shm if n.startswith("aistore")]
