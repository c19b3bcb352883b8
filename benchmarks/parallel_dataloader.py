#!/usr/bin/env python3
"""The official parallel-download DataLoader benchmark (upstream
python/tests/perf/pytorch/parallel_download.py) for our datasets and the official SDK's, in one
run: AISMapDataset ("GET", one GET per object) vs AISParallelMapDataset ("Parallel",
AIS_WORKERS concurrent range GETs per object) over a bucket of large objects.

Same environment variables, header lines, per-batch lines and table as upstream: the loader is
shuffled with seed 42 (every run sees the same order), batches are kept as lists, only `next()`
is timed, ParallelBuffers are closed after timing. Configurations: ours with DataLoader
num_workers=0 and with `--dl-workers` (2) worker processes, and the official SDK 2.0.0 (PyPI, its
own venv sharing the system's torch) with num_workers=0 - its AISParallelMapDataset cannot run
inside DataLoader workers (its per-object process pool cannot start in a daemonic process).
Every round runs each configuration once, in turn; each table value is the median of the rounds.
Then ours over official, value by value.

Without AIS_ENDPOINT it starts our server (``LocalServer``, 4 mountpaths under /tmp) and fills
AIS_BUCKET with `--objects` objects of `--object-size` MiB, chunked at `--chunk` MiB (sized for
a 2-core, 24 GiB machine: 8 x 256 MiB; the run checks RAM and /dev/shm first). With
AIS_ENDPOINT it reads the objects already under AIS_BUCKET/AIS_PREFIX of that cluster.
benchmarks/parallel_download.py runs this after its own table.

Environment (as upstream): AIS_ENDPOINT (unset: our LocalServer), AIS_BUCKET (bench), AIS_PREFIX
(""), AIS_WORKERS (16), BATCH_SIZE (2 here, upstream 4: 8 objects make 4 batches), NUM_BATCHES
(all). GiB/s = 2^30 bytes/s; "Total wall time" is the sum of batch latencies, as upstream.

Usage:
    python3 benchmarks/parallel_dataloader.py               # 3 rounds (~4 min on 2 cores)
    python3 benchmarks/parallel_dataloader.py --quick       # 4 x 16 MiB, 1 round
    AIS_ENDPOINT=http://ais:8080 AIS_BUCKET=big python3 benchmarks/parallel_dataloader.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aistore._internal import shm
from aistore.pytorch import AISMapDataset, AISParallelMapDataset
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent / "tests" / "compat"))
sys.path.append(str(HERE))
import official_sdk  # noqa: E402
from _loader import (  # noqa: E402
    UPSTREAM_ROWS,
    BatchRun,
    render_upstream_table,
    time_batches,
    upstream_stats,
)

MiB, GiB = 1 << 20, 1 << 30
OFFICIAL_SCRIPT = (HERE / "_official_dataloader.py").read_text()
RUNS = ("GET", "Parallel")


@dataclass
class Settings:
    """What to read and how; the environment variables of the official benchmark override the
    defaults (`from_env`)."""

    objects: int = 8
    object_size: int = 256 * MiB
    chunk: int = 64 * MiB
    rounds: int = 3
    dl_workers: int = 2
    bucket: str = "bench"
    prefix: str = ""
    parallel_workers: int = 16
    batch: int = 2
    num_batches: int | None = None  # None: all

    def from_env(self) -> Settings:
        env = os.environ
        self.bucket = env.get("AIS_BUCKET", self.bucket)
        self.prefix = env.get("AIS_PREFIX", self.prefix)
        self.parallel_workers = int(env.get("AIS_WORKERS", self.parallel_workers))
        self.batch = int(env.get("BATCH_SIZE", self.batch))
        if "NUM_BATCHES" in env:
            self.num_batches = int(env["NUM_BATCHES"])
        return self


def check_memory(s: Settings) -> None:
    """Refuse a size this machine cannot hold: the objects in the page cache, and the batches
    in flight (three with DataLoader workers) in RAM and, for the official SDK, in /dev/shm."""
    batch_bytes = s.batch * s.object_size
    with open("/proc/meminfo") as f:
        avail = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable"))
    need_ram = s.objects * s.object_size + 4 * batch_bytes
    shm_free = shutil.disk_usage("/dev/shm").free
    if need_ram > avail or 2 * batch_bytes > shm_free:
        raise SystemExit(
            f"too big for this machine: {need_ram / GiB:.1f} GiB of RAM needed "
            f"({avail / GiB:.1f} available), {2 * batch_bytes / GiB:.1f} GiB of /dev/shm "
            f"({shm_free / GiB:.1f} free); use fewer or smaller objects, or a smaller BATCH_SIZE"
        )


def load_bucket(client: Client, s: Settings) -> Bucket:
    """Create `s.bucket`, chunked at `s.chunk`, holding `s.objects` objects of random bytes."""
    bucket = client.bucket(s.bucket).create(exist_ok=True)
    value = {"chunks": {"objsize_limit": "1MiB", "chunk_size": f"{s.chunk // MiB}MiB"}}
    bucket.make_request("PATCH", "set-bprops", value=value)
    block = os.urandom(s.object_size)
    for i in range(s.objects):
        bucket.object(f"{s.prefix}sample-{i:04d}").get_writer().put_content(block)
    return bucket


def header(bucket: Bucket, s: Settings) -> tuple[list[str], int]:
    """The official benchmark's three header lines, and the number of batches to run."""
    sizes = [e.size for e in bucket.list_all_objects(prefix=s.prefix, props="name,size")]
    if not sizes:
        raise SystemExit(f"no objects in ais://{bucket.name} under prefix {s.prefix!r}")
    total = len(sizes) // s.batch
    num = min(s.num_batches, total) if s.num_batches is not None else total
    return [
        f"Bucket: ais://{bucket.name}  prefix={s.prefix!r}",
        f"Objects: {len(sizes)}  total={sum(sizes) / GiB:.1f} GiB  "
        f"avg={statistics.mean(sizes) / GiB:.2f} GiB  min={min(sizes) / GiB:.2f} GiB  "
        f"max={max(sizes) / GiB:.2f} GiB",
        f"Config:  batch_size={s.batch}  num_batches={num}/{total}  "
        f"parallel_workers={s.parallel_workers}",
    ], num


