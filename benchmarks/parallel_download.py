#!/usr/bin/env python3
"""Parallel download benchmark: our client and its peers on one large object, in one run.

Starts our server (``LocalServer``, 4 mountpaths under /tmp), stores a 2 GiB object twice (in a
bucket that chunks it at 64 MiB, and monolithic) and measures, per object:

* single-stream GET: our ``get_reader().read_all()``, the official SDK's, ``curl -o /dev/null``;
* streaming parallel (iterate ``get_reader(num_workers=W)``) and ``read_all()`` into a
  ParallelBuffer, at W = 1/2/4/8/16, ours and the official SDK's (2.0.0, own venv). Ours is
  shown warm (buffer memory reused from the pool, the steady state of a loader) and cold (fresh
  memory: the first read of a size); the official SDK allocates fresh /dev/shm every time;

in GB/s and as a fraction of the loopback TCP bandwidth (a socket pump between two processes,
measured as one more case of every round; a second pump, whose receiver never sleeps, is shown
too: on a VM it reaches about twice as much). Cases take turns within each round, the two
objects' alternating, and the median of the rounds is shown, so a change in the machine's load
hits all of them alike. Then what shared
memory was left: new /dev/shm entries and our mappings. Finally the DataLoader tables of the
official benchmark (python/tests/perf/pytorch/parallel_download.py), run by
benchmarks/parallel_dataloader.py on the same server: AISMapDataset ("GET") vs
AISParallelMapDataset ("Parallel") over a bucket of large chunked objects, ours with DataLoader
num_workers=0 and ``--dl-workers`` (2), the official SDK with num_workers=0.

GB/s = 10^9 bytes/s; GiB/s (DataLoader table, as upstream) = 2^30 bytes/s.

Usage:
    python3 benchmarks/parallel_download.py              # full run (~10 min on 2 cores)
    python3 benchmarks/parallel_download.py --quick      # 256 MiB object, W=1/4, one round
    python3 benchmarks/parallel_download.py --no-dataloader
Environment (DataLoader part, as upstream): AIS_BUCKET (bench), AIS_PREFIX (""), AIS_WORKERS
(range workers, 16), BATCH_SIZE (2), NUM_BATCHES (all).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aistore._internal import shm
from aistore.sdk.bucket import Bucket
from aistore.sdk.obj.content_iterator import ParallelContentIterProvider
from aistore.sdk.obj.object import Object
from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "compat"))
sys.path.append(str(REPO / "benchmarks"))  # not on sys.path under PYTHONSAFEPATH
import official_sdk  # noqa: E402
import parallel_dataloader  # noqa: E402
from _loopback import loopback_seconds  # noqa: E402

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
OFFICIAL_SCRIPT = (Path(__file__).parent / "_official_parallel.py").read_text()
GOAL_VS_OFFICIAL = 3.0
GOAL_VS_LOOPBACK = 0.85
GOAL_STREAM_VS_READ_ALL = 0.85


@dataclass
class Config:
    size: int = 2 * GiB
    chunk: int = 64 * MiB
    workers: tuple[int, ...] = (1, 2, 4, 8, 16)
    rounds: int = 3
    ours_only: bool = False  # skip the official SDK and curl
    loader: parallel_dataloader.Settings = field(default_factory=parallel_dataloader.Settings)

    @classmethod
    def quick(cls) -> Config:
        loader = parallel_dataloader.Settings(
            objects=4, object_size=64 * MiB, chunk=16 * MiB, rounds=1
        )
        return cls(size=256 * MiB, chunk=16 * MiB, workers=(1, 4), rounds=1, loader=loader)


# -- measurements --------------------------------------------------------------------------------


def loopback_pump(total: int, spin: bool = False) -> Sample:
    """The loopback ceiling (see _loopback), with the CPU it cost both ends."""
    c0 = cpu_seconds() + cpu_seconds(resource.RUSAGE_CHILDREN)
    elapsed = loopback_seconds(total, spin=spin)
    return Sample(elapsed, cpu_seconds() + cpu_seconds(resource.RUSAGE_CHILDREN) - c0)


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


@dataclass
class Sample:
    """One run of a case: wall seconds and the client's CPU seconds (all its threads and
    processes)."""

    seconds: float
    cpu: float


def timed(fn: Callable[[], Any]) -> Callable[[], Sample]:
    def case() -> Sample:
        c0, t0 = cpu_seconds(), time.perf_counter()
        fn()
        return Sample(time.perf_counter() - t0, cpu_seconds() - c0)

    return case


def process_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Cell:
    """Each round of one case (empty when it could not run): wall seconds, client and server
    CPU seconds."""

    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)

    def gbps(self, size: int) -> float | None:
        return size / statistics.median(self.seconds) / 1e9 if self.seconds else None

    def cpu_per_gib(self, size: int) -> tuple[float, float] | None:
        if not self.cpu:
            return None
        return statistics.median(self.cpu) * GiB / size, statistics.median(
            self.server_cpu
        ) * GiB / size


class Bench:
    def __init__(self, srv: LocalServer, cfg: Config) -> None:
        self.srv = srv
        self.cfg = cfg
        self.client = srv.client()
        self.official_error: str | None = None
        self.official_shm_left: set[str] = set()
        self.notes: list[str] = []

    # objects

    def load(self, scratch: Path) -> dict[str, Object]:
        path = scratch / "big.bin"
        rng = random.Random(7)
        block = rng.randbytes(64 * MiB)
        with open(path, "wb") as f:
            left = self.cfg.size
            while left:
                f.write(block[: min(left, len(block))])
                left -= min(left, len(block))
        chunked = self._bucket("pd-chunked", self.cfg.chunk)
        mono = self._bucket("pd-mono", None)
        objs = {
            f"chunked {self.cfg.chunk // MiB} MiB": chunked.object("big"),
            "monolithic": mono.object("big"),
        }
        for obj in objs.values():
            obj.get_writer().put_file(str(path))
        path.unlink()
        return objs

    def _bucket(self, name: str, chunk: int | None) -> Bucket:
        bucket = self.client.bucket(name).create(exist_ok=True)
        if chunk is not None:
            value = {"chunks": {"objsize_limit": "1MiB", "chunk_size": f"{chunk // MiB}MiB"}}
            bucket.make_request("PATCH", "set-bprops", value=value)
        return bucket

    # one case of each client

    @staticmethod
    def _provider(obj: Object, workers: int) -> ParallelContentIterProvider:
        if workers >= 2:
            provider = obj.get_reader(num_workers=workers)._content_provider
            assert isinstance(provider, ParallelContentIterProvider)
            return provider
        return ParallelContentIterProvider(obj.get_reader()._object_client, None, 1)

    def ours(self, obj: Object, mode: str, workers: int) -> Callable[[], Sample]:
        size = self.cfg.size

        def single() -> None:
            assert len(obj.get_reader().read_all()) == size

        def stream() -> None:
            assert sum(len(c) for c in self._provider(obj, workers).create_iter()) == size

        def read_all() -> None:
            with self._provider(obj, workers).read_all() as buf:
                assert len(buf) == size

        if mode == "read_all cold":

            def cold() -> Sample:
                shm.pool().clear()
                gc.collect()
                return timed(read_all)()

            return cold
        return timed({"single": single, "stream": stream, "read_all": read_all}[mode])

    def official(self, obj: Object, mode: str, workers: int) -> Callable[[], Sample | None]:
        def case() -> Sample | None:
            if self.official_error is not None:
                return None
            args = (obj.bucket_name, obj.name, mode, str(workers), "1")
            try:
                out = official_sdk.run_script(OFFICIAL_SCRIPT, self.srv.endpoint, args, timeout=900)
            except official_sdk.VenvError as e:  # incl. PyPIUnreachable
                self.official_error = str(e).splitlines()[0]
                self.notes.append(f"official SDK not run: {self.official_error}")
                return None
            except official_sdk.ScriptError as e:
                self.notes.append(f"official {mode} W={workers} failed: {str(e).splitlines()[0]}")
                return None
            self.official_shm_left |= set(out["shm_left"])
            assert out["size"] == self.cfg.size
            return Sample(float(out["seconds"][0]), float(out["cpu"][0]))

        return case

    def curl(self, obj: Object) -> Callable[[], Sample]:
        url = obj.get_url()

        def case() -> Sample:
            c0 = cpu_seconds(resource.RUSAGE_CHILDREN)
            res = subprocess.run(
                ["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{time_total}", url],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            size, secs = res.stdout.split()
            assert int(size) == self.cfg.size
            return Sample(float(secs), cpu_seconds(resource.RUSAGE_CHILDREN) - c0)

        return case

    def cases(self, obj: Object) -> dict[tuple[str, str, int], Callable[[], Sample | None]]:
        """Every case of one object, keyed (mode, client, workers); the peers' are left out
        under --ours-only."""
        peers = not self.cfg.ours_only
        cases: dict[tuple[str, str, int], Callable[[], Sample | None]] = {
            ("single GET", "ours", 1): self.ours(obj, "single", 1),
        }
        if peers:
            cases[("single GET", "official", 1)] = self.official(obj, "single", 1)
        if peers and shutil.which("curl"):
            cases[("single GET", "curl", 1)] = self.curl(obj)
        for w in self.cfg.workers:
            cases[("stream", "ours", w)] = self.ours(obj, "stream", w)
            if peers:
                cases[("stream", "official", w)] = self.official(obj, "stream", w)
            cases[("read_all", "ours", w)] = self.ours(obj, "read_all", w)
            cases[("read_all", "ours cold", w)] = self.ours(obj, "read_all cold", w)
            if peers:
                cases[("read_all", "official", w)] = self.official(obj, "read_all", w)
        return cases

    def measure(
        self, objs: dict[str, Object]
    ) -> tuple[dict[str, dict[tuple[str, str, int], Cell]], dict[tuple[str, str, int], Cell]]:
        """All cases of all objects, and the loopback pumps: every round runs each case once, the
        objects' cases alternating (measured one object after the other, a rise in the
        machine's load made one object look 1.7x slower than the other)."""
        per_obj = {label: self.cases(obj) for label, obj in objs.items()}
        turns: list[tuple[str, tuple[str, str, int], Callable[[], Sample | None]]] = [
            (label, key, per_obj[label][key])
            for key in next(iter(per_obj.values()))
            for label in per_obj
        ]
        turns.append(("", LOOPBACK, lambda: loopback_pump(self.cfg.size)))
        turns.append(("", LOOPBACK_SPIN, lambda: loopback_pump(self.cfg.size, spin=True)))
        cells = {label: {key: Cell() for key in cases} for label, cases in per_obj.items()}
        pumps = {LOOPBACK: Cell(), LOOPBACK_SPIN: Cell()}
        for obj in objs.values():
            self.ours(obj, "read_all", 2)()  # warm: the pool holds memory of this size from now on
        pid = self.srv.pid
        assert pid is not None
        for r in range(self.cfg.rounds):
            for label, key, case in turns:
                s0 = process_cpu_seconds(pid)
                sample = case()
                if sample is not None:
                    cell = cells[label][key] if label else pumps[key]
                    cell.seconds.append(sample.seconds)
                    cell.cpu.append(sample.cpu)
                    cell.server_cpu.append(process_cpu_seconds(pid) - s0)
            print(f"  round {r + 1}/{self.cfg.rounds} done", file=sys.stderr, flush=True)
        shm.pool().clear()
        return cells, pumps


