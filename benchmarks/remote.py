#!/usr/bin/env python3
"""Remote buckets of every provider: our cache tier against the provider's own Python client
reading the provider directly, side by side in one run, one table.

Each provider runs against an emulator on loopback (started here; a provider whose emulator or
client cannot run is skipped with a note):

* ``aws`` (``s3://``): moto in server mode, read directly with boto3; or, with ``--endpoint URL
  --bucket NAME`` (AWS credentials in the environment), any S3 endpoint and bucket, the test
  objects written under ``--prefix`` and removed after;
* ``gcp`` (``gs://``): gcp-storage-emulator, read directly with google-cloud-storage when it is
  installed, else with requests on the emulator's JSON API (the client column says which);
* ``azure`` (``az://``): Azurite (see tests/integration/_azure.py), read directly with
  azure-storage-blob.

Cases, for each provider:

* GET of small objects (``--small-count`` x ``--small-kib``), objects/s with 8 threads: cold (each
  object fetched by the server, evicted before each round), warm (local) and direct;
* one large object (``--large-mib``), MB/s: a single-stream cold GET, a blob download (cold,
  concurrent range reads into chunks), a warm GET and a direct read (one stream);
* prefetch of ``--prefetch-count`` objects (one job, 8 workers) vs a direct loop, objects/s;
* a DataLoader epoch over ``--epoch-count`` objects (4 workers, batch 32, ``AISMapDataset``):
  epoch 1 cold and epoch 2 warm through our dataset, vs a Dataset on the provider's client (and,
  for aws, ``s3torchconnector``'s ``S3MapDataset`` when installed).

Every case runs in rounds, the clients taking turns; the table shows each round's median. Ratios
are against the provider's direct client in the same case (> 1: faster than direct), beside
issue 37's goals: warm >= 5x direct, cold within 20% of direct (>= 0.80x).

Usage:
    python3 benchmarks/remote.py                        # defaults (~20 min, three emulators)
    python3 benchmarks/remote.py --quick                # tiny sizes (~30 s)
    python3 benchmarks/remote.py --providers aws,azure  # some providers only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _table import render_table

from aistore.sdk.blob_download_config import BlobDownloadConfig
from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "integration"))
from _s3 import LoopbackService, MotoServer  # noqa: E402

MB = 1_000_000
PROVIDERS = ("aws", "gcp", "azure")
GOALS = {"cold": 0.8, "warm": 5.0}  # issue 37: vs the provider's client reading directly
Getter = Callable[[str], bytes]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--providers",
        default=",".join(PROVIDERS),
        help="comma-separated, of: " + ",".join(PROVIDERS),
    )
    p.add_argument("--endpoint", help="aws: S3 endpoint URL (default: start moto on loopback)")
    p.add_argument("--bucket", help="aws: existing S3 bucket to use with --endpoint")
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
    a.providers = [x.strip() for x in a.providers.split(",") if x.strip()]
    unknown = set(a.providers) - set(PROVIDERS)
    if unknown or not a.providers:
        p.error(f"--providers: unknown {sorted(unknown)}; known: {','.join(PROVIDERS)}")
    return a


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def per_thread(make: Callable[[], Getter]) -> Getter:
    """A getter that builds its client once in each thread (for clients not safe to share)."""
    local = threading.local()

    def get(key: str) -> bytes:
        if not hasattr(local, "get"):
            local.get = make()
        return bytes(local.get(key))

    return get


class Provider:
    """One provider's side of the benchmark: its emulator, the server's environment to reach it,
    seeding objects and reading one straight from the provider with its own Python client."""

    name = ""  # the AIS provider
    direct = ""  # the client reading directly, as the table names it
    bucket = "aistore-bench"
    where = ""  # the endpoint, as the output names it
    server_env: dict[str, str]

    def put(self, key: str, body: bytes) -> None:
        raise NotImplementedError

    def connect(self) -> Getter:
        """A new direct client (one per DataLoader worker process), as a key -> bytes getter."""
        raise NotImplementedError

    def cleanup(self, prefix: str) -> None:
        """Remove what the benchmark wrote (emulators keep nothing: they are stopped)."""

    def stop(self) -> None:
        raise NotImplementedError


class Aws(Provider):
    name, direct = "aws", "boto3"

    def __init__(self, endpoint: str | None, bucket: str | None) -> None:
        import boto3

        self.moto: MotoServer | None = None
        if endpoint and bucket:
            self.endpoint, self.bucket = endpoint, bucket
            self.where = f"S3 endpoint {endpoint}, bucket {bucket}"
            self.server_env = {"S3_ENDPOINT": endpoint}
        else:
            self.moto = MotoServer().start()
            self.endpoint = self.moto.endpoint
            keys = {
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
            }
            os.environ.update(keys)  # boto3 here and in the DataLoader workers
            self.server_env = {"S3_ENDPOINT": self.endpoint, **keys}
            self.where = f"moto (server mode) {self.endpoint}"
        self.s3 = boto3.client("s3", endpoint_url=self.endpoint)
        if self.moto:
            self.s3.create_bucket(Bucket=self.bucket)

    def put(self, key: str, body: bytes) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)

    def connect(self) -> Getter:
        import boto3

        s3 = boto3.client("s3", endpoint_url=self.endpoint)
        return lambda k: bytes(s3.get_object(Bucket=self.bucket, Key=k)["Body"].read())

    def cleanup(self, prefix: str) -> None:
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        for page in pages:
            objs = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            for i in range(0, len(objs), 1000):
                self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": objs[i : i + 1000]})

    def stop(self) -> None:
        if self.moto:
            self.moto.stop()


class Gcp(Provider):
    name = "gcp"

    def __init__(self) -> None:
        from _gcs import PROJECT, GcsEmulator, GcsJson

        self.emulator = GcsEmulator().start()
        self.endpoint = self.emulator.endpoint
        self.json = GcsJson(self.emulator.port)  # seeding: plain HTTP to the JSON API
        self.json.create_bucket(self.bucket)
        self.where = f"gcp-storage-emulator {self.endpoint}"
        self.server_env = {
            "STORAGE_EMULATOR_HOST": self.endpoint,
            "GOOGLE_CLOUD_PROJECT": PROJECT,
            "GOOGLE_APPLICATION_CREDENTIALS": "",
        }
        os.environ["STORAGE_EMULATOR_HOST"] = self.endpoint  # google-cloud-storage honours it
        self.project = PROJECT
        try:
            import google.cloud.storage  # noqa: F401

            self.direct = "google-cloud-storage"
        except ImportError:
            self.direct = "requests, JSON API"

    def put(self, key: str, body: bytes) -> None:
        self.json.put(self.bucket, key, body)

    def _connect_one(self) -> Getter:
        if self.direct == "google-cloud-storage":
            from google.auth.credentials import AnonymousCredentials
            from google.cloud import storage

            bucket = storage.Client(
                project=self.project, credentials=AnonymousCredentials()
            ).bucket(self.bucket)
            return lambda k: bytes(bucket.blob(k).download_as_bytes())
        import requests

        session = requests.Session()
        base = f"{self.endpoint}/storage/v1/b/{self.bucket}/o/"

        def get(key: str) -> bytes:
            r = session.get(base + urllib.parse.quote(key, safe="") + "?alt=media")
            r.raise_for_status()
            return bytes(r.content)

        return get

    def connect(self) -> Getter:
        return per_thread(self._connect_one)  # neither client is documented thread-safe

    def stop(self) -> None:
        self.emulator.stop()


class Azure(Provider):
    name, direct = "azure", "azure-storage-blob"

    def __init__(self) -> None:
        from _azure import ACCOUNT, KEY, AzureBlobs, Azurite

        self.azurite: LoopbackService = Azurite().start()
        self.blobs = AzureBlobs(self.azurite.port)
        self.blobs.create_container(self.bucket)
        self.where = f"Azurite {self.azurite.endpoint}"
        self.server_env = {
            "AZURE_STORAGE_ACCOUNT": ACCOUNT,
            "AZURE_STORAGE_KEY": KEY,
            "AIS_AZURE_URL": f"{self.azurite.endpoint}/{ACCOUNT}",
        }

    def put(self, key: str, body: bytes) -> None:
        self.blobs.service.get_blob_client(self.bucket, key).upload_blob(body, overwrite=True)

    def connect(self) -> Getter:
        from _azure import AzureBlobs

        container = AzureBlobs(self.azurite.port).service.get_container_client(self.bucket)
        return lambda k: bytes(container.get_blob_client(k).download_blob().readall())

    def stop(self) -> None:
        self.azurite.stop()


def start_provider(name: str, a: argparse.Namespace) -> Provider | None:
    """`name`'s emulator started, or None (with a note) when it cannot run here."""
    try:
        if name == "aws":
            return Aws(a.endpoint, a.bucket)
        if name == "gcp":
            return Gcp()
        from _azure import skip_reason

        reason = skip_reason()
        if reason:
            print(f"azure skipped: {reason}")
            return None
        return Azure()
    except (ImportError, RuntimeError, FileNotFoundError) as e:
        print(f"{name} skipped: its emulator or client cannot run here: {e!r}")
        return None


