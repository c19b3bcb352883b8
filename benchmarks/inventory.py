"""Bucket inventory vs regular listing, side by side against our server.

For buckets of 10K, 100K and 1M small objects: inventory creation time, full-listing time
(p50 of 3) walking the bucket vs reading the inventory, and the speedup.

    python benchmarks/inventory.py [--sizes 10000,100000,1000000] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
from multiprocessing import Pool
from urllib.parse import urlparse

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer

OBJ_SIZE = 64
DIRS = 1000  # names spread like a dataset: 1000 directories


def name_of(i: int) -> str:
    return f"shard-{i % DIRS:04d}/sample-{i:08d}.bin"


def _put_range(args: tuple[str, str, int, int]) -> int:
    """Bulk loader: one process, one keep-alive connection, raw PUTs (no SDK overhead)."""
    endpoint, bucket, start, stop = args
    url = urlparse(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    body = b"x" * OBJ_SIZE
    for i in range(start, stop):
        conn.request("PUT", f"/v1/objects/{bucket}/{name_of(i)}", body=body)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise RuntimeError(f"PUT failed: {resp.status}")
    conn.close()
    return stop - start


def fill(endpoint: str, bucket: str, count: int, procs: int = 4) -> float:
    step = -(-count // (procs * 8))
    ranges = [(endpoint, bucket, s, min(s + step, count)) for s in range(0, count, step)]
    start = time.perf_counter()
    with Pool(procs) as pool:
        assert sum(pool.map(_put_range, ranges)) == count
    return time.perf_counter() - start


def full_listing(bucket: Bucket, inventory: str = "") -> tuple[int, float]:
    start = time.perf_counter()
    n = sum(1 for _ in bucket.list_objects_iter(inventory_name=inventory))
    return n, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with LocalServer(num_mountpaths=4) as srv:
        client: Client = srv.client()
        for count in sizes:
            bucket = client.bucket(f"inv{count}").create()
            fill_s = fill(srv.endpoint, bucket.name, count)
            start = time.perf_counter()
            job = bucket.create_inventory(name="bench")
            assert client.job(job).wait(timeout=3600, verbose=False).success
            create_s = time.perf_counter() - start
            walk, inv = [], []
            for _ in range(args.repeat):
                n, t = full_listing(bucket)
                assert n == count, (n, count)
                walk.append(t)
                n, t = full_listing(bucket, "bench")
                assert n == count, (n, count)
                inv.append(t)
            row = {
                "objects": count,
                "fill_s": fill_s,
                "create_s": create_s,
                "list_walk_s": statistics.median(walk),
                "list_inventory_s": statistics.median(inv),
            }
            row["speedup"] = row["list_walk_s"] / row["list_inventory_s"]
            rows.append(row)
            bucket.delete()
    head = ("objects", "fill (PUT/s)", "create inv", "list: walk", "list: inventory", "speedup")
    print(f"\nBucket inventory vs regular listing (p50 of {args.repeat}; 4 mountpaths)")
    print(f"{head[0]:>10} {head[1]:>14} {head[2]:>11} {head[3]:>11} {head[4]:>16} {head[5]:>8}")
    for r in rows:
        print(
            f"{r['objects']:>10,} {r['objects'] / r['fill_s']:>14,.0f} {r['create_s']:>10.2f}s "
            f"{r['list_walk_s']:>10.2f}s {r['list_inventory_s']:>15.2f}s {r['speedup']:>7.1f}x"
        )
    print("goal: >= 10x faster full listing at 1M objects")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
