#!/usr/bin/env python3
"""Remote s3:// buckets: our cache tier against reading S3 directly, side by side in one run.

By default starts an S3 server on loopback (moto in server mode, from the dev extra); with
``--endpoint URL --bucket NAME`` (and AWS credentials in the environment) it uses any S3
endpoint and bucket instead, writing its test objects under ``--prefix``. Cases:

* GET of small objects (``--small-count`` x ``--small-kib``), objects/s with 8 threads: cold (each
  object fetched by the server, evicted before each round), warm (local) and boto3 reading S3
  directly;
* one large object (``--large-mib``), MB/s: a single-stream cold GET, a blob download (cold,
  concurrent range reads into chunks), a warm GET and boto3's ``get_object`` (one stream);
* prefetch of ``--prefetch-count`` objects (one job, 8 workers) vs a boto3 loop downloading
  the same objects one by one, objects/s;
* a DataLoader epoch over ``--epoch-count`` objects (4 workers, batch 32, ``AISMapDataset``):
  epoch 1 cold and epoch 2 warm through our dataset, vs the same epoch read straight from S3
  by ``s3torchconnector``'s ``S3MapDataset`` (AWS's PyTorch connector, when installed) and by a
  Dataset on boto3.

Every case runs in rounds, the clients taking turns; the table shows each round's median.
Ratios are against the direct S3 read of the same case (> 1: faster than S3 direct).

Usage:
    python3 benchmarks/remote.py            # defaults (~3 min on loopback moto)
    python3 benchmarks/remote.py --quick    # tiny sizes (~30 s)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3

from aistore.sdk.blob_download_config import BlobDownloadConfig
from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "integration"))
from _s3 import MotoServer  # noqa: E402

MB = 1_000_000


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--endpoint", help="S3 endpoint URL (default: start moto on loopback)")
    p.add_argument("--bucket", help="existing S3 bucket to use with --endpoint")
    p.add_argument("--prefix", default=f"aistore-bench-{uuid.uuid4().hex[:8]}/")
    p.add_argument("--small-count", type=int, default=256)
    p.add_argument("--small-kib", type=int, default=1024)
    p.add_argument("--large-mib", type=int, default=256)
    p.add_argument("--prefetch-count", type=int, default=1000)
    p.add_argument("--epoch-count", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    p.add_argument("--json", help="also write every figure to this file")
    a = p.parse_args()
    if a.quick:
        a.small_count, a.small_kib, a.large_mib = 16, 64, 16
        a.prefetch_count, a.epoch_count, a.rounds = 64, 256, 1
    if bool(a.endpoint) != bool(a.bucket):
        p.error("--endpoint and --bucket go together")
    return a


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Bench:
    def __init__(self, args: argparse.Namespace, s3: Any, bucket: str, srv: LocalServer) -> None:
        self.a = args
        self.s3 = s3
        self.bucket = bucket
        self.client = srv.client()
        self.remote = self.client.bucket(bucket, provider="aws")
        self.rows: list[dict[str, Any]] = []

    def direct(self, key: str) -> bytes:
        """`key` read straight from S3."""
        return bytes(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def key(self, group: str, i: int) -> str:
        return f"{self.a.prefix}{group}/{i:06d}"

    def upload(self, group: str, count: int, size: int) -> list[str]:
        keys = [self.key(group, i) for i in range(count)]
        body = os.urandom(size)
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda k: self.s3.put_object(Bucket=self.bucket, Key=k, Body=body), keys))
        return keys

    def evict(self, keys: list[str]) -> None:
        job = self.remote.objects(obj_names=keys).evict()
        self.client.job(job).wait(timeout=600)

    def record(self, case: str, unit: str, figures: dict[str, list[float]], baseline: str) -> None:
        med = {name: statistics.median(v) for name, v in figures.items()}
        for name, value in med.items():
            self.rows.append(
                {
                    "case": case,
                    "client": name,
                    "unit": unit,
                    "value": value,
                    "vs_s3": value / med[baseline],
                }
            )

    def small_gets(self) -> None:
        keys = self.upload("small", self.a.small_count, self.a.small_kib * 1024)
        ours = lambda k: self.remote.object(k).get_reader().read_all()  # noqa: E731
        direct = lambda k: self.s3.get_object(Bucket=self.bucket, Key=k)["Body"].read()  # noqa: E731

        def rate(fn: Callable[[str], Any]) -> float:
            with ThreadPoolExecutor(8) as pool:
                return len(keys) / timed(lambda: list(pool.map(fn, keys)))

        figs: dict[str, list[float]] = {
            "aistore cold": [],
            "aistore warm": [],
            "boto3 (S3 direct)": [],
        }
        for _ in range(self.a.rounds):
            self.evict(keys)
            figs["aistore cold"].append(rate(ours))
            figs["aistore warm"].append(rate(ours))
            figs["boto3 (S3 direct)"].append(rate(direct))
        self.record(
            f"GET {self.a.small_count} x {self.a.small_kib} KiB, 8 threads",
            "obj/s",
            figs,
            "boto3 (S3 direct)",
        )

    def large_get(self) -> None:
        size = self.a.large_mib * 1024 * 1024
        (key,) = self.upload("large", 1, size)
        obj = self.remote.object(key)
        blob = BlobDownloadConfig(chunk_size="8MiB", num_workers="8")
        mbps = lambda fn: size / MB / timed(fn)  # noqa: E731
        names = ("aistore cold", "aistore blob download", "aistore warm", "boto3 (S3 direct)")
        figs: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(self.a.rounds):
            self.evict([key])
            figs["aistore cold"].append(mbps(lambda: obj.get_reader().read_all()))
            self.evict([key])
            figs["aistore blob download"].append(
                mbps(lambda: obj.get_reader(blob_download_config=blob).read_all())
            )
            figs["aistore warm"].append(mbps(lambda: obj.get_reader().read_all()))
            figs["boto3 (S3 direct)"].append(
                mbps(lambda: self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())
            )
        self.record(f"GET one {self.a.large_mib} MiB object", "MB/s", figs, "boto3 (S3 direct)")

    def prefetch(self) -> None:
        keys = self.upload("prefetch", self.a.prefetch_count, 10 * 1024)
        figs: dict[str, list[float]] = {"aistore prefetch job": [], "boto3 loop (S3 direct)": []}
        for _ in range(self.a.rounds):
            self.evict(keys)
            job = lambda: self.client.job(  # noqa: E731
                self.remote.objects(obj_names=keys).prefetch(num_workers=8)
            ).wait(timeout=600)
            figs["aistore prefetch job"].append(len(keys) / timed(job))
            figs["boto3 loop (S3 direct)"].append(
                len(keys) / timed(lambda: [self.direct(k) for k in keys])
            )
        self.record(f"prefetch {len(keys)} x 10 KiB", "obj/s", figs, "boto3 loop (S3 direct)")

    def epoch(self) -> None:
        import torch.utils.data as tud

        from aistore.pytorch import AISMapDataset

        keys = self.upload("epoch", self.a.epoch_count, 10 * 1024)
        prefix = f"{self.a.prefix}epoch/"

        class Direct(tud.Dataset[tuple[str, bytes]]):
            def __init__(self, endpoint: str | None, bucket: str, keys: list[str]) -> None:
                self.endpoint, self.bucket, self.keys, self.s3 = endpoint, bucket, keys, None

            def __len__(self) -> int:
                return len(self.keys)

            def __getitem__(self, i: int) -> tuple[str, bytes]:
                if self.s3 is None:  # one client per worker process
                    self.s3 = boto3.client("s3", endpoint_url=self.endpoint)
                k = self.keys[i]
                return k, self.s3.get_object(Bucket=self.bucket, Key=k)["Body"].read()

        def run(ds: Any, read: Callable[[Any], int] = lambda s: len(s[1])) -> float:
            loader = tud.DataLoader(ds, batch_size=32, num_workers=4, collate_fn=lambda b: b)
            return len(keys) / timed(lambda: sum(read(s) for b in loader for s in b))

        endpoint = self.s3.meta.endpoint_url
        connector: Callable[[], Any] | None = None
        try:
            from s3torchconnector import S3ClientConfig, S3MapDataset

            region = self.s3.meta.region_name or "us-east-1"

            def connector() -> Any:
                return S3MapDataset.from_objects(
                    [f"s3://{self.bucket}/{k}" for k in keys],
                    region=region,
                    endpoint=endpoint,
                    s3client_config=S3ClientConfig(force_path_style=True),
                )
        except ImportError:
            print(
                "s3torchconnector not installed: its row is left out (pip install s3torchconnector)"
            )

        baseline = "s3torchconnector (S3 direct)" if connector else "boto3 Dataset (S3 direct)"
        figs: dict[str, list[float]] = {"aistore epoch 1 (cold)": [], "aistore epoch 2 (warm)": []}
        if connector:
            figs["s3torchconnector (S3 direct)"] = []
        figs["boto3 Dataset (S3 direct)"] = []
        for _ in range(self.a.rounds):
            self.evict(keys)
            ds = AISMapDataset(self.remote, prefix_map={self.remote: [prefix]})
            figs["aistore epoch 1 (cold)"].append(run(ds))
            figs["aistore epoch 2 (warm)"].append(run(ds))
            if connector:
                figs["s3torchconnector (S3 direct)"].append(
                    run(connector(), lambda r: len(r.read()))
                )
            figs["boto3 Dataset (S3 direct)"].append(run(Direct(endpoint, self.bucket, keys)))
        self.record(f"DataLoader epoch, {len(keys)} x 10 KiB", "obj/s", figs, baseline)

    def cleanup(self) -> None:
        self.remote.evict(keep_md=False)
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.a.prefix
        )
        for page in pages:
            objs = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            for i in range(0, len(objs), 1000):
                self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": objs[i : i + 1000]})


def main() -> None:
    a = parse_args()
    moto = None
    if a.endpoint:
        endpoint, bucket = a.endpoint, a.bucket
        env = {"S3_ENDPOINT": endpoint}
        where = f"S3 endpoint {endpoint}, bucket {bucket}"
    else:
        moto = MotoServer().start()
        endpoint, bucket = moto.endpoint, "aistore-bench"
        keys = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
        }
        os.environ.update(keys)  # boto3 here and in the DataLoader workers
        env = {"S3_ENDPOINT": endpoint, **keys}
        where = f"moto (S3 in server mode) on loopback, {endpoint}"
    s3 = boto3.client("s3", endpoint_url=endpoint)
    if moto:
        s3.create_bucket(Bucket=bucket)
    try:
        with LocalServer(num_mountpaths=4, env=env) as srv:
            bench = Bench(a, s3, bucket, srv)
            try:
                bench.small_gets()
                bench.large_get()
                bench.prefetch()
                try:
                    bench.epoch()
                except ImportError as e:
                    print(f"DataLoader epoch not run: {e}")
            finally:
                bench.cleanup()
    finally:
        if moto:
            moto.stop()
    print(f"\nRemote buckets: {where}; {a.rounds} round(s), median shown\n")
    print(f"{'case':<40} {'client':<28} {'value':>10} {'unit':<6} {'vs S3 direct':>12}")
    for r in bench.rows:
        value = f"{r['value']:>10.1f} {r['unit']:<6}"
        print(f"{r['case']:<40} {r['client']:<28} {value} {r['vs_s3']:>11.2f}x")
    if a.json:
        Path(a.json).write_text(json.dumps({"where": where, "rows": bench.rows}, indent=1))


if __name__ == "__main__":
    main()
