#!/usr/bin/env python3
"""Resilver: how fast objects move between mountpaths after attach and detach, and what the move
costs concurrent GETs.

The server runs on four mountpaths (directories under ``--dir``, one filesystem: the figures are
the copy rate of that filesystem, not of four disks). ``--count`` objects of ``--kib`` KiB are
written, then 8 threads GET random objects for ``--seconds`` with nothing else running (idle),
then while the resilver after an ``attach-mp`` of a fifth directory runs (about 1/5 of the
objects move there), then while the resilver after its ``detach-mp`` runs (all of them move off).
Each resilver row: objects and MB the job moved (its own stats), its duration, MB/s; GET/s
meanwhile and its ratio to idle.

Usage:
    python3 benchmarks/resilver.py              # 20000 x 64 KiB (1.3 GB)
    python3 benchmarks/resilver.py --quick      # tiny sizes
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--kib", type=int, default=64)
    p.add_argument("--seconds", type=float, default=3.0, help="the idle GET case")
    p.add_argument("--dir", default=None, help="where the mountpaths go (default: a temp dir)")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.count, a.kib, a.seconds = 300, 16, 0.5
    return a


def request(endpoint: str, method: str, path: str, body: bytes | None = None) -> bytes:
    req = urllib.request.Request(endpoint + path, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=120) as r:
        return bytes(r.read())


def resilver_snaps(endpoint: str) -> list[dict[str, Any]]:
    body = json.dumps({"kind": "resilver"}).encode()
    doc = json.loads(request(endpoint, "GET", "/v1/cluster?what=qryxstats", body))
    return [s for per_node in doc.values() for s in per_node]


class Getters:
    """THREADS threads GETting random objects until stopped; counts them."""

    def __init__(self, endpoint: str, names: list[str]) -> None:
        self.endpoint, self.names = endpoint, names
        self.count = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(THREADS)]

    def _run(self, seed: int) -> None:
        rng = random.Random(seed)
        with requests.Session() as s:  # keep-alive, as clients read
            while not self._stop.is_set():
                r = s.get(f"{self.endpoint}/v1/objects/bench/{rng.choice(self.names)}", timeout=60)
                r.raise_for_status()
                with self._lock:
                    self.count += 1

    def __enter__(self) -> Getters:
        self.start = time.monotonic()
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()
        self.seconds = time.monotonic() - self.start

    @property
    def rate(self) -> float:
        return self.count / self.seconds


def mountpath_action(endpoint: str, action: str, path: Path, method: str) -> None:
    body = json.dumps({"action": action, "value": str(path)}).encode()
    request(endpoint, method, "/v1/daemon/mountpaths", body)


def timed_resilver(endpoint: str, change: Any) -> tuple[dict[str, Any], float]:
    """Runs `change` (a mountpath action) and waits for the resilver it starts; its snapshot and
    duration (from the job's own start and end times, to the millisecond)."""
    known = {s["id"] for s in resilver_snaps(endpoint)}
    change()
    while True:
        new = [s for s in resilver_snaps(endpoint) if s["id"] not in known]
        if new and not new[0]["end-time"].startswith("0001"):
            snap = new[0]
            break
        time.sleep(0.01)

    def ts(text: str) -> float:  # Go's RFC 3339 with nanoseconds: to microseconds for Python
        whole, _, frac = text.rstrip("Z").partition(".")
        t = datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp()
        return t + float("0." + (frac or "0"))

    return snap, ts(snap["end-time"]) - ts(snap["start-time"])


def main() -> None:
    a = parse_args()
    root = Path(a.dir or tempfile.mkdtemp(prefix="ais-resilver-bench-"))
    mps = [root / f"mp{i}" for i in range(4)]
    fifth = root / "mp4"
    for p in [*mps, fifth]:
        p.mkdir(parents=True, exist_ok=True)
    with LocalServer(mps) as srv:
        ep = srv.endpoint
        request(ep, "POST", "/v1/buckets/bench", json.dumps({"action": "create-bck"}).encode())
        names = [f"o/{i:07d}" for i in range(a.count)]
        data = random.Random(1).randbytes(a.kib * 1024)

        def put(name: str) -> None:
            request(ep, "PUT", f"/v1/objects/bench/{name}", data)

        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(put, names))
        with Getters(ep, names) as idle:
            time.sleep(a.seconds)
        rows = [["case", "objects moved", "MB moved", "seconds", "MB/s", "GET/s", "GET/s ratio"]]
        rows.append(["idle", "", "", "", "", f"{idle.rate:.0f}", "1.00"])
        for case, change in [
            ("attach a 5th", lambda: mountpath_action(ep, "attach-mp", fifth, "PUT")),
            ("detach it", lambda: mountpath_action(ep, "detach-mp", fifth, "DELETE")),
        ]:
            with Getters(ep, names) as busy:
                snap, secs = timed_resilver(ep, change)
            moved = int(snap["stats"]["loc-objs"])
            mb = int(snap["stats"]["loc-bytes"]) / MB
            rows.append(
                [
                    case,
                    str(moved),
                    f"{mb:.1f}",
                    f"{secs:.2f}",
                    f"{mb / secs:.0f}" if secs > 0 else "-",
                    f"{busy.rate:.0f}",
                    f"{busy.rate / idle.rate:.2f}",
                ]
            )
    print(f"resilver: {a.count} objects x {a.kib} KiB on 4 mountpaths under {root}")
    print(render_table(rows, left=(0,)))
    if a.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
