#!/usr/bin/env python3
"""Download benchmark: our server's download job beside a Python thread pool of `requests`.

The files are served over HTTP by a second server on this machine (another ``LocalServer``,
one mountpath, its objects read with ``GET /v1/objects/...``: plain HTTP/1.1, sendfile), so
the source is not what limits either side. The server under test (``LocalServer``, 4
mountpaths under ``$TMPDIR``, ``--download-allow-loopback``) fetches them as one ``multi``
job with ``limits.connections`` = ``--workers``, timed from its request to the end its status
reports (polled every 10 ms). The peer is what a user would otherwise write: ``--workers``
threads, each a ``requests`` session, GET each file and PUT it into a bucket of the same
server, so both sides end with the same objects. The wire column is the loopback ceiling: the
same number of bytes pumped through one TCP connection (benchmarks/_loopback.py).

Cases: ``--small`` files of ``--small-size`` and ``--large`` files of ``--large-size``
(defaults 1,000 x 1 MiB and 20 x 256 MiB). The cases take turns in ``--rounds`` rounds; the
median round is reported. Prints one table: MB/s per side, the job's speed over the pool's,
and the job's fraction of the wire.

Usage:
    python3 benchmarks/download.py                        # 1,000 x 1 MiB and 20 x 256 MiB
    python3 benchmarks/download.py --small 100 --large 2 --large-size 16MiB --rounds 1  # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopback import loopback_seconds  # noqa: E402
from _table import render_table  # noqa: E402

from aistore.server import LocalServer  # noqa: E402

ZERO_TIME = "0001-01-01T00:00:00Z"


def parse_size(text: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, mult in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * mult
    return int(text)


def job_seconds(ep: str, bucket: str, links: dict[str, str], workers: int) -> float:
    body = {
        "type": "multi",
        "bucket": {"name": bucket},
        "objects": links,
        "limits": {"connections": workers},
    }
    t0 = time.monotonic()
    r = requests.post(f"{ep}/v1/download", json=body, timeout=60)
    r.raise_for_status()
    job_id = r.json()["id"]
    while True:
        q = {"id": job_id, "only_active_tasks": True}
        st = requests.get(f"{ep}/v1/download", json=q, timeout=60).json()
        if st["finished_time"] != ZERO_TIME:
            break
        time.sleep(0.01)
    took = time.monotonic() - t0
    assert st["error_cnt"] == 0 and st["finished_cnt"] == len(links), st
    return took


def pool_seconds(ep: str, bucket: str, links: dict[str, str], workers: int) -> float:
    local = threading.local()

    def one(item: tuple[str, str]) -> None:
        s = getattr(local, "s", None)
        if s is None:
            s = local.s = requests.Session()
        r = s.get(item[1], timeout=600)
        r.raise_for_status()
        s.put(f"{ep}/v1/objects/{bucket}/{item[0]}", data=r.content, timeout=600).raise_for_status()

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, links.items()))
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", type=int, default=1000, help="number of small files")
    ap.add_argument("--small-size", default="1MiB")
    ap.add_argument("--large", type=int, default=20, help="number of large files")
    ap.add_argument("--large-size", default="256MiB")
    ap.add_argument("--workers", type=int, default=8, help="connections of each side")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cases = [
        (f"{args.small:,} x {args.small_size}", args.small, parse_size(args.small_size)),
        (f"{args.large:,} x {args.large_size}", args.large, parse_size(args.large_size)),
    ]
    cases = [c for c in cases if c[1] > 0]
    with (
        LocalServer(num_mountpaths=1) as source,
        LocalServer(num_mountpaths=4, download_allow_loopback=True) as srv,
    ):
        src = source.client().bucket("files").create()
        links_of: dict[str, dict[str, str]] = {}
        for n, (label, count, size) in enumerate(cases):
            block = os.urandom(min(size, 1 << 20))
            data = (block * (size // len(block) + 1))[:size]
            links_of[label] = {}
            for i in range(count):
                name = f"c{n}/{i}"
                src.object(name).get_writer().put_content(data)
                links_of[label][f"f{i}"] = f"{source.endpoint}/v1/objects/files/{name}"
        ep = srv.endpoint
        results: dict[str, dict[str, list[float]]] = {c[0]: {} for c in cases}
        for _ in range(args.rounds):
            for label, count, size in cases:
                links = links_of[label]
                timings = results[label]
                for side in ("pool", "job"):
                    bucket = srv.client().bucket(f"bench-{uuid.uuid4().hex[:6]}").create()
                    if side == "pool":
                        took = pool_seconds(ep, bucket.name, links, args.workers)
                    else:
                        took = job_seconds(ep, bucket.name, links, args.workers)
                    timings.setdefault(side, []).append(took)
                    bucket.delete()
                timings.setdefault("wire", []).append(loopback_seconds(min(count * size, 4 << 30)))
                if count * size > 4 << 30:  # the pump measured 4 GiB: scale to the case's bytes
                    timings["wire"][-1] *= count * size / (4 << 30)
        header = ["case", "", "job MB/s", "requests pool MB/s", "wire MB/s", "job/pool", "job/wire"]
        rows = [header]
        for label, count, size in cases:
            mb = count * size / 1e6
            med = {k: statistics.median(v) for k, v in results[label].items()}
            rows.append(
                [
                    label,
                    f"{args.workers} conns",
                    f"{mb / med['job']:.0f}",
                    f"{mb / med['pool']:.0f}",
                    f"{mb / med['wire']:.0f}",
                    f"{med['pool'] / med['job']:.2f}x",
                    f"{med['wire'] / med['job']:.2f}",
                ]
            )
        print(render_table(rows))


if __name__ == "__main__":
    main()
