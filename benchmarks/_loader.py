"""DataLoader timing shared by benchmarks/dataloader.py and benchmarks/parallel_dataloader.py,
and by their official-SDK side (_official_dataloader.py), which imports this file inside the
official SDK's venv: it imports nothing but torch and the standard library.

Two ways to time a loader:

* `time_epoch`: one epoch (or its first `limit` samples) from before the dataset is built to
  the last batch: samples/s and time to first batch, listing and worker start-up included;
* `time_batches`: the official parallel-download benchmark's loop (spec section 4): only
  `next()` is timed, one line per batch, and `upstream_stats` / `render_upstream_table` give
  its summary rows and table.
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

GiB, MiB = 1 << 30, 1 << 20


def identity(batch: list[Any]) -> list[Any]:
    """The collate function of every timed loader: a batch stays a list of items."""
    return batch


def _item_size(content: Any) -> int:
    if isinstance(content, dict):  # a shard reader's sample: {extension: bytes}
        return sum(len(v) for v in content.values())
    return len(content)


def _release(items: list[Any]) -> None:
    for _, content in items:
        if hasattr(content, "close"):  # a ParallelBuffer
            content.close()


def _loader(dataset: Any, batch_size: int, workers: int, **kwargs: Any) -> Any:
    from torch.utils.data import DataLoader

    if workers:
        kwargs.setdefault("timeout", 600)
    return DataLoader(
        dataset, batch_size=batch_size, num_workers=workers, collate_fn=identity, **kwargs
    )


@dataclass
class Epoch:
    """One timed epoch: seconds from before the dataset was built to its last batch (`seconds`)
    and to its first (`first`), the samples and payload bytes it delivered, and the CPU seconds
    the loading process and its DataLoader workers spent (`cpu`; not the server's)."""

    samples: int
    nbytes: int
    seconds: float
    first: float
    cpu: float

    @property
    def rate(self) -> float:
        return self.samples / self.seconds


def time_epoch(
    make_dataset: Callable[[], Any], workers: int, batch_size: int, limit: int | None = None
) -> Epoch:
    """Build the dataset and read one epoch of it (stopping after `limit` samples if given)
    through a DataLoader with `workers` worker processes, in the order the dataset gives."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    loader = _loader(make_dataset(), batch_size, workers)
    samples = nbytes = 0
    first = 0.0
    it: Iterator[list[Any]] = iter(loader)
    for items in it:
        if not samples:
            first = time.perf_counter() - t0
        samples += len(items)
        nbytes += sum(_item_size(content) for _, content in items)
        _release(items)
        if limit is not None and samples >= limit:
            break
    seconds = time.perf_counter() - t0
    del it, loader  # joins the workers: their CPU time is counted from here on
    return Epoch(samples, nbytes, seconds, first, cpu_seconds() - c0)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# -- the official benchmark's loop and table (spec section 4) -----------------------------------


@dataclass
class BatchRun:
    """Latency (seconds of `next()`) and payload bytes of each batch of one run."""

    seconds: list[float] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)


UPSTREAM_ROWS = (
    "Throughput (GiB/s)",
    "Samples/sec",
    "Total wall time (s)",
    "Batch latency mean (s)",
    "Batch latency med (s)",
    "Batch latency p95 (s)",
    "Time-to-first-batch (s)",
)
_HIGHER_IS_BETTER = ("Throughput (GiB/s)", "Samples/sec")


def time_batches(
    dataset: Any,
    batch_size: int,
    num_batches: int,
    workers: int,
    label: str,
    out: Callable[[str], None] = print,
) -> BatchRun:
    """The official benchmark's run: shuffled with a fixed seed (every run sees the same order),
    only `next()` timed, one line per batch. With `workers`, each worker keeps one batch in
    flight (`prefetch_factor=1`: large objects)."""
    import torch

    extra: dict[str, Any] = {"prefetch_factor": 1} if workers else {}
    loader = _loader(
        dataset,
        batch_size,
        workers,
        shuffle=True,
        generator=torch.Generator().manual_seed(42),
        **extra,
    )
    run = BatchRun()
    it: Iterator[list[Any]] = iter(loader)
    out(f"{label}:")
    for i in range(num_batches):
        t0 = time.monotonic()
        items = next(it)
        dt = time.monotonic() - t0
        nbytes = sum(_item_size(content) for _, content in items)
        _release(items)
        run.seconds.append(dt)
        run.nbytes.append(nbytes)
        out(f"  batch {i + 1}/{num_batches}: {dt:.2f}s  {nbytes / dt / MiB:.0f} MiB/s")
    del it, loader
    return run


def upstream_stats(run: BatchRun, batch_size: int) -> dict[str, float]:
    """The official benchmark's summary of one run, row by row (`UPSTREAM_ROWS`)."""
    lat = run.seconds
    total = sum(lat)
    ordered = sorted(lat)
    values = (
        sum(run.nbytes) / total / GiB,
        len(lat) * batch_size / total,
        total,
        statistics.mean(lat),
        statistics.median(lat),
        ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)],
        lat[0],
    )
    return dict(zip(UPSTREAM_ROWS, values, strict=True))


def render_upstream_table(get: dict[str, float], parallel: dict[str, float]) -> str:
    """The official benchmark's final table: GET vs Parallel, and Parallel's speedup."""
    lines = [f"{'':<22}{'GET':>10}{'Parallel':>10}{'Speedup':>8}", "─" * 58]
    for row in UPSTREAM_ROWS:
        g, p = get[row], parallel[row]
        num, den = (p, g) if row in _HIGHER_IS_BETTER else (g, p)
        speedup = f"{num / den:.1f}x" if den else "n/a"
        lines.append(f"{row:<22}{g:>10.2f}{p:>10.2f}{speedup:>8}")
    return "\n".join(lines)
