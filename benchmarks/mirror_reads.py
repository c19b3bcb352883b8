#!/usr/bin/env python3
"""The n-way mirror's cost and gain: PUT and GET throughput of a bucket with mirror copies 1 vs 2.

The server runs on four mountpaths (directories under ``--dir``, by default one filesystem: a
mirrored read cannot gain there what it gains on four disks, it must only not lose). Each bucket
gets ``--count`` objects of ``--kib`` KiB from 8 threads (PUT/s), then 8 threads GET random
objects for ``--seconds`` (GET/s). One table; the ratio column is against copies 1.

Usage:
    python3 benchmarks/mirror_reads.py              # 4000 x 256 KiB per bucket
    python3 benchmarks/mirror_reads.py --quick      # tiny sizes
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from aistore.server import LocalServer

sys.path.append(str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402

MB = 1_000_000
THREADS = 8


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--count", type=int, default=4000)
    p.add_argument("--kib", type=int, default=256)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--dir", default=None, help="where the mountpaths go (default: a temp dir)")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.count, a.kib, a.seconds = 100, 16, 0.5
    return a


def request(endpoint: str, method: str, path: str, body: bytes | None = None) -> bytes:
    req = urllib.request.Request(endpoint + path, data=body, method=method)
    with urllib.request.urlopen(req, timeout=120) as r:
        return bytes(r.read())


def run_gets(endpoint: str, bucket: str, names: list[str], seconds: float) -> float:
    """GET/s of THREADS threads reading random objects for `seconds`."""
    count = 0
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(seed: int) -> None:
        nonlocal count
        rng = random.Random(seed)
        n = 0
        with requests.Session() as s:  # keep-alive, as clients read
            while time.monotonic() < stop:
                r = s.get(f"{endpoint}/v1/objects/{bucket}/{rng.choice(names)}", timeout=60)
                r.raise_for_status()
                n += 1
        with lock:
            count += n

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count / (time.monotonic() - start)


def main() -> None:
    a = parse_args()
    root = Path(a.dir or tempfile.mkdtemp(prefix="ais-mirror-bench-"))
    mps = [root / f"mp{i}" for i in range(4)]
    for p in mps:
        p.mkdir(parents=True, exist_ok=True)
    data = random.Random(1).randbytes(a.kib * 1024)
    names = [f"o/{i:06d}" for i in range(a.count)]
    results = []
    with LocalServer(mps) as srv:
        ep = srv.endpoint
        for copies in (1, 2):
            bucket = f"copies{copies}"
            props = {"mirror": {"enabled": copies > 1, "copies": max(copies, 2)}}
            body = json.dumps({"action": "create-bck", "value": props}).encode()
            request(ep, "POST", f"/v1/buckets/{bucket}", body)
            start = time.monotonic()

            def put(name: str, bucket: str = bucket) -> None:
                request(ep, "PUT", f"/v1/objects/{bucket}/{name}", data)

            with ThreadPoolExecutor(THREADS) as pool:
                list(pool.map(put, names))
            put_rate = a.count / (time.monotonic() - start)
            get_rate = run_gets(ep, bucket, names, a.seconds)
            results.append((copies, put_rate, get_rate))
    base_put, base_get = results[0][1], results[0][2]
    rows = [["copies", "PUT/s", "PUT MB/s", "PUT ratio", "GET/s", "GET MB/s", "GET ratio"]]
    for copies, put_rate, get_rate in results:
        rows.append(
            [
                str(copies),
                f"{put_rate:.0f}",
                f"{put_rate * a.kib * 1024 / MB:.0f}",
                f"{put_rate / base_put:.2f}",
                f"{get_rate:.0f}",
                f"{get_rate * a.kib * 1024 / MB:.0f}",
                f"{get_rate / base_get:.2f}",
            ]
        )
    where = f"4 mountpaths under {root}"
    print(f"mirror: {a.count} objects x {a.kib} KiB per bucket, {THREADS} threads, {where}")
    print(render_table(rows, left=(0,)))
    if a.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
