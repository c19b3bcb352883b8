#!/usr/bin/env python3
"""A cold GET of one large s3:// object: when its first byte arrives and when its last does.

Starts an S3 server on loopback (moto, from the dev extra) holding one object of ``--mib`` MiB,
and our server in front of it (with ``--baseline-bin``, a second server of another build beside
it, asked in turn). Per round, each server's copy is evicted and the object read by one streamed
``requests`` GET: a plain cold GET (one backend stream), and a blob download (the header
``Ais-Blob-Download``: chunks of 8 MiB by 4 concurrent range reads). The table shows the medians
of the seconds to the first and to the last byte. A build that streams a blob download sends its
first chunk while the others are still being fetched; one that does not sends nothing until the
whole object is in.

Usage:
    python3 benchmarks/blob_stream.py                                   # 1 GiB, 3 rounds
    python3 benchmarks/blob_stream.py --mib 64 --rounds 1               # a quick look
    python3 benchmarks/blob_stream.py --baseline-bin /tmp/aistore-server.before
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import boto3
import requests

from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "integration"))
from _s3 import MotoServer  # noqa: E402
from _table import render_table  # noqa: E402

MiB = 1 << 20
KEYS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}
BLOB = {"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "8MiB", "Ais-Blob-Workers": "4"}


def first_and_last(srv: LocalServer, headers: dict[str, str], size: int) -> tuple[float, float]:
    """Evicts the cached copy, then GETs the object: seconds to its first and its last byte."""
    bucket = srv.client().bucket("blob", provider="aws")
    srv.client().job(bucket.objects(obj_names=["big"]).evict()).wait(timeout=600)
    url = f"{srv.endpoint}/v1/objects/blob/big?provider=aws"
    t0 = time.perf_counter()
    with requests.get(url, headers=headers, stream=True, timeout=3600) as r:
        r.raise_for_status()
        pieces = r.iter_content(MiB)
        got = len(next(pieces))
        first = time.perf_counter() - t0
        for piece in pieces:
            got += len(piece)
    if got != size:
        raise RuntimeError(f"read {got} of {size} bytes")
    return first, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="object size (MiB)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--baseline-bin", help="another build's aistore-server, measured beside this one"
    )
    args = ap.parse_args()
    size = args.mib * MiB
    builds = {"this build": None}
    if args.baseline_bin:
        builds["baseline"] = args.baseline_bin
    moto = MotoServer()
    moto.start()
    servers: dict[str, LocalServer] = {}
    try:
        s3 = boto3.client(
            "s3",
            endpoint_url=moto.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket="blob")
        s3.put_object(Bucket="blob", Key="big", Body=os.urandom(MiB) * args.mib)
        env = {"S3_ENDPOINT": moto.endpoint, **KEYS}
        for name, binary in builds.items():
            servers[name] = LocalServer(num_mountpaths=2, binary=binary, env=env).start()
        cases = {"cold GET": {}, "blob download GET": BLOB}
        times: dict[tuple[str, str], list[tuple[float, float]]] = {
            (b, c): [] for b in builds for c in cases
        }
        load_before = os.getloadavg()[0]
        for _ in range(args.rounds):
            for case, headers in cases.items():
                for build, srv in servers.items():
                    times[(build, case)].append(first_and_last(srv, headers, size))
        load_after = os.getloadavg()[0]
    finally:
        for srv in servers.values():
            srv.stop()
        moto.stop()

    lines = [["build", "case", "first byte (s)", "last byte (s)", "first / last"]]
    for (build, case), got in times.items():
        first = statistics.median(t[0] for t in got)
        last = statistics.median(t[1] for t in got)
        lines.append([build, case, f"{first:.2f}", f"{last:.2f}", f"{first / last:.0%}"])
    print(
        f"# a cold GET of one {args.mib} MiB s3:// object (moto on loopback), median of "
        f"{args.rounds} round(s); load average {load_before:.1f} before, {load_after:.1f} after"
    )
    print(render_table(lines, left=[0, 1]))


if __name__ == "__main__":
    main()