class Runner:
    """Every configuration's runs of every round, by configuration and then "GET"/"Parallel"."""

    def __init__(self, endpoint: str, s: Settings, num_batches: int) -> None:
        self.endpoint = endpoint
        self.s = s
        self.num_batches = num_batches
        self.runs: dict[str, dict[str, list[BatchRun]]] = {}
        self.notes: list[str] = []
        self.official_error: str | None = None

    def configs(self) -> list[str]:
        names = ["ours, DataLoader num_workers=0"]
        if self.s.dl_workers:
            names.append(f"ours, DataLoader num_workers={self.s.dl_workers}")
        return [*names, f"official SDK {official_sdk.OFFICIAL_SDK_VERSION}, num_workers=0"]

    def _add(self, config: str, name: str, run: BatchRun) -> None:
        self.runs.setdefault(config, {}).setdefault(name, []).append(run)

    def ours(self, config: str, workers: int, label: str, out: Callable[[str], None]) -> None:
        s = self.s
        for name in RUNS:
            bucket = Client(self.endpoint).bucket(s.bucket)
            prefix_map = {bucket: s.prefix} if s.prefix else None
            dataset = (
                AISMapDataset(bucket, prefix_map)
                if name == "GET"
                else AISParallelMapDataset(bucket, prefix_map, num_workers=s.parallel_workers)
            )
            run = time_batches(
                dataset, s.batch, self.num_batches, workers, f"{name} ({config}, {label})", out
            )
            self._add(config, name, run)
        shm.pool().clear()

    def official(self, config: str, label: str, out: Callable[[str], None]) -> None:
        if self.official_error is not None:
            return
        s = self.s
        job = {
            "mode": "batches",
            "bucket": s.bucket,
            "prefix": s.prefix,
            "batch_size": s.batch,
            "num_batches": self.num_batches,
            "parallel_workers": s.parallel_workers,
            "runs": [[name, f"{name} ({config}, {label})"] for name in RUNS],
        }
        try:
            res = official_sdk.run_script(
                OFFICIAL_SCRIPT, self.endpoint, [str(HERE), json.dumps(job)], timeout=3600,
                with_torch=True,
            )  # fmt: skip
        except official_sdk.VenvError as e:  # incl. PyPIUnreachable
            self.official_error = str(e).splitlines()[0]
            self.notes.append(f"official SDK not run: {self.official_error}")
            return
        for line in res["lines"]:
            out(line)
        for name in RUNS:
            self._add(config, name, BatchRun(**res["runs"][name]))

    def run(self, out: Callable[[str], None]) -> None:
        configs = self.configs()
        for r in range(self.s.rounds):
            label = f"round {r + 1}/{self.s.rounds}"
            self.ours(configs[0], 0, label, out)
            if self.s.dl_workers:
                self.ours(configs[1], self.s.dl_workers, label, out)
            self.official(configs[-1], label, out)

    def medians(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per configuration and run, each row of the official summary: median of the rounds."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for config, by_name in self.runs.items():
            for name, runs in by_name.items():
                stats = [upstream_stats(run, self.s.batch) for run in runs]
                out.setdefault(config, {})[name] = {
                    row: statistics.median(st[row] for st in stats) for row in UPSTREAM_ROWS
                }
        return out


def render(runner: Runner) -> str:
    med = runner.medians()
    rounds = runner.s.rounds
    blocks = []
    for config in runner.configs():
        if config not in med:
            continue
        title = f"{config} (median of {rounds} round{'s' * (rounds > 1)})"
        blocks.append(
            f"{title}\n{render_upstream_table(med[config]['GET'], med[config]['Parallel'])}"
        )
    ours, official = runner.configs()[0], runner.configs()[-1]
    if ours in med and official in med:
        lines = [
            "Ours vs official, DataLoader num_workers=0: times better (official/ours for times)",
            f"{'':<22}{'GET':>10}{'Parallel':>10}",
            "─" * 42,
        ]
        for row in UPSTREAM_ROWS:
            cells = ""
            for name in RUNS:
                a, b = med[ours][name][row], med[official][name][row]
                better = b / a if row not in ("Throughput (GiB/s)", "Samples/sec") else a / b
                cells += f"{f'{better:.1f}x':>10}" if a and b else f"{'n/a':>10}"
            lines.append(f"{row:<22}{cells}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def measure(endpoint: str, bucket: Bucket, s: Settings, out: Callable[[str], None] = print) -> str:
    """Print the header and every run's batch lines as they come; return the tables and notes."""
    lines, num_batches = header(bucket, s)
    for line in lines:
        out(line)
    runner = Runner(endpoint, s, num_batches)
    runner.run(out)
    load = os.getloadavg()
    notes = [
        f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
        f"{os.cpu_count()} CPUs",
        "official AISParallelMapDataset with DataLoader num_workers>0: not run (its per-object "
        "process pool cannot start in a daemonic DataLoader worker)",
        *runner.notes,
    ]
    return "\n".join([*lines, "", render(runner), "", *(f"note: {n}" for n in notes)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 objects of 16 MiB, 1 round")
    ap.add_argument("--objects", type=int, help="objects to load (our server only)")
    ap.add_argument("--object-size", type=int, help="MiB per object (our server only)")
    ap.add_argument("--chunk", type=int, help="chunk size, MiB (our server only)")
    ap.add_argument("--rounds", type=int, help="rounds (each table value is their median)")
    ap.add_argument("--dl-workers", type=int, help="DataLoader workers of ours' second run (2)")
    args = ap.parse_args()
    s = (
        Settings(objects=4, object_size=16 * MiB, chunk=4 * MiB, rounds=1)
        if args.quick
        else Settings()
    )
    for name in ("objects", "rounds", "dl_workers"):
        if getattr(args, name) is not None:
            setattr(s, name, getattr(args, name))
    if args.object_size:
        s.object_size = args.object_size * MiB
    if args.chunk:
        s.chunk = args.chunk * MiB
    s.from_env()
    endpoint = os.environ.get("AIS_ENDPOINT")
    if endpoint:
        print(measure(endpoint, Client(endpoint).bucket(s.bucket), s))
        return
    check_memory(s)
    with tempfile.TemporaryDirectory(prefix="pdl-bench-") as root:
        mps = [Path(root) / f"mp{i}" for i in range(4)]
        with LocalServer(mountpaths=mps) as srv:
            bucket = load_bucket(srv.client(), s)
            print(measure(srv.endpoint, bucket, s))


if __name__ == "__main__":
    main()
