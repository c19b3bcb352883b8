#!/usr/bin/env python3
"""Eviction: how fast the lru job frees a full cache, and what it costs concurrent GETs.

The server runs on one tmpfs made for the run (``--tmpfs-mib``; needs root to mount), its
s3:// bucket in moto on loopback. The cache is filled with ``--count`` objects of ``--kib`` KiB
by cold GETs (high watermark at 99: nothing evicted), then:

* idle: 8 threads GET a hot set of cached objects (read again just before, so it is never a
  candidate) for ``--seconds``: GET/s with no eviction;
* evicting: the watermarks are lowered so that the lru job evicts the rest of the cache (the
  oldest objects, all but the hot set) while the same 8 threads GET the hot set: the job's
  objects/s and MB/s (from its own stats and duration), and the GETs/s meanwhile.

One table; the ratio column is GET/s against the idle row.

Usage:
    sudo python3 benchmarks/eviction.py            # 10000 x 16 KiB on a 256 MiB tmpfs
    sudo python3 benchmarks/eviction.py --quick    # tiny sizes
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3

from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "integration"))
sys.path.append(str(Path(__file__).resolve().parent))
from _s3 import BOTO3_KEYS, SERVER_ENV, MotoServer  # noqa: E402
from _table import render_table  # noqa: E402

MB = 1_000_000
THREADS = 8


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--kib", type=int, default=16)
    p.add_argument("--hot", type=int, default=64, help="objects the GET threads read")
    p.add_argument("--seconds", type=float, default=3.0, help="the idle GET case")
    p.add_argument("--tmpfs-mib", type=int, default=256)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.count, a.kib, a.hot, a.seconds, a.tmpfs_mib = 200, 64, 16, 1.0, 64
    return a


def http(endpoint: str, method: str, path: str, body: bytes | None = None) -> bytes:
    req = urllib.request.Request(endpoint + path, data=body, method=method)
    with urllib.request.urlopen(req, timeout=60) as r:
        return bytes(r.read())


def set_space(endpoint: str, **kv: Any) -> None:
    q = urllib.parse.urlencode({k.replace("__", "."): str(v) for k, v in kv.items()})
    http(endpoint, "PUT", f"/v1/cluster/setconfig?{q}")


def lru_snaps(endpoint: str) -> list[dict[str, Any]]:
    body = json.dumps({"kind": "lru"}).encode()
    req = urllib.request.Request(
        endpoint + "/v1/cluster?what=qryxstats",
        data=body,
        method="GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return [s for snaps in json.loads(r.read()).values() for s in snaps]


class Getters:
    """THREADS threads GETting the hot set in a loop until stopped; counts GETs."""

    def __init__(self, client: Any, bucket: str, names: list[str]) -> None:
        self.b = client.bucket(bucket, provider="aws")
        self.names = names
        self.count = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            self.b.object(self.names[i % len(self.names)]).get_reader().read_all()
            i += 1
            with self.lock:
                self.count += 1

    def measure(self, during: Any) -> tuple[float, float]:
        """GET/s while `during()` runs (its return value is ignored); (GET/s, seconds)."""
        self.count, self.stop = 0, threading.Event()
        with ThreadPoolExecutor(THREADS) as pool:
            futures = [pool.submit(self.run) for _ in range(THREADS)]
            t = time.perf_counter()
            during()
            secs = time.perf_counter() - t
            self.stop.set()
            for f in futures:
                f.result()
        return self.count / secs, secs


def main() -> None:
    a = parse_args()
    root = Path(tempfile.mkdtemp(prefix="ais-evict-"))
    mp = root / "mp"
    mp.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={a.tmpfs_mib}m", "tmpfs", str(mp)],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        print(f"eviction benchmark not run: cannot mount a tmpfs ({r.stderr.strip()})")
        return
    moto = MotoServer().start()
    try:
        env = {"S3_ENDPOINT": moto.endpoint, **SERVER_ENV}
        args = ("--lru-min-dont-evict", "1000")
        with LocalServer([mp], env=env, args=args) as srv:
            run(a, srv, boto3.client("s3", endpoint_url=moto.endpoint, **BOTO3_KEYS))
    finally:
        moto.stop()
        subprocess.run(["umount", str(mp)], check=False)
        os.rmdir(mp)
        os.rmdir(root)


def run(a: argparse.Namespace, srv: LocalServer, s3: Any) -> None:
    ep, client = srv.endpoint, srv.client()
    bucket = "evict-bench"
    s3.create_bucket(Bucket=bucket)
    data = os.urandom(a.kib * 1024)
    names = [f"o{i:06d}" for i in range(a.count)]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: s3.put_object(Bucket=bucket, Key=n, Body=data), names))
    set_space(ep, space__cleanupwm=97, space__lowwm=98, space__highwm=99, space__out_of_space=100)
    set_space(ep, lru__dont_evict_time="1s")
    b = client.bucket(bucket, provider="aws")
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda n: b.object(n).get_reader().read_all(), names))  # cold GETs
    time.sleep(1.2)
    hot = names[-a.hot :]
    getters = Getters(client, bucket, hot)
    idle_rate, _ = getters.measure(lambda: time.sleep(a.seconds))  # also refreshes the hot set
    time.sleep(1.2)  # past dont_evict_time: everything but the hot set (read last) may go

    def evict() -> None:
        set_space(ep, space__cleanupwm=1, space__lowwm=1, space__highwm=1, space__out_of_space=100)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            snaps = lru_snaps(ep)
            if snaps and all(s["is_idle"] for s in snaps):
                return
            time.sleep(0.01)
        raise RuntimeError("the lru job did not end")

    busy_rate, _ = getters.measure(evict)
    snaps = lru_snaps(ep)
    evicted = sum(int(s["stats"]["loc-objs"]) for s in snaps)
    bytes_ = sum(int(s["stats"]["loc-bytes"]) for s in snaps)
    secs = sum(
        (parse_time(s["end-time"]) - parse_time(s["start-time"])) for s in snaps if s["is_idle"]
    )
    rows = [
        ["case", "objects", "seconds", "objects/s", "MB/s", "GET/s (8 threads)", "vs idle"],
        ["idle (no eviction)", "-", f"{a.seconds:.2f}", "-", "-", f"{idle_rate:.0f}", "1.00"],
        [
            f"lru evicting {a.kib} KiB objects",
            str(evicted),
            f"{secs:.2f}",
            f"{evicted / secs:.0f}" if secs else "-",
            f"{bytes_ / MB / secs:.1f}" if secs else "-",
            f"{busy_rate:.0f}",
            f"{busy_rate / idle_rate:.2f}",
        ],
    ]
    print(render_table(rows, left=(0,)))
    for n in hot:
        assert b.object(n).get_reader().read_all() == data, "a hot object changed"


def parse_time(rfc3339: str) -> float:
    """Seconds since the epoch of an RFC 3339 time with nanoseconds ("2026-01-01T00:00:00.123Z")."""
    from datetime import datetime

    whole, _, frac = rfc3339.rstrip("Z").partition(".")
    t = datetime.fromisoformat(whole + "+00:00").timestamp()
    digits = "".join(c for c in frac if c.isdigit())
    return t + (int(digits) / 10 ** len(digits) if digits else 0.0)


if __name__ == "__main__":
    main()