# -- the download table --------------------------------------------------------------------------

LOOPBACK = ("loopback", "socket pump", 1)
LOOPBACK_SPIN = ("loopback", "socket pump, receiver never sleeps", 1)
MODES = ["single GET", "stream", "read_all"]
CLIENTS = {
    "single GET": ["ours", "official", "curl"],
    "stream": ["ours", "official"],
    "read_all": ["ours", "ours cold", "official"],
}


def render_download(
    results: dict[str, dict[tuple[str, str, int], Cell]],
    cfg: Config,
    loopback: float,
    loopback_spin: float,
) -> str:
    head = f"{'object':<18}{'mode':<12}{'client':<11}" + "".join(
        f"{f'W={w}':>14}" for w in cfg.workers
    )
    lines = [
        f"Parallel download of a {cfg.size / GiB:.2f} GiB object, our server (4 mountpaths): GB/s "
        f"(% of loopback {loopback:.2f} GB/s; a receiver that never sleeps: {loopback_spin:.2f}), "
        f"median of {cfg.rounds} round(s)",
        head,
        "─" * len(head),
    ]
    for obj_label, cells in results.items():
        first_obj = True
        for mode in MODES:
            first_mode = True
            for client in CLIENTS[mode]:
                row = ""
                for w in cfg.workers:
                    cell = cells.get((mode, client, w if mode != "single GET" else 1))
                    if mode == "single GET" and w != cfg.workers[0]:
                        row += f"{'':>14}"
                        continue
                    g = cell.gbps(cfg.size) if cell else None
                    row += f"{'n/a':>14}" if g is None else f"{g:6.2f} ({g / loopback:4.0%})"
                lines.append(
                    f"{obj_label if first_obj else '':<18}{mode if first_mode else '':<12}"
                    f"{client:<11}{row}"
                )
                first_obj = first_mode = False
        lines.append("")
    return "\n".join(lines)


