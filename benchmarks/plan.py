#!/usr/bin/env python3
"""Epoch-plan benchmark (issue 24): one table.

* Plan build: `EpochPlan.build` for 10 million samples, full permutation and shard-aware
  (100,000 shards of 100, window 1024): seconds and peak memory of the build (tracemalloc,
  which sees numpy's buffers), best of 3. Goal: < 1 s and < 200 MB.
* DataLoader epoch: the same shuffled epoch of small objects (10 KiB) and of tar shards through
  today's datasets and through `AISPlanDataset`, DataLoader workers 0 and 2, batch 32, timed
  from before the dataset is built (listing or snapshot included) to the last batch; median of
  the rounds, cases interleaved within a round. Goal: the plan no slower than today's datasets.

Usage:
    python3 benchmarks/plan.py                      # 10,000 objects, 3 rounds
    python3 benchmarks/plan.py --objects 2000 --rounds 1 --plan-samples 1000000
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import DataLoader

from aistore.pytorch import AISIterDataset, AISShardReader
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset
from aistore.pytorch.plan import DatasetSnapshot, EpochPlan
from aistore.pytorch.plan_dataset import AISPlanDataset
from aistore.server import LocalServer

sys.path.append(str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402

BATCH = 32
SAMPLE = 10 * 1024
PER_SHARD = 100


def identity(batch: list[Any]) -> list[Any]:
    return batch


def plan_build(n: int, mode: str) -> tuple[float, float]:
    """Best-of-3 seconds and the peak MB of building the plan of `n` samples."""
    counts = np.full(n // PER_SHARD, PER_SHARD, dtype=np.int64) if mode == "shards" else None
    best_s, peak = float("inf"), 0.0
    for epoch in range(3):
        tracemalloc.start()
        t0 = time.perf_counter()
        plan = EpochPlan.build(n, seed=1, epoch=epoch, shuffle=mode, shard_counts=counts)  # type: ignore[arg-type]
        best_s = min(best_s, time.perf_counter() - t0)
        peak = max(peak, tracemalloc.get_traced_memory()[1] / 1e6)
        tracemalloc.stop()
        assert len(plan) == n
        del plan
    return best_s, peak


def epoch(make: Callable[[], Any], workers: int, plan: bool) -> tuple[float, int]:
    """Seconds for one epoch (dataset build included) and the samples delivered."""
    t0 = time.perf_counter()
    ds = make()
    if plan:
        # The dataset hands out whole batches (collate_fn=None: lists of raw samples); without
        # collate_fn DataLoader would walk every sample through default_convert, which the
        # other datasets' rows do not pay either.
        loader = DataLoader(ds, batch_size=None, num_workers=workers, collate_fn=identity)
    else:
        loader = DataLoader(ds, batch_size=BATCH, num_workers=workers, collate_fn=identity)
    samples = sum(len(batch) for batch in loader)
    return time.perf_counter() - t0, samples


def load(srv: LocalServer, objects: int) -> tuple[Any, Any]:
    client = srv.client()
    small, shards = client.bucket("plan-small").create(), client.bucket("plan-shards").create()
    body = bytes(SAMPLE)

    def put_small(i: int) -> None:
        small.object(f"s-{i:07d}.bin").get_writer().put_content(body)

    def put_shard(j: int) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for k in range(PER_SHARD):
                for ext, data in (("bin", body), ("cls", b"7")):
                    info = tarfile.TarInfo(f"k{j:05d}-{k:03d}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        shards.object(f"shard-{j:05d}.tar").get_writer().put_content(buf.getvalue())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put_small, range(objects)))
        list(pool.map(put_shard, range(max(1, objects // PER_SHARD))))
    return small, shards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--plan-samples", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    args = parser.parse_args()

    rows = [["case", "what", "time", "memory / rate", "vs today"]]
    for mode in ("full", "shards"):
        seconds, peak = plan_build(args.plan_samples, mode)
        label = f"EpochPlan.build({args.plan_samples:,}, {mode!r})"
        rows.append([label, "plan build", f"{seconds:.3f} s", f"{peak:.0f} MB peak", ""])

    with (
        tempfile.TemporaryDirectory() as scratch,
        LocalServer(mountpaths=[Path(scratch) / f"mp{i}" for i in range(4)]) as srv,
    ):
        small, shards = load(srv, args.objects)
        client = srv.client()
        cases: list[tuple[str, str, Callable[[], Any], bool]] = [
            (
                "objects",
                "AISIterDataset(shuffle)",
                lambda: AISIterDataset(small, shuffle=True),
                False,
            ),
            (
                "objects",
                "AISBatchIterDataset(shuffle)",
                lambda: AISBatchIterDataset(small, client, max_batch_size=BATCH, shuffle=True),
                False,
            ),
            (
                "objects",
                "AISPlanDataset",
                lambda: AISPlanDataset(DatasetSnapshot.from_sources(small), BATCH, collate_fn=None),
                True,
            ),
            (
                "shards",
                "AISShardReader(shuffle)",
                lambda: AISShardReader(shards, shuffle=True),
                False,
            ),
            (
                "shards",
                "AISPlanDataset(shards)",
                lambda: AISPlanDataset(
                    DatasetSnapshot.from_sources(shards, shards=True), BATCH, collate_fn=None
                ),
                True,
            ),
        ]
        times: dict[tuple[str, int], list[float]] = {}
        for _ in range(args.rounds):
            for workers in args.workers:
                for data, name, make, plan in cases:
                    seconds, samples = epoch(make, workers, plan)
                    expected = (
                        args.objects if data == "objects" else args.objects // PER_SHARD * PER_SHARD
                    )
                    assert samples == expected, (name, samples, expected)
                    times.setdefault((name, workers), []).append(seconds)
        for workers in args.workers:
            best_today: dict[str, float] = {}
            for data, name, _, plan in cases:
                rate = args.objects / statistics.median(times[(name, workers)])
                if not plan:
                    best_today[data] = max(best_today.get(data, 0.0), rate)
            for data, name, _, plan in cases:
                seconds = statistics.median(times[(name, workers)])
                rate = args.objects / seconds
                ratio = f"{rate / best_today[data]:.2f}x" if plan else ""
                rows.append(
                    [
                        f"{name}, workers={workers}",
                        f"epoch of {data}",
                        f"{seconds:.2f} s",
                        f"{rate / 1000:.1f}K samples/s",
                        ratio,
                    ]
                )
    print(render_table(rows))


if __name__ == "__main__":
    main()
