#!/usr/bin/env python3
"""GetBatch benchmark: many small objects in one ordered archive vs one GET per object, and our
client vs the official SDK's Batch API, against our server, in one run.

For 10 KiB, 100 KiB and 1 MiB objects and batches of 100 / 1000 / 10000 objects it measures
objects/s and MB/s of:

* GetBatch with our client (streaming .tar, `Client.batch(...).get()`, every byte read);
* one GET per object with our client, sequentially (`get_reader().read_all()`); its rate does
  not depend on the batch size, so it is measured once per object size;
* GetBatch with the official SDK (aistore==2.0.0 from PyPI, in its own venv, same server).

A round fetches max(batch, ~256 MB) worth of items as consecutive batches over a set of distinct
objects (≤ 512 MiB per size, so the page cache holds them all; larger rounds repeat names).
Cases take turns within a round and the median of the rounds is reported, so a change in the
machine's load hits all clients alike. MB/s are 10^6 bytes/s of object data; "of loopback" is
GetBatch's MB/s as a fraction of a single loopback TCP stream measured in the same run. "cpu
us/obj" is CPU time per object (user + system, medians) of the client process and of the
server, for GetBatch with our client and with the official one: unlike objects/s it hardly
depends on what else runs on the machine. The load average is printed before and after.

Goals (issue #5): GetBatch ≥ 20x the per-object GETs at 10 KiB, and ≥ 3x the official SDK's
batch throughput.

Usage:
    python3 benchmarks/getbatch.py            # 3 rounds (~15 min on 2 cores)
    python3 benchmarks/getbatch.py --quick    # 1 round, smaller rounds (~3 min)
    python3 benchmarks/getbatch.py --json out.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from aistore.server import LocalServer

sys.path.append(str(Path(__file__).resolve().parent))
from core import loopback_seconds  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "compat"))
import official_sdk  # noqa: E402

KiB, MiB = 1 << 10, 1 << 20
SIZES = [10 * KiB, 100 * KiB, MiB]
BATCHES = [100, 1000, 10_000]
GOAL_VS_GET = 20.0  # at 10 KiB
GOAL_VS_OFFICIAL = 3.0
OFFICIAL_SCRIPT = (Path(__file__).parent / "_official_getbatch.py").read_text()


@dataclass
class Config:
    reps: int = 3
    round_bytes: int = 256 * MiB  # data per round of a case (at least one batch)
    distinct_bytes: int = 512 * MiB  # distinct objects per size
    max_distinct: int = 20_000
    get_seconds: float = 2.0  # per-object GETs per round
    ours_only: bool = False  # skip the official SDK's batch

    @classmethod
    def quick(cls) -> Config:
        return cls(reps=1, round_bytes=64 * MiB, distinct_bytes=128 * MiB, get_seconds=1.0)


@dataclass
class Rate:
    """One round of one client: objects/s and CPU microseconds per object."""

    per_s: float
    client_us: float
    server_us: float


@dataclass
class Row:
    size: int
    batch: int
    ours: float | None = None  # objects/s
    per_get: float | None = None
    official: float | None = None
    ours_cpu: tuple[float, float] | None = None  # (client, server) CPU us per object
    official_cpu: tuple[float, float] | None = None
    goals: list[str] = field(default_factory=list)


def _label(size: int) -> str:
    return f"{size // MiB} MiB" if size >= MiB else f"{size // KiB} KiB"


class Bench:
    def __init__(self, srv: LocalServer, cfg: Config) -> None:
        self.srv = srv
        self.cfg = cfg
        self.client = srv.client()
        self.bucket = self.client.bucket("getbatch-bench").create(exist_ok=True)
        self.distinct: dict[int, int] = {}
        self.notes: list[str] = []
        self.official_error: str | None = None

    def prefix(self, size: int) -> str:
        return f"s{size}/o"

    def names(self, size: int, count: int) -> list[str]:
        d = self.distinct[size]
        return [f"{self.prefix(size)}{i % d:06d}" for i in range(count)]

    def load(self) -> None:
        """PUT the distinct objects of every size over four keep-alive connections."""
        u = urlsplit(self.srv.endpoint)
        for size in SIZES:
            d = min(self.cfg.max_distinct, max(1, self.cfg.distinct_bytes // size))
            self.distinct[size] = d
            payload = os.urandom(size)
            names = self.names(size, d)

            def put(chunk: list[str], payload: bytes = payload) -> None:
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
                try:
                    for name in chunk:
                        conn.request("PUT", f"/v1/objects/{self.bucket.name}/{name}", body=payload)
                        resp = conn.getresponse()
                        resp.read()
                        if resp.status != 200:
                            raise RuntimeError(f"PUT {name}: {resp.status}")
                finally:
                    conn.close()

            with ThreadPoolExecutor(4) as pool:
                list(pool.map(put, [names[i::4] for i in range(4)]))

    def server_cpu(self) -> float:
        """CPU seconds the server process has used (user + system)."""
        assert self.srv.pid is not None
        fields = Path(f"/proc/{self.srv.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def items_per_round(self, size: int, batch: int) -> int:
        return max(batch, self.cfg.round_bytes // size // batch * batch)

    # one round of each client; each returns objects/s

    def ours(self, size: int, batch: int) -> Rate:
        total = self.items_per_round(size, batch)
        names = self.names(size, total)
        got = 0
        s0, c0 = self.server_cpu(), time.process_time()
        t0 = time.perf_counter()
        for start in range(0, total, batch):
            for _, data in self.client.batch(
                names[start : start + batch], bucket=self.bucket
            ).get():
                got += 1
                if len(data) != size:
                    raise RuntimeError(f"GetBatch returned {len(data)} bytes, expected {size}")
        secs = time.perf_counter() - t0
        c1, s1 = time.process_time(), self.server_cpu()
        if got != total:
            raise RuntimeError(f"GetBatch returned {got} of {total} items")
        return Rate(total / secs, (c1 - c0) / total * 1e6, (s1 - s0) / total * 1e6)

    def per_get(self, size: int) -> float:
        names = self.names(size, self.distinct[size])
        done = 0
        t0 = time.perf_counter()
        deadline = t0 + self.cfg.get_seconds
        while time.perf_counter() < deadline:
            data = self.bucket.object(names[done % len(names)]).get_reader().read_all()
            if len(data) != size:
                raise RuntimeError("GET returned the wrong size")
            done += 1
        return done / (time.perf_counter() - t0)

    def official(self, size: int, batch: int) -> Rate | None:
        if self.official_error is not None or self.cfg.ours_only:
            return None
        total = self.items_per_round(size, batch)
        args = [
            self.bucket.name,
            self.prefix(size),
            str(self.distinct[size]),
            str(batch),
            str(total),
        ]
        s0 = self.server_cpu()
        try:
            res = official_sdk.run_script(OFFICIAL_SCRIPT, self.srv.endpoint, args, timeout=1800)
        except official_sdk.VenvError as e:  # incl. PyPIUnreachable
            self.official_error = str(e).splitlines()[0]
            self.notes.append(f"official SDK not run: {self.official_error}")
            return None
        items = float(res["items"])
        # The server's CPU includes the official client's warm-up batch: a small bias against it.
        return Rate(
            items / float(res["seconds"]),
            float(res["cpu_seconds"]) / items * 1e6,
            (self.server_cpu() - s0) / items * 1e6,
        )


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def median_cpu(rates: list[Rate]) -> tuple[float, float] | None:
    if not rates:
        return None
    return (
        statistics.median(r.client_us for r in rates),
        statistics.median(r.server_us for r in rates),
    )


def run(cfg: Config, progress: Callable[[str], None]) -> tuple[list[Row], float, list[str]]:
    with tempfile.TemporaryDirectory(prefix="getbatch-bench-") as root:
        mps = [Path(root) / f"mp{i}" for i in range(4)]
        with LocalServer(mountpaths=mps) as srv:
            bench = Bench(srv, cfg)
            progress("loading objects")
            bench.load()
            loopback = 4 * 256 * MiB / loopback_seconds(4 * 256 * MiB) / 1e6  # MB/s
            spin = 4 * 256 * MiB / loopback_seconds(4 * 256 * MiB, spin=True) / 1e6
            bench.notes.append(
                f'loopback with a receiver that never sleeps: {spin:,.0f} MB/s ("of loopback" '
                "uses the conventional receiver, which sleeps when the socket is empty)"
            )
            ours: dict[tuple[int, int], list[Rate]] = {}
            official: dict[tuple[int, int], list[Rate]] = {}
            gets: dict[int, list[float]] = {}
            for rep in range(cfg.reps):
                for size in SIZES:
                    progress(f"round {rep + 1}/{cfg.reps}: {_label(size)} per-object GETs")
                    gets.setdefault(size, []).append(bench.per_get(size))
                    for batch in BATCHES:
                        progress(f"round {rep + 1}/{cfg.reps}: {_label(size)} x {batch}")
                        ours.setdefault((size, batch), []).append(bench.ours(size, batch))
                        if (rate := bench.official(size, batch)) is not None:
                            official.setdefault((size, batch), []).append(rate)
            rows = []
            for size in SIZES:
                for batch in BATCHES:
                    mine, theirs = ours[(size, batch)], official.get((size, batch), [])
                    row = Row(
                        size,
                        batch,
                        ours=median([r.per_s for r in mine]),
                        per_get=median(gets[size]),
                        official=median([r.per_s for r in theirs]),
                        ours_cpu=median_cpu(mine),
                        official_cpu=median_cpu(theirs),
                    )
                    if size == 10 * KiB and row.ours and row.per_get:
                        ok = row.ours >= GOAL_VS_GET * row.per_get
                        row.goals.append(f"≥{GOAL_VS_GET:.0f}x GET: {'ok' if ok else 'MISS'}")
                    if row.ours and row.official:
                        ok = row.ours >= GOAL_VS_OFFICIAL * row.official
                        row.goals.append(
                            f"≥{GOAL_VS_OFFICIAL:.0f}x official: {'ok' if ok else 'MISS'}"
                        )
                    rows.append(row)
            return rows, loopback, bench.notes


def _fmt(v: float | None, width: int, spec: str = ",.0f") -> str:
    return f"{v:{spec}}".rjust(width) if v is not None else "n/a".rjust(width)


def _mbps(rate: float | None, size: int) -> float | None:
    return None if rate is None else rate * size / 1e6


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}x".rjust(7) if a and b else "n/a".rjust(7)


def _cpu(cpu: tuple[float, float] | None) -> str:
    return f"{cpu[0]:5.1f} {cpu[1]:5.1f}" if cpu else "  n/a   n/a"


def print_table(rows: list[Row], loopback: float, notes: list[str]) -> None:
    head = (
        f"{'objects':>9} {'batch':>6} | {'GetBatch':>9} {'MB/s':>7} | {'GET/obj':>8} {'MB/s':>6}"
        f" {'vs GET':>7} | {'official':>9} {'MB/s':>7} {'vs off.':>7} | {'of loopback':>11}"
        f" | {'cpu us/obj: ours':>16} {'official':>11} | goals"
    )
    print(
        f"GetBatch vs one GET per object vs the official SDK's batch (objects/s, MB/s), "
        f"loopback {loopback:,.0f} MB/s"
    )
    print(head)
    print("─" * len(head))
    for r in rows:
        ours_mb = _mbps(r.ours, r.size)
        share = None if ours_mb is None else ours_mb / loopback * 100
        cells = [
            f"{_label(r.size):>9} {r.batch:>6}",
            f"{_fmt(r.ours, 9)} {_fmt(ours_mb, 7)}",
            f"{_fmt(r.per_get, 8)} {_fmt(_mbps(r.per_get, r.size), 6)} {_ratio(r.ours, r.per_get)}",
            f"{_fmt(r.official, 9)} {_fmt(_mbps(r.official, r.size), 7)} "
            + _ratio(r.ours, r.official),
            f"{_fmt(share, 10, '.1f')}%",
            f"{'':4}{_cpu(r.ours_cpu)} {_cpu(r.official_cpu)}",
            "; ".join(r.goals),
        ]
        print(" | ".join(cells))
    print(f"{'':20}(cpu us/obj: client, server)")
    for n in notes:
        print(f"note: {n}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one round, smaller data")
    ap.add_argument("--reps", type=int, help="rounds per case (median reported)")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    ap.add_argument("--ours-only", action="store_true", help="skip the official SDK's batch")
    args = ap.parse_args()
    cfg = Config.quick() if args.quick else Config()
    cfg.ours_only = args.ours_only
    if args.reps:
        cfg.reps = args.reps
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows, loopback, notes = run(
        cfg, lambda msg: print(f"[{time.perf_counter() - started:6.0f}s] {msg}", file=sys.stderr)
    )
    before, after = (" ".join(f"{x:.1f}" for x in load) for load in (load_before, os.getloadavg()))
    notes.append(f"load average (1, 5, 15 min) before: {before}, after: {after}")
    print_table(rows, loopback, notes)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"loopback_mbps": loopback, "rows": [asdict(r) for r in rows], "notes": notes},
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
