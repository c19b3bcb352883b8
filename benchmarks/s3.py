#!/usr/bin/env python3
"""The S3 front end against the AIS API on the same server, side by side in one run.

One server (with ``--s3-api-via-root``: s3torchconnector reads from the root path here, /s3
works too), one bucket written through S3. Cases, each read by every client in turn,
``--rounds`` times, the table showing each round's median:

* GET of ``--small-count`` objects of ``--small-kib`` KiB, objects/s with 8 threads: boto3 and
  s3torchconnector on the S3 front end vs our SDK on the AIS API;
* GET of one ``--large-mib`` MiB object, GB/s: boto3 ``get_object`` (one stream), boto3
  ``download_fileobj`` (parallel ranges), s3torchconnector's reader vs our SDK's ``read_all``;
* a listing of ``--list-count`` objects, objects/s: ListObjectsV2 through boto3's paginator
  (1000 per page, and 10 000: this server honours max-keys up to its list page size) and raw
  HTTP (the XML fetched, not parsed) vs our SDK's ``list_all_objects`` (10 000 per page);
* a DataLoader epoch over the small objects (4 workers, batch 32): s3torchconnector's
  ``S3MapDataset`` vs our ``AISMapDataset``, objects/s;
* what checking signatures costs: the small GETs by boto3 on a second server started with
  ``--s3-credentials`` (every request's SigV4 signature verified) beside the first server's
  unchecked ones, the same by ``wrk`` replaying presigned SigV4 URLs (the server's side alone:
  boto3 is slower than either server), and our SDK on the second server.

Ratios are against our SDK on the AIS API in the same case (1.0: as fast).

Usage:
    python3 benchmarks/s3.py            # defaults (1 GiB object, 100 000 listed; a few minutes)
    python3 benchmarks/s3.py --quick    # tiny sizes (~30 s)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3
import requests
import torch
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

from aistore.pytorch import AISMapDataset
from aistore.server import LocalServer

sys.path.append(str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402
from core import parse_wrk_rate  # noqa: E402

GB = 1e9
MiB = 1 << 20
AIS = "aistore SDK (AIS API)"
KEY_ID, SECRET = "AKIDBENCH", "bench-secret"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--small-count", type=int, help="default 2000 (--quick: 200)")
    p.add_argument("--small-kib", type=int, default=10)
    p.add_argument("--large-mib", type=int, help="default 1024 (--quick: 16)")
    p.add_argument("--list-count", type=int, help="default 100000 (--quick: 2000)")
    p.add_argument("--rounds", type=int, help="default 3 (--quick: 1)")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    p.add_argument("--wrk-seconds", type=int, help="default 5 (--quick: 1)")
    p.add_argument("--json", help="also write every figure to this file")
    a = p.parse_args()
    # Explicit sizes win over --quick's.
    for name, full, quick in (
        ("small_count", 2000, 200),
        ("large_mib", 1024, 16),
        ("list_count", 100_000, 2000),
        ("rounds", 3, 1),
        ("wrk_seconds", 5, 1),
    ):
        if getattr(a, name) is None:
            setattr(a, name, quick if a.quick else full)
    return a


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Bench:
    def __init__(self, args: argparse.Namespace, srv: LocalServer) -> None:
        from s3torchconnector import S3ClientConfig

        self.a = args
        self.srv = srv
        self.endpoint = srv.endpoint
        self.s3 = boto3.client(
            "s3",
            endpoint_url=self.endpoint + "/s3",
            region_name="us-east-1",
            aws_access_key_id="any",
            aws_secret_access_key="any",
            config=Config(s3={"addressing_style": "path"}, max_pool_connections=32),
        )
        self.client = srv.client()
        self.bucket = "bench-" + uuid.uuid4().hex[:8]
        self.s3.create_bucket(Bucket=self.bucket)
        self.tc_config = S3ClientConfig(force_path_style=True)
        self.rows: list[dict[str, Any]] = []

    def upload(self, prefix: str, count: int, size: int) -> list[str]:
        keys = [f"{prefix}/{i:06d}" for i in range(count)]
        body = os.urandom(size)
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda k: self.s3.put_object(Bucket=self.bucket, Key=k, Body=body), keys))
        return keys

    def record(self, case: str, unit: str, figures: dict[str, list[float]]) -> None:
        med = {name: statistics.median(v) for name, v in figures.items()}
        for name, value in med.items():
            self.rows.append(
                {
                    "case": case,
                    "client": name,
                    "unit": unit,
                    "value": value,
                    "vs_ais": value / med[AIS],
                }
            )

    def rounds(self, clients: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
        figs: dict[str, list[float]] = {name: [] for name in clients}
        for _ in range(self.a.rounds):
            for name, fn in clients.items():
                figs[name].append(fn())
        return figs

    def map_dataset(self, prefix: str) -> Any:
        from s3torchconnector import S3MapDataset

        return S3MapDataset.from_prefix(
            f"s3://{self.bucket}/{prefix}/", region="us-east-1", endpoint=self.endpoint,
            s3client_config=self.tc_config, transform=lambda o: o.read(),
        )  # fmt: skip

    def small_gets(self) -> None:
        keys = self.upload("small", self.a.small_count, self.a.small_kib * 1024)
        bucket = self.client.bucket(self.bucket)
        tc = self.map_dataset("small")
        n = len(tc)
        assert n == len(keys)

        def rate(fn: Callable[[Any], Any], items: list[Any]) -> float:
            with ThreadPoolExecutor(8) as pool:
                return len(items) / timed(lambda: list(pool.map(fn, items)))

        clients = {
            "boto3 (S3)": lambda: rate(
                lambda k: self.s3.get_object(Bucket=self.bucket, Key=k)["Body"].read(), keys
            ),
            "s3torchconnector (S3)": lambda: rate(lambda i: tc[i], list(range(n))),
            AIS: lambda: rate(lambda k: bucket.object(k).get_reader().read_all(), keys),
        }
        self.record(
            f"GET {self.a.small_kib} KiB x{len(keys)}, 8 threads", "obj/s", self.rounds(clients)
        )

    def large_get(self) -> None:
        from s3torchconnector import S3Checkpoint

        size = self.a.large_mib * MiB
        key = "large/object"
        with open("/dev/urandom", "rb") as rnd:
            data = rnd.read(size)
        self.client.bucket(self.bucket).object(key).get_writer().put_content(data)
        del data
        obj = self.client.bucket(self.bucket).object(key)
        ck = S3Checkpoint(
            region="us-east-1", endpoint=self.endpoint, s3client_config=self.tc_config
        )
        cfg = TransferConfig(multipart_chunksize=16 * MiB, max_concurrency=8)

        def tc_read() -> float:
            with ck.reader(f"s3://{self.bucket}/{key}") as r:
                return size / GB / timed(r.read)

        def boto3_parallel() -> float:
            sink = io.BytesIO()
            return (
                size
                / GB
                / timed(lambda: self.s3.download_fileobj(self.bucket, key, sink, Config=cfg))
            )

        clients = {
            "boto3 get_object (S3)": lambda: (
                size
                / GB
                / timed(lambda: self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())
            ),
            "boto3 download_fileobj (S3)": boto3_parallel,
            "s3torchconnector (S3)": tc_read,
            AIS: lambda: size / GB / timed(lambda: obj.get_reader().read_all()),
        }
        self.record(f"GET {self.a.large_mib} MiB, one object", "GB/s", self.rounds(clients))

    def listing(self) -> None:
        bucket = self.client.bucket(self.bucket)
        count = self.a.list_count
        keys = [f"list/{i:07d}" for i in range(count)]
        with ThreadPoolExecutor(16) as pool:  # written through the AIS API: faster to set up
            list(pool.map(lambda k: bucket.object(k).get_writer().put_content(b"x"), keys))

        def paginate(page: int) -> float:
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix="list/", PaginationConfig={"PageSize": page}
            )
            t = time.perf_counter()
            n = sum(len(p.get("Contents", [])) for p in pages)
            assert n == count, n
            return n / (time.perf_counter() - t)

        def raw_http(page: int | None) -> float:
            session = requests.Session()
            params = {"list-type": "2", "prefix": "list/"}
            if page:
                params["max-keys"] = str(page)
            t = time.perf_counter()
            pages = 0
            while True:
                r = session.get(f"{self.endpoint}/s3/{self.bucket}", params=params, timeout=60)
                pages += 1
                text = r.content  # bytes: requests would guess a charset for .text, slowly
                start = text.find(b"<NextContinuationToken>")
                if start < 0:
                    break
                end = text.find(b"</NextContinuationToken>")
                params["continuation-token"] = text[start + 23 : end].decode()
            per_page = page or 10000  # the server's list page size when max-keys is absent
            assert pages == max(1, (count + per_page - 1) // per_page), pages
            return count / (time.perf_counter() - t)

        def ais() -> float:
            t = time.perf_counter()
            n = sum(1 for _ in bucket.list_all_objects(prefix="list/"))
            assert n == count, n
            return n / (time.perf_counter() - t)

        clients = {
            "boto3 ListObjectsV2 1000/page (S3)": lambda: paginate(1000),
            "boto3 ListObjectsV2 10000/page (S3)": lambda: paginate(10000),
            "HTTP ListObjectsV2 1000/page, XML unparsed (S3)": lambda: raw_http(1000),
            "HTTP ListObjectsV2 default page, XML unparsed (S3)": lambda: raw_http(None),
            AIS: ais,
        }
        self.record(f"list {count} objects", "obj/s", self.rounds(clients))

    def epoch(self) -> None:
        tc = self.map_dataset("small")
        bucket = self.client.bucket(self.bucket)
        ours = AISMapDataset(bucket, prefix_map={bucket: "small/"})

        def run(ds: Any) -> float:
            loader = torch.utils.data.DataLoader(
                ds, batch_size=32, num_workers=4, collate_fn=lambda b: len(b)
            )
            t = time.perf_counter()
            n = sum(loader)
            assert n == self.a.small_count, n
            return n / (time.perf_counter() - t)

        clients = {"s3torchconnector S3MapDataset (S3)": lambda: run(tc), AIS: lambda: run(ours)}
        self.record(
            f"DataLoader epoch, {self.a.small_count} x {self.a.small_kib} KiB",
            "obj/s",
            self.rounds(clients),
        )


def endpoint_path(url: str) -> str:
    """The path and query of `url`."""
    rest = url.split("//", 1)[1]
    return rest[rest.index("/") :]


def wrk_rate(endpoint: str, paths: list[str], seconds: int) -> float:
    """GETs/s by wrk (2 threads, 16 connections) cycling through `paths`."""
    table = ",".join(f'"{p}"' for p in paths)
    script = (
        f"local paths = {{{table}}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n"
        '  return wrk.format("GET", paths[i % #paths + 1])\nend\n'
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        lua.write(script)
        lua.flush()
        out = subprocess.run(
            ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", lua.name, endpoint],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return parse_wrk_rate(out)


def signed_small_gets(a: argparse.Namespace, unchecked: Bench, keys: list[str]) -> None:
    """The small GETs through boto3 with signatures unchecked (the first server) and checked (a
    second server, the same binary, with ``--s3-credentials``)."""
    with tempfile.TemporaryDirectory(prefix="s3bench-") as tmp:
        creds = Path(tmp) / "credentials"
        creds.write_text(
            f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
        )
        with LocalServer(num_mountpaths=2, args=["--s3-credentials", str(creds)]) as srv:
            s3 = boto3.client(
                "s3",
                endpoint_url=srv.endpoint + "/s3",
                region_name="us-east-1",
                aws_access_key_id=KEY_ID,
                aws_secret_access_key=SECRET,
                config=Config(
                    s3={"addressing_style": "path"},
                    max_pool_connections=32,
                    signature_version="s3v4",  # presigned URLs too (boto3's default: SigV2)
                ),
            )
            s3.create_bucket(Bucket=unchecked.bucket)
            body = os.urandom(a.small_kib * 1024)
            with ThreadPoolExecutor(16) as pool:
                list(
                    pool.map(
                        lambda k: s3.put_object(Bucket=unchecked.bucket, Key=k, Body=body), keys
                    )
                )
            bucket = srv.client().bucket(unchecked.bucket)

            def rate(fn: Callable[[str], Any]) -> float:
                with ThreadPoolExecutor(8) as pool:
                    return len(keys) / timed(lambda: list(pool.map(fn, keys)))

            def get(client: Any) -> Callable[[str], Any]:
                return lambda k: client.get_object(Bucket=unchecked.bucket, Key=k)["Body"].read()

            # wrk replays presigned SigV4 URLs (valid for an hour): the server's side alone,
            # where boto3 itself is the bottleneck of the rows above.
            urls = [
                s3.generate_presigned_url(
                    "get_object", Params={"Bucket": unchecked.bucket, "Key": k}, ExpiresIn=3600
                )
                for k in keys[:256]
            ]

            def wrk(endpoint: str) -> float:
                paths = [endpoint_path(u) for u in urls]
                return wrk_rate(endpoint, paths, a.wrk_seconds)

            clients = {
                "boto3 (S3), signatures unchecked": lambda: rate(get(unchecked.s3)),
                "boto3 (S3), SigV4 checked": lambda: rate(get(s3)),
                "wrk, presigned URLs (S3), unchecked": lambda: wrk(unchecked.endpoint),
                "wrk, presigned URLs (S3), SigV4 checked": lambda: wrk(srv.endpoint),
                AIS: lambda: rate(lambda k: bucket.object(k).get_reader().read_all()),
            }
            unchecked.record(
                f"GET {a.small_kib} KiB x{len(keys)}, 8 threads, --s3-credentials",
                "obj/s",
                unchecked.rounds(clients),
            )


def main() -> None:
    a = parse_args()
    # Any credentials do (auth is off); the CRT client of s3torchconnector reads them here.
    for k, v in {
        "AWS_ACCESS_KEY_ID": "any",
        "AWS_SECRET_ACCESS_KEY": "any",
        "AWS_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(k, v)
    with LocalServer(num_mountpaths=2, args=["--s3-api-via-root"]) as srv:
        b = Bench(a, srv)
        b.small_gets()
        b.large_get()
        b.listing()
        b.epoch()
        signed_small_gets(a, b, [f"small/{i:06d}" for i in range(a.small_count)])
    lines = [["case", "client", "figure", "unit", "vs AIS API"]]
    for r in b.rows:
        lines.append(
            [
                r["case"],
                r["client"],
                f"{r['value']:.3f}" if r["unit"] == "GB/s" else f"{r['value']:.0f}",
                r["unit"],
                f"{r['vs_ais']:.2f}",
            ]
        )
    print(render_table(lines))
    if a.json:
        Path(a.json).write_text(json.dumps(b.rows, indent=2))


if __name__ == "__main__":
    main()