class Bench:
    def __init__(self, args: argparse.Namespace, provider: Provider, srv: LocalServer) -> None:
        self.a = args
        self.p = provider
        self.direct = provider.connect()
        self.client = srv.client()
        self.remote = self.client.bucket(provider.bucket, provider=provider.name)
        self.rows: list[dict[str, Any]] = []
        self.baseline = f"{provider.direct} (direct)"

    def key(self, group: str, i: int) -> str:
        return f"{self.a.prefix}{group}/{i:06d}"

    def upload(self, group: str, count: int, size: int) -> list[str]:
        keys = [self.key(group, i) for i in range(count)]
        body = os.urandom(size)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda k: self.p.put(k, body), keys))
        return keys

    def evict(self, keys: list[str]) -> None:
        job = self.remote.objects(obj_names=keys).evict()
        self.client.job(job).wait(timeout=600)

    def record(self, case: str, unit: str, figures: dict[str, list[float]]) -> None:
        med = {name: statistics.median(v) for name, v in figures.items()}
        for name, value in med.items():
            kind = "cold" if "cold" in name else "warm" if "warm" in name else None
            self.rows.append(
                {
                    "provider": self.p.name,
                    "case": case,
                    "client": name,
                    "unit": unit,
                    "value": value,
                    "vs_direct": value / med[self.baseline],
                    "goal": GOALS.get(kind) if kind else None,
                }
            )

    def small_gets(self) -> None:
        keys = self.upload("small", self.a.small_count, self.a.small_kib * 1024)
        ours = lambda k: self.remote.object(k).get_reader().read_all()  # noqa: E731

        def rate(fn: Callable[[str], Any]) -> float:
            with ThreadPoolExecutor(8) as pool:
                return len(keys) / timed(lambda: list(pool.map(fn, keys)))

        figs: dict[str, list[float]] = {"aistore cold": [], "aistore warm": [], self.baseline: []}
        for _ in range(self.a.rounds):
            self.evict(keys)
            figs["aistore cold"].append(rate(ours))
            figs["aistore warm"].append(rate(ours))
            figs[self.baseline].append(rate(self.direct))
        self.record(f"GET {self.a.small_count} x {self.a.small_kib} KiB, 8 threads", "obj/s", figs)

    def large_get(self) -> None:
        size = self.a.large_mib * 1024 * 1024
        (key,) = self.upload("large", 1, size)
        obj = self.remote.object(key)
        blob = BlobDownloadConfig(chunk_size="8MiB", num_workers="8")
        mbps = lambda fn: size / MB / timed(fn)  # noqa: E731
        names = ("aistore cold", "aistore blob download", "aistore warm", self.baseline)
        figs: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(self.a.rounds):
            self.evict([key])
            figs["aistore cold"].append(mbps(lambda: obj.get_reader().read_all()))
            self.evict([key])
            figs["aistore blob download"].append(
                mbps(lambda: obj.get_reader(blob_download_config=blob).read_all())
            )
            figs["aistore warm"].append(mbps(lambda: obj.get_reader().read_all()))
            figs[self.baseline].append(mbps(lambda: self.direct(key)))
        self.record(f"GET one {self.a.large_mib} MiB object", "MB/s", figs)

    def prefetch(self) -> None:
        keys = self.upload("prefetch", self.a.prefetch_count, 10 * 1024)
        figs: dict[str, list[float]] = {"aistore prefetch job": [], self.baseline: []}
        for _ in range(self.a.rounds):
            self.evict(keys)
            job = lambda: self.client.job(  # noqa: E731
                self.remote.objects(obj_names=keys).prefetch(num_workers=8)
            ).wait(timeout=600)
            figs["aistore prefetch job"].append(len(keys) / timed(job))
            figs[self.baseline].append(len(keys) / timed(lambda: [self.direct(k) for k in keys]))
        self.record(f"prefetch {len(keys)} x 10 KiB (direct: a loop)", "obj/s", figs)

    def epoch(self) -> None:
        import torch.utils.data as tud

        from aistore.pytorch import AISMapDataset

        keys = self.upload("epoch", self.a.epoch_count, 10 * 1024)
        prefix = f"{self.a.prefix}epoch/"
        provider = self.p

        class Direct(tud.Dataset[tuple[str, bytes]]):
            def __init__(self) -> None:
                self.get: Getter | None = None

            def __len__(self) -> int:
                return len(keys)

            def __getitem__(self, i: int) -> tuple[str, bytes]:
                if self.get is None:  # one client per worker process
                    self.get = provider.connect()
                return keys[i], self.get(keys[i])

        def run(ds: Any, read: Callable[[Any], int] = lambda s: len(s[1])) -> float:
            loader = tud.DataLoader(ds, batch_size=32, num_workers=4, collate_fn=lambda b: b)
            return len(keys) / timed(lambda: sum(read(s) for b in loader for s in b))

        connector = self.s3_connector(keys) if isinstance(provider, Aws) else None
        figs: dict[str, list[float]] = {"aistore epoch 1 (cold)": [], "aistore epoch 2 (warm)": []}
        figs[self.baseline] = []
        if connector:
            figs["s3torchconnector (direct)"] = []
        for _ in range(self.a.rounds):
            self.evict(keys)
            ds = AISMapDataset(self.remote, prefix_map={self.remote: [prefix]})
            figs["aistore epoch 1 (cold)"].append(run(ds))
            figs["aistore epoch 2 (warm)"].append(run(ds))
            figs[self.baseline].append(run(Direct()))
            if connector:
                figs["s3torchconnector (direct)"].append(run(connector(), lambda r: len(r.read())))
        self.record(f"DataLoader epoch, {len(keys)} x 10 KiB", "obj/s", figs)

    def s3_connector(self, keys: list[str]) -> Callable[[], Any] | None:
        """AWS's PyTorch connector's map dataset over `keys`, when it is installed."""
        assert isinstance(self.p, Aws)
        try:
            from s3torchconnector import S3ClientConfig, S3MapDataset
        except ImportError:
            print("s3torchconnector not installed: its row is left out")
            return None
        s3 = self.p.s3
        region = s3.meta.region_name or "us-east-1"
        return lambda: S3MapDataset.from_objects(
            [f"s3://{self.p.bucket}/{k}" for k in keys],
            region=region,
            endpoint=s3.meta.endpoint_url,
            s3client_config=S3ClientConfig(force_path_style=True),
        )

    def run(self) -> None:
        try:
            self.small_gets()
            self.large_get()
            self.prefetch()
            try:
                self.epoch()
            except ImportError as e:
                print(f"{self.p.name}: DataLoader epoch not run: {e}")
        finally:
            self.remote.evict(keep_md=False)
            self.p.cleanup(self.a.prefix)