def render_cpu(results: dict[str, dict[tuple[str, str, int], Cell]], cfg: Config) -> str:
    """Client / server CPU seconds per GiB moved: what each client costs, whatever the load."""
    head = f"{'object':<18}{'mode':<12}{'client':<11}" + "".join(
        f"{f'W={w}':>14}" for w in cfg.workers
    )
    lines = [
        "CPU seconds per GiB moved, client/server (lower is better; unlike GB/s, barely "
        "affected by other load on the machine)",
        head,
        "─" * len(head),
    ]
    for obj_label, cells in results.items():
        first_obj = True
        for mode in MODES:
            first_mode = True
            for client in CLIENTS[mode]:
                row = ""
                for w in cfg.workers:
                    if mode == "single GET" and w != cfg.workers[0]:
                        row += f"{'':>14}"
                        continue
                    cell = cells.get((mode, client, w if mode != "single GET" else 1))
                    cpu = cell.cpu_per_gib(cfg.size) if cell else None
                    row += f"{'n/a':>14}" if cpu is None else f"{cpu[0]:6.2f}/{cpu[1]:<5.2f}  "
                lines.append(
                    f"{obj_label if first_obj else '':<18}{mode if first_mode else '':<12}"
                    f"{client:<11}{row}"
                )
                first_obj = first_mode = False
        lines.append("")
    return "\n".join(lines)


