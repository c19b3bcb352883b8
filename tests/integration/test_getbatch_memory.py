"""A 100k-item GetBatch runs in bounded memory on both sides.

The server gets a process of its own, so its resident set (VmRSS, and the peak VmHWM after
resetting it through /proc/<pid>/clear_refs) measures this batch alone; the client's Python
allocations are traced while it iterates. The archive is ~150 MB: memory that grew with the
batch would show.
"""

from __future__ import annotations

import http.client
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aistore.server import LocalServer

ITEMS = 100_000
SIZE = 1024
SERVER_GROWTH_LIMIT = 64 << 20  # bytes; the archive is ~150 MB
CLIENT_PEAK_LIMIT = 24 << 20

# Under ASan the server's resident set measures shadow memory and the free quarantine, not us.
pytestmark = pytest.mark.no_sanitizer


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class RssSampler:
    """The highest VmRSS seen while running (a fallback where VmHWM cannot be reset)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _status(self.pid, "VmRSS"))
            time.sleep(0.005)

    def __enter__(self) -> RssSampler:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    # tmpfs when there is one: 100k small PUTs are metadata-bound on a real disk, and tmpfs pages
    # are not in the server's resident set (it reads files, it does not map them).
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with (
        tempfile.TemporaryDirectory(prefix="gb-mem-", dir=base) as root,
        LocalServer(mountpaths=[Path(root) / "mp0", Path(root) / "mp1"]) as srv,
    ):
        yield srv


def _put_many(endpoint: str, bucket: str, names: list[str], data: bytes) -> None:
    u = urlsplit(endpoint)

    def worker(chunk: list[str]) -> None:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        try:
            for name in chunk:
                conn.request("PUT", f"/v1/objects/{bucket}/{name}", body=data)
                resp = conn.getresponse()
                resp.read()
                assert resp.status == 200, resp.status
        finally:
            conn.close()

    chunks = [names[i::4] for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(worker, chunks))


def test_100k_items_in_bounded_memory(server: LocalServer) -> None:
    client = server.client()
    bck = client.bucket("mem").create()
    names = [f"d{i % 100}/o{i:06d}" for i in range(ITEMS)]
    payload = bytes(range(256)) * (SIZE // 256)
    _put_many(server.endpoint, bck.name, names, payload)
    pid = server.pid
    assert pid

    batch = client.batch(names, bucket=bck)
    # Warm up: threads, allocator arenas and the first-use costs are not what we measure.
    assert sum(1 for _ in client.batch(names[:1000], bucket=bck).get()) == 1000
    rss_before = _status(pid, "VmRSS")
    can_reset = _reset_peak(pid)

    tracemalloc.start()
    try:
        gen = batch.get()
        tracemalloc.reset_peak()  # the request list is the caller's; measure the reading
        count = total = 0
        with RssSampler(pid) as sampler:
            for out, data in gen:
                if data != payload or out.obj_name != names[count]:
                    raise AssertionError(f"item {count}: {out.obj_name} has wrong bytes")
                count += 1
                total += len(data)
        _, client_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert count == ITEMS and total == ITEMS * SIZE
    server_peak = _status(pid, "VmHWM") if can_reset else sampler.peak
    server_peak = max(server_peak, sampler.peak)
    growth = server_peak - rss_before
    print(
        f"\nserver RSS before {rss_before >> 20} MiB, peak {server_peak >> 20} MiB "
        f"(+{growth >> 20} MiB) for a {total * 1.5 / 2**20:.0f} MiB archive; "
        f"client peak Python allocations {client_peak >> 20} MiB"
    )
    assert growth < SERVER_GROWTH_LIMIT, f"server grew by {growth >> 20} MiB"
    assert client_peak < CLIENT_PEAK_LIMIT, f"client peaked at {client_peak >> 20} MiB"
    # Nothing kept afterwards either.
    time.sleep(0.5)
    assert _status(pid, "VmRSS") - rss_before < SERVER_GROWTH_LIMIT
