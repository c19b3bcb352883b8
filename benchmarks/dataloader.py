#!/usr/bin/env python3
"""DataLoader benchmark: one epoch through our datasets, the official SDK's and plain local files,
side by side in one run.

Starts our server (``LocalServer``, 4 mountpaths under /tmp) and stores the same data twice:

* small samples: 20,000 objects of 10 KiB (``sample-NNNNNN.bin``);
* WebDataset-style shards: the same samples packed into 100 tar shards, each sample a
  ``<key>.bin`` (the 10 KiB) and a ``<key>.cls`` (a label);

and the same files in a local directory. Before each case the files it reads, local and the
server's, are read once untimed, so every case reads from the page cache. Then, with DataLoader
``num_workers`` 0 and 2, batch 32, it reads one epoch through:

* our ``AISMapDataset``, ``AISIterDataset``, ``AISBatchIterDataset`` (GetBatch, 32 objects per
  request) and ``AISParallelMapDataset`` over the small samples, ``AISShardReader`` over the
  shards, each with its defaults; and our opt-in knobs as extra rows marked "(opt-in)":
  ``AISMapDataset(max_concurrency=8)`` (a batch's objects on 8 threads) and
  ``AISIterDataset(prefetch=8)`` (8 objects read ahead);
* the official SDK's same classes (PyPI aistore 2.0.0, its own venv with the system's torch),
  against the same server;
* the local ceiling: a plain torch ``Dataset`` doing ``open().read()`` per file, and
  ``tarfile`` over the local shards (an iterable dataset, shards split across workers).

Each case is timed from before its dataset is built (listing included) to the last batch:
samples/s, and time to first batch (worker start-up included). ``AISParallelMapDataset`` reads
only the first 256 samples of the epoch: the official one forks a process pool per object. Every
round runs each case once, ours and the official one back to back, and the median of the rounds
is shown, so a change in the machine's load hits all of them alike. Every case must deliver
every sample exactly once in count; a case that does not is flagged.

Goals (issue 7): on small samples, >= 2x the official class with the same DataLoader workers;
>= 70% of the local-disk rate.

Usage:
    python3 benchmarks/dataloader.py                 # 3 rounds (~15 min on 2 busy cores)
    python3 benchmarks/dataloader.py --quick         # 2,000 samples, 20 shards, 1 round
    python3 benchmarks/dataloader.py --samples 5000 --rounds 5 --workers 0 2 4
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch.utils.data import Dataset, IterableDataset, get_worker_info

from aistore.pytorch import (
    AISIterDataset,
    AISMapDataset,
    AISParallelMapDataset,
    AISShardReader,
)
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset
from aistore.sdk.client import Client
from aistore.server import LocalServer

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent / "tests" / "compat"))
sys.path.append(str(HERE))
import official_sdk  # noqa: E402
from _loader import Epoch, time_epoch  # noqa: E402

KiB = 1 << 10
OFFICIAL_SCRIPT = (HERE / "_official_dataloader.py").read_text()
GOAL_VS_OFFICIAL = 2.0
GOAL_VS_LOCAL = 0.70
SMALL, SHARDS = "small", "shards"


@dataclass
class Config:
    samples: int = 20_000
    size: int = 10 * KiB
    shards: int = 100
    batch: int = 32
    workers: tuple[int, ...] = (0, 2)
    rounds: int = 3
    knob: int = 8  # max_concurrency / prefetch of the opt-in rows
    parallel_limit: int = 256

    @classmethod
    def quick(cls) -> Config:
        return cls(samples=2_000, shards=20, rounds=1, parallel_limit=64)


# -- the local ceiling ----------------------------------------------------------------------------


class LocalFiles(Dataset[tuple[str, bytes]]):
    """The files of a directory, one `open().read()` per item, in name order."""

    def __init__(self, root: Path) -> None:
        self.paths = sorted(str(p) for p in root.iterdir())

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> tuple[str, bytes]:
        path = self.paths[index]
        with open(path, "rb") as f:
            return path, f.read()


class LocalShards(IterableDataset[tuple[str, dict[str, bytes]]]):
    """The tar shards of a directory read with `tarfile`, one `(key, {extension: bytes})` per
    sample; DataLoader workers take every W-th shard."""

    def __init__(self, root: Path) -> None:
        self.paths = sorted(str(p) for p in root.iterdir())

    def __iter__(self) -> Iterator[tuple[str, dict[str, bytes]]]:
        info = get_worker_info()
        paths = self.paths[info.id :: info.num_workers] if info else self.paths
        for path in paths:
            key, sample = "", {}
            with tarfile.open(path, "r:") as tar:
                for member in tar:
                    f = tar.extractfile(member)
                    if f is None:
                        continue
                    stem, ext = member.name.rsplit("/", 1)[-1].split(".", 1)
                    if stem != key and sample:
                        yield key, sample
                        sample = {}
                    key, sample[ext] = stem, f.read()
            if sample:
                yield key, sample


# -- cases ----------------------------------------------------------------------------------------


@dataclass
class Case:
    """One row: a dataset over one kind of data at one DataLoader worker count. `ours` times it
    here; `official` names the official class to time in its venv (None: no official row)."""

    data: str
    label: str
    workers: int
    expected: int
    ours: Callable[[], Epoch]
    official: str | None = None
    limit: int | None = None
    local: bool = False
    opt_in: bool = False


@dataclass
class Cell:
    rates: list[float] = field(default_factory=list)
    firsts: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)  # per sample
    error: str = ""

    def add(self, epoch: Epoch) -> None:
        self.rates.append(epoch.rate)
        self.firsts.append(epoch.first)
        self.cpu_us.append(epoch.cpu / epoch.samples * 1e6)

    @property
    def rate(self) -> float | None:
        return statistics.median(self.rates) if self.rates else None

    @property
    def first(self) -> float | None:
        return statistics.median(self.firsts) if self.firsts else None

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpu_us) if self.cpu_us else None


class Bench:
    def __init__(self, srv: LocalServer, cfg: Config, scratch: Path) -> None:
        self.srv = srv
        self.cfg = cfg
        self.small_dir = scratch / "local" / SMALL
        self.shard_dir = scratch / "local" / SHARDS
        self.notes: list[str] = []
        self.official_error: str | None = None

    def load(self) -> None:
        """Write the samples and shards locally and PUT the same bytes as objects."""
        cfg = self.cfg
        self.small_dir.mkdir(parents=True)
        self.shard_dir.mkdir(parents=True)
        client = self.srv.client()
        small = client.bucket("dl-small").create(exist_ok=True)
        shards = client.bucket("dl-shards").create(exist_ok=True)
        per_shard = -(-cfg.samples // cfg.shards)

        def put_small(indices: range) -> None:
            for i in indices:
                name = f"sample-{i:06d}.bin"
                data = os.urandom(cfg.size)
                (self.small_dir / name).write_bytes(data)
                small.object(name).get_writer().put_content(data)

        def put_shard(j: int) -> None:
            path = self.shard_dir / f"shard-{j:04d}.tar"
            with tarfile.open(path, "w") as tar:
                for i in range(j * per_shard, min(cfg.samples, (j + 1) * per_shard)):
                    key = f"sample-{i:06d}"
                    files = {
                        "bin": (self.small_dir / f"{key}.bin").read_bytes(),
                        "cls": str(i % 1000).encode(),
                    }
                    for ext, data in files.items():
                        info = tarfile.TarInfo(f"{key}.{ext}")
                        info.size, info.mtime = len(data), int(time.time())
                        tar.addfile(info, io.BytesIO(data))
            shards.object(path.name).get_writer().put_file(str(path))

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(put_small, [range(k, cfg.samples, 4) for k in range(4)]))
            list(pool.map(put_shard, range(-(-cfg.samples // per_shard))))

    def cases(self) -> list[Case]:
        cfg, ep = self.cfg, self.srv.endpoint
        n = cfg.samples

        def bucket(name: str) -> Any:
            return Client(ep).bucket(name)  # a fresh client per run, as the official side

        def epoch(make: Callable[[], Any], w: int, limit: int | None = None) -> Callable[[], Epoch]:
            return lambda: time_epoch(make, w, cfg.batch, limit)

        def batch_dataset() -> AISBatchIterDataset:
            client = Client(ep)
            return AISBatchIterDataset(client.bucket("dl-small"), client)

        k, lim = cfg.knob, min(cfg.parallel_limit, n)
        cases: list[Case] = []
        for w in cfg.workers:
            cases += [
                Case(SMALL, "local files, open().read()", w, n,
                     epoch(lambda: LocalFiles(self.small_dir), w), local=True),
                Case(SMALL, "AISMapDataset", w, n,
                     epoch(lambda: AISMapDataset(bucket("dl-small")), w), "map"),
                Case(SMALL, f"AISMapDataset max_concurrency={k}", w, n,
                     epoch(lambda: AISMapDataset(bucket("dl-small"), max_concurrency=k), w),
                     opt_in=True),
                Case(SMALL, "AISIterDataset", w, n,
                     epoch(lambda: AISIterDataset(bucket("dl-small")), w), "iter"),
                Case(SMALL, f"AISIterDataset prefetch={k}", w, n,
                     epoch(lambda: AISIterDataset(bucket("dl-small"), prefetch=k), w),
                     opt_in=True),
                Case(SMALL, "AISBatchIterDataset", w, n, epoch(batch_dataset, w), "batch"),
                Case(SMALL, f"AISParallelMapDataset (first {lim})", w, lim,
                     epoch(lambda: AISParallelMapDataset(bucket("dl-small")), w, lim),
                     "parallel", limit=lim),
                Case(SHARDS, "local tar files, tarfile", w, n,
                     epoch(lambda: LocalShards(self.shard_dir), w), local=True),
                Case(SHARDS, "AISShardReader", w, n,
                     epoch(lambda: AISShardReader(bucket("dl-shards")), w), "shard"),
            ]  # fmt: skip
        return cases

    def official(self, case: Case) -> Epoch | None:
        if self.official_error is not None or case.official is None:
            return None
        bucket = "dl-shards" if case.data == SHARDS else "dl-small"
        job = {
            "mode": "epoch",
            "dataset": case.official,
            "bucket": bucket,
            "workers": case.workers,
            "batch_size": self.cfg.batch,
            "limit": case.limit,
        }
        try:
            out = official_sdk.run_script(
                OFFICIAL_SCRIPT, self.srv.endpoint, [str(HERE), json.dumps(job)], timeout=1800,
                with_torch=True,
            )  # fmt: skip
        except official_sdk.VenvError as e:  # incl. PyPIUnreachable
            self.official_error = str(e).splitlines()[0]
            self.notes.append(f"official SDK not run: {self.official_error}")
            return None
        return Epoch(**out)

    def run(self, progress: Callable[[str], None]) -> list[tuple[Case, Cell, Cell]]:
        cases = self.cases()
        cells = [(case, Cell(), Cell()) for case in cases]
        for r in range(self.cfg.rounds):
            for case, ours, official in cells:
                progress(
                    f"round {r + 1}/{self.cfg.rounds}: {case.data} {case.label} w={case.workers}"
                )
                self._record(case, ours, case.ours, "")
                if case.official is not None and not official.error:
                    self._record(case, official, lambda c=case: self.official(c), "official ")
        return cells

    def warm(self, data: str) -> None:
        """Read the case's files once, untimed, the local copy and the server's: every case
        reads from the page cache, even if the kernel evicted files since their last read
        (in one full run, before this, local reads were 3-5x slower at 3x the CPU per file,
        and our shard reader a third slower at the same CPU per sample)."""
        local, bucket = (
            (self.shard_dir, "dl-shards") if data == SHARDS else (self.small_dir, "dl-small")
        )
        server = [mp / "ais" / bucket for mp in self.srv.mountpaths]
        for roots in ([local], server):  # a mountpath may hold none of a few objects
            files = [p for root in roots for p in root.rglob("*") if p.is_file()]
            if not files:
                raise RuntimeError(f"no files to warm under {', '.join(map(str, roots))}")
            for path in files:
                path.read_bytes()

    def _record(self, case: Case, cell: Cell, run: Callable[[], Epoch | None], who: str) -> None:
        self.warm(case.data)
        try:
            epoch = run()
        except official_sdk.ScriptError as e:
            last = [ln for ln in e.stderr.strip().splitlines() if ln.strip()][-1:] or [str(e)]
            cell.error = last[0][:160]
            return
        if epoch is None:
            return
        want = case.limit or case.expected
        if case.limit is None and epoch.samples != want or case.limit and epoch.samples < want:
            self.notes.append(
                f"{who}{case.label} (workers={case.workers}) delivered {epoch.samples} samples, "
                f"expected {want}"
            )
        cell.add(epoch)


# -- the table ------------------------------------------------------------------------------------


def _num(v: float | None, width: int, spec: str) -> str:
    return (f"{v:{spec}}" if v is not None else "n/a").rjust(width)


def render(rows: list[tuple[Case, Cell, Cell]]) -> str:
    local = {(c.data, c.workers): o.rate for c, o, _ in rows if c.local}
    official_default = {(c.data, c.label, c.workers): off.rate for c, _, off in rows if c.official}
    cols = f"{'samples/s':>10}{'first s':>8}{'CPU us':>7}"
    head = (
        f"{'data':<7}{'workers':>7}  {'dataset':<42}{cols} │{cols} │{'vs official':>12}"
        f"{'of local':>9}"
    )
    lines = [f"{'':<58}{'ours':^25} │{'official':^25} │", head, "─" * len(head)]
    marks: list[str] = []
    blank = " " * 25
    for case, ours, off in rows:
        label = case.label + (" (opt-in)" if case.opt_in else "")
        if case.local:
            label = case.label + " [ceiling]"
        off_rate = off.rate
        if case.opt_in:  # compared with the official class's defaults
            off_rate = official_default.get((case.data, case.label.split()[0], case.workers))
        vs = f"{ours.rate / off_rate:.1f}x" if ours.rate and off_rate and not case.local else ""
        ceiling = local.get((case.data, case.workers))
        share = f"{ours.rate / ceiling:.0%}" if ours.rate and ceiling else ""
        if off.error:
            marks.append(
                f"[{len(marks) + 1}] official {case.label}, workers={case.workers}: {off.error}"
            )
            off_cells = f"{f'n/a [{len(marks)}]':>10}{'':>15}"
        elif case.official is None:
            off_cells = blank
        else:
            off_cells = _cells(off)
        lines.append(
            f"{case.data:<7}{case.workers:>7}  {label:<42}{_cells(ours)} │{off_cells} │"
            f"{vs:>12}{share:>9}"
        )
    return "\n".join([*lines, *marks])


def _cells(cell: Cell) -> str:
    return _num(cell.rate, 10, ",.0f") + _num(cell.first, 8, ".2f") + _num(cell.cpu, 7, ",.0f")


def goals(rows: list[tuple[Case, Cell, Cell]]) -> list[str]:
    out = []
    ratios = [
        (c, o.rate / off.rate)
        for c, o, off in rows
        if c.data == SMALL and c.official and not c.limit and o.rate and off.rate
    ]
    if ratios:
        worst = min(ratios, key=lambda x: x[1])
        met = "MET" if worst[1] >= GOAL_VS_OFFICIAL else "NOT MET"
        per = ", ".join(f"{c.label} w={c.workers}: {r:.1f}x" for c, r in ratios)
        out.append(
            f"small samples, defaults vs the official class: worst {worst[1]:.1f}x "
            f"[goal >= {GOAL_VS_OFFICIAL:.0f}x: {met}]  ({per})"
        )
    for data in (SMALL, SHARDS):
        for w in sorted({c.workers for c, _, _ in rows}):
            group = [(c, o) for c, o, _ in rows if c.data == data and c.workers == w]
            ceiling = next((o.rate for c, o in group if c.local), None)
            ours = [(c, o.rate) for c, o in group if not c.local and not c.limit and o.rate]
            if not ceiling or not ours:
                continue
            best = max(ours, key=lambda x: x[1])
            met = "MET" if best[1] >= GOAL_VS_LOCAL * ceiling else "NOT MET"
            out.append(
                f"{data}, workers={w}: best ours {best[0].label} {best[1]:,.0f}/s = "
                f"{best[1] / ceiling:.0%} of local {ceiling:,.0f}/s "
                f"[goal >= {GOAL_VS_LOCAL:.0%}: {met}]"
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 samples, 20 shards, 1 round")
    ap.add_argument("--samples", type=int, help="small samples (and samples in the shards)")
    ap.add_argument("--shards", type=int, help="tar shards the samples are packed into")
    ap.add_argument("--rounds", type=int, help="rounds per case (the median is shown)")
    ap.add_argument("--workers", type=int, nargs="+", help="DataLoader num_workers values")
    args = ap.parse_args()
    cfg = Config.quick() if args.quick else Config()
    for name in ("samples", "shards", "rounds"):
        if getattr(args, name):
            setattr(cfg, name, getattr(args, name))
    if args.workers:
        cfg.workers = tuple(args.workers)
    started = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f}s] {msg}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="dl-bench-") as root:
        scratch = Path(root)
        with LocalServer(mountpaths=[scratch / f"mp{i}" for i in range(4)]) as srv:
            bench = Bench(srv, cfg, scratch)
            progress(f"loading {cfg.samples:,} samples and {cfg.shards} shards")
            bench.load()
            rows = bench.run(progress)
    load_after = os.getloadavg()
    per_shard = -(-cfg.samples // cfg.shards)
    print(
        f"DataLoader, one epoch: {cfg.samples:,} samples of {cfg.size // KiB} KiB (one object "
        f"each), and the same packed into {cfg.shards} tar shards of {per_shard} samples "
        f"(.bin + .cls); batch {cfg.batch}; samples/s and time to first batch from before the "
        f"dataset is built; median of {cfg.rounds} round(s); our server, 4 mountpaths, page cache"
    )
    print(render(rows))
    print(
        "first s: seconds to the first batch; CPU us: CPU microseconds per sample of the loading "
        "process and its DataLoader workers (not the server's); vs official: our row / the "
        "official class's defaults, same workers; of local: our row / the local ceiling, same "
        "data and workers"
    )
    print(
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
        f"(1 min), on {os.cpu_count()} CPUs"
    )
    print("Goals:")
    print("\n".join(f"  {g}" for g in goals(rows)))
    for note in bench.notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