def goals(
    results: dict[str, dict[tuple[str, str, int], Cell]],
    cfg: Config,
    loopback: float,
    loopback_spin: float,
) -> list[str]:
    """Goal lines; the loopback goal is judged against the conventional pump (a receiver that
    sleeps when the socket is empty), and the share of the never-sleeping pump is shown too."""
    out = []
    for label, cells in results.items():

        def g(
            mode: str, client: str, w: int, cells: dict[tuple[str, str, int], Cell] = cells
        ) -> float | None:
            cell = cells.get((mode, client, w))
            return cell.gbps(cfg.size) if cell else None

        vs_off = [
            (w, a / b)
            for w in cfg.workers
            if (a := g("read_all", "ours", w)) and (b := g("read_all", "official", w))
        ]
        vs_off_cold = [
            (w, a / b)
            for w in cfg.workers
            if (a := g("read_all", "ours cold", w)) and (b := g("read_all", "official", w))
        ]
        best = max((g("read_all", "ours", w) or 0.0) for w in cfg.workers)
        stream_ratio = [
            (w, a / b)
            for w in cfg.workers
            if (a := g("stream", "ours", w)) and (b := g("read_all", "ours", w))
        ]
        out.append(f"{label}:")
        if vs_off:
            worst = min(r for _, r in vs_off)
            peak = max(r for _, r in vs_off)
            cold = min(r for _, r in vs_off_cold) if vs_off_cold else float("nan")
            verdict = "MET" if worst >= GOAL_VS_OFFICIAL else "NOT MET"
            out.append(
                f"  read_all vs official, same W: {worst:.1f}x..{peak:.1f}x warm, >= {cold:.1f}x "
                f"cold  [goal >= {GOAL_VS_OFFICIAL:.0f}x: {verdict}]"
            )
        verdict = "MET" if best >= GOAL_VS_LOOPBACK * loopback else "NOT MET"
        out.append(
            f"  best read_all: {best:.2f} GB/s = {best / loopback:.0%} of loopback  "
            f"[goal >= {GOAL_VS_LOOPBACK:.0%}: {verdict}]; {best / loopback_spin:.0%} of the "
            f"never-sleeping pump's {loopback_spin:.2f} GB/s"
        )
        if stream_ratio:
            worst_s = min(r for _, r in stream_ratio)
            at = [w for w, r in stream_ratio if r == worst_s][0]
            verdict = "MET" if worst_s >= GOAL_STREAM_VS_READ_ALL else "NOT MET"
            per_w = ", ".join(f"W={w}: {r:.0%}" for w, r in stream_ratio)
            out.append(
                f"  stream / read_all: worst {worst_s:.0%} (W={at}) [{per_w}]  "
                f"[goal within 15%: {verdict}]"
            )
    return out