def verdict(row: dict[str, Any]) -> str:
    """The row's goal and whether this run met it ("" when the case has no goal)."""
    goal = row["goal"]
    if goal is None:
        return ""
    return f">= {goal:.2f}x " + ("met" if row["vs_direct"] >= goal else "missed")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    a = parse_args()
    load_before = load()
    providers: list[Provider] = []
    rows: list[dict[str, Any]] = []
    try:
        for name in a.providers:
            p = start_provider(name, a)
            if p:
                providers.append(p)
        if not providers:
            sys.exit("no provider could run")
        env = {k: v for p in providers for k, v in p.server_env.items()}
        with LocalServer(num_mountpaths=4, env=env) as srv:
            for p in providers:
                bench = Bench(a, p, srv)
                bench.run()
                rows += bench.rows
    finally:
        for p in providers:
            p.stop()
    where = "; ".join(f"{p.name}: {p.where}" for p in providers)
    print("\nRemote buckets through the cache tier vs each provider's client reading directly")
    print(where)
    print(f"{a.rounds} round(s), median shown; load average (1/5/15 min) {load_before} before, "
          f"{load()} after\n")  # fmt: skip
    lines = [["provider", "case", "client", "value", "unit", "vs direct", "goal"]]
    for r in rows:
        lines.append([r["provider"], r["case"], r["client"], f"{r['value']:,.1f}", r["unit"],
                      f"{r['vs_direct']:.2f}x", verdict(r)])  # fmt: skip
    print(render_table(lines, left=(0, 1, 2, 4, 6)))
    if a.json:
        Path(a.json).write_text(json.dumps({"where": where, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