# -- main -------------------------------------------------------------------------------------


def our_mappings() -> list[str]:
    with open("/proc/self/maps") as f:
        return [line.split()[-2] for line in f if "memfd:aistore" in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small object, few cases")
    parser.add_argument(
        "--dl-workers", type=int, default=2, help="DataLoader workers of our second loader run"
    )
    parser.add_argument("--no-dataloader", action="store_true", help="skip the DataLoader table")
    parser.add_argument(
        "--ours-only", action="store_true", help="skip the official SDK and curl cases"
    )
    parser.add_argument(
        "--json", type=Path, help="also write the download cases' figures here (no DataLoader)"
    )
    args = parser.parse_args()
    cfg = Config.quick() if args.quick else Config()
    cfg.ours_only = args.ours_only
    cfg.loader.dl_workers = args.dl_workers
    cfg.loader.from_env()
    if not args.no_dataloader:
        parallel_dataloader.check_memory(cfg.loader)
    shm_before = set(os.listdir("/dev/shm"))
    scratch = Path(tempfile.mkdtemp(prefix="pd-bench-"))
    try:
        with LocalServer(mountpaths=[scratch / f"mp{i}" for i in range(4)]) as srv:
            bench = Bench(srv, cfg)
            print(f"loading {cfg.size / GiB:.2f} GiB objects...", file=sys.stderr, flush=True)
            objs = bench.load(scratch)
            print(f"measuring {', '.join(objs)}...", file=sys.stderr, flush=True)
            results, pumps = bench.measure(objs)
            pump = pumps[LOOPBACK]
            loopback_gbps = cfg.size / statistics.median(pump.seconds) / 1e9
            spin_gbps = cfg.size / statistics.median(pumps[LOOPBACK_SPIN].seconds) / 1e9
            pump_cpu = statistics.median(pump.cpu) * GiB / cfg.size
            load = os.getloadavg()
            download = render_download(results, cfg, loopback_gbps, spin_gbps)
            cpu_table = render_cpu(results, cfg)
            goal_lines = goals(results, cfg, loopback_gbps, spin_gbps)
            loader = ""
            if not args.no_dataloader:
                bucket = parallel_dataloader.load_bucket(bench.client, cfg.loader)
                loader = parallel_dataloader.measure(srv.endpoint, bucket, cfg.loader)
            notes = bench.notes
            official_left = bench.official_shm_left
            if args.json:
                figures = {
                    f"{label}: {mode} {client} W={w}": cell.gbps(cfg.size)
                    for label, cells in results.items()
                    for (mode, client, w), cell in cells.items()
                }
                figures["loopback"] = loopback_gbps
                cpu = {
                    f"{label}: {mode} {client} W={w}": per_gib
                    for label, cells in results.items()
                    for (mode, client, w), cell in cells.items()
                    if (per_gib := cell.cpu_per_gib(cfg.size)) is not None
                }
                doc = {"unit": "GB/s", "figures": figures, "cpu_s_per_gib": cpu}
                args.json.write_text(json.dumps(doc, indent=2))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    gc.collect()
    shm.pool().clear()
    ours_left = sorted(
        n for n in set(os.listdir("/dev/shm")) - shm_before if n.startswith("aistore")
    )
    print()
    print(download)
    print(
        f"(load average at the end of the download cases: {load[0]:.1f} {load[1]:.1f} "
        f"{load[2]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(cpu_table)
    print(f"(the loopback pump itself: {pump_cpu:.2f} CPU s/GiB, sender and receiver)")
    print("Goals:")
    print("\n".join(goal_lines))
    print(
        f"Shared memory left after the run: ours: /dev/shm {len(ours_left)} entries, "
        f"{len(our_mappings())} mappings in this process; official SDK: /dev/shm "
        f"{len(official_left)} entries {sorted(official_left)[:5]}"
    )
    for note in notes:
        print(f"note: {note}")
    if loader:
        print()
        print(loader)


if __name__ == "__main__":
    main()
