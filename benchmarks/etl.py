#!/usr/bin/env python3
"""ETL benchmark: transforms run by the server's ETL beside the same work done by the client.

Starts our server (``LocalServer``, 4 mountpaths in a temporary directory under ``$TMPDIR``;
``TMPDIR=/dev/shm`` takes the disk out of the figures) with three ETLs (``hpush``), each a local
Python process of the server: a no-op (returns the object) and an MD5 (returns the hex digest)
on ``HTTPMultiThreadedServer``, and a no-op on ``FastAPIServer``. Measures, against it:

* **single-object transform** (``src.object(a).copy(dst.object(b), etl=ETLConfig(...))``) of one
  64 KiB, 1 MiB, 16 MiB, 256 MiB and 1 GiB object (up to ``--max-size``), seconds, beside our
  client doing the same: GET (``read_all()``), MD5 or nothing, PUT (``put_content``). MD5 and
  no-op. The ``md5 alone`` column is the client's MD5 of the same bytes, in the same rounds:
  the floor of both sides. No goal; the seed's reference at 256 MB: 0.338 s by AIS vs 2.515 s
  client-side (7.4x);
* **inline GET** of 10 KiB objects through the no-op ETL (``get_reader(etl=...).read_all()``)
  beside a plain GET, objects/s, from 1 and from 8 threads (one shared ``Client``), for both
  transformer classes. Goal: the ETL GET at least 0.5x the plain GET;
* **offline transform** of ``--count`` 10 KiB objects (``bucket.transform(...)`` into a new
  bucket, then ``client.job(job).wait()``), objects/s, beside a client loop of GET, transform,
  PUT from 1 and from 8 threads. MD5 and no-op. Goal: the job at least 5x the loop. The job is
  timed from its request to the end time the server reports for it: ``wait()`` polls with
  back-off (50 ms, doubling), which can return as late again as a job of a second or two took
  (the median of that delay is printed).

Every case of a row runs in ``--rounds`` rounds in which the cases take turns, and reports the
median round, so a change in the machine's load hits all of them alike. The speedup column is
how many times the ETL is faster than its baseline (for seconds: the baseline's time over the
ETL's). Prints one table.

Usage:
    python3 benchmarks/etl.py                   # objects up to 256 MiB, 10,000 objects (~1-2 min)
    python3 benchmarks/etl.py --max-size 1GiB   # the full table (~2 min; ~5 GiB of RAM at the
                                                # 1 GiB row on /dev/shm, 3 GiB of it objects)
    python3 benchmarks/etl.py --max-size 1MiB --count 1000 --rounds 1   # a quick look
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.etl import ETLConfig
from aistore.sdk.etl.webserver.base_etl_server import ETLServer
from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer
from aistore.sdk.obj.object import Object
from aistore.server import LocalServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402
from core import interleaved_median, timed  # noqa: E402

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
COPY_SIZES = (64 * KiB, MiB, 16 * MiB, 256 * MiB, GiB)
SMALL_SIZE = 10 * KiB
INLINE_OBJECTS = 2000  # read by every inline case (the first of the offline case's objects)
THREADS = 8  # the concurrent clients of the inline and client-loop cases
PUT_THREADS = 8  # the setup's writers
GOAL_INLINE_VS_PLAIN = 0.5
GOAL_OFFLINE_VS_LOOP = 5.0

NOOP, MD5 = "no-op", "md5"
THREADED, FASTAPI = "HTTPMultiThreadedServer", "FastAPIServer"
ETLS = {  # (transform, transformer class): the ETL's name
    (NOOP, THREADED): "noop-threaded",
    (MD5, THREADED): "md5-threaded",
    (NOOP, FASTAPI): "noop-fastapi",
}


def transformers() -> dict[str, type[ETLServer]]:
    """The transformer class of each ETL (by name). Defined in a function, so cloudpickle sends
    them by value: the transformer process cannot import this script."""

    class NoopThreaded(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)  # hpush without direct file access: the bytes
            return data

    class Md5Threaded(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return hashlib.md5(data).hexdigest().encode()

    class NoopFastAPI(FastAPIServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return data

    return {
        ETLS[NOOP, THREADED]: NoopThreaded,
        ETLS[MD5, THREADED]: Md5Threaded,
        ETLS[NOOP, FASTAPI]: NoopFastAPI,
    }


def read(obj: Object) -> bytes:
    """The object's bytes: `get_reader().read_all()`, a sequential reader's (never a
    `ParallelBuffer`)."""
    data = obj.get_reader().read_all()
    assert isinstance(data, bytes)
    return data


def apply(transform: str, data: bytes) -> bytes:
    """What the ETL `transform` makes of `data`, computed here."""
    return hashlib.md5(data).hexdigest().encode() if transform == MD5 else data


@dataclass
class Row:
    """One case: the ETL's figure beside its baseline's, in `unit`."""

    case: str
    baseline_name: str  # what the ETL is measured against
    unit: str  # "s" or "obj/s"
    etl: float | None
    baseline: float | None
    md5_alone: float | None = None  # seconds: the client's MD5 of the same bytes
    goals: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float | None:
        """How many times the ETL is faster than the baseline."""
        if not self.etl or not self.baseline:
            return None
        return self.baseline / self.etl if self.unit == "s" else self.etl / self.baseline


def objects_per_second(op: Callable[[str], object], names: Sequence[str], threads: int) -> float:
    """`op(name)` once for each name, the names split among `threads` threads; objects/s."""
    parts = [names[t::threads] for t in range(threads)]
    with ThreadPoolExecutor(threads) as pool:
        t0 = time.perf_counter()
        list(pool.map(lambda part: [op(name) for name in part], parts))
        return len(names) / (time.perf_counter() - t0)


def size_label(size: int) -> str:
    if size >= GiB:
        return f"{size // GiB} GiB"
    return f"{size // MiB} MiB" if size >= MiB else f"{size // KiB} KiB"


def parse_size(text: str) -> int:
    """`256MiB`, `1GiB`, `64KiB`, `1G` or a number of bytes."""
    m = re.fullmatch(r"(\d+)\s*([kmg]?)(?:i?b)?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 256MiB, 1GiB)")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2).lower()]


def goal(value: float | None, least: float) -> str:
    """`≥ least×: ok|MISS` for a speedup."""
    text = f"≥ {least:g}×"
    return f"{text}: n/a" if value is None else f"{text}: {'ok' if value >= least else 'MISS'}"


class EtlBench:
    """Owns the server's buckets and ETLs; each method measures one group of rows."""

    def __init__(self, srv: LocalServer, rounds: int, workers: int) -> None:
        self.client: Client = srv.client(max_pool_size=2 * THREADS)
        self.rounds = rounds
        self.workers = workers
        self.small = self.client.bucket("etl-src-small").create()
        self.big = self.client.bucket("etl-src-big").create()
        self.out = self.client.bucket("etl-out").create()
        self.names: list[str] = []
        self.init_seconds: dict[str, float] = {}
        self.wait_overhead: list[float] = []  # seconds wait() returned after the job's end

    def start_etls(self) -> None:
        for name, cls in transformers().items():
            t0 = time.perf_counter()
            self.client.etl(name).init_class(comm_type="hpush")(cls)
            self.init_seconds[name] = time.perf_counter() - t0

    def load(self, count: int) -> None:
        """`count` objects of 10 KiB, each its own bytes, written from a pool of threads."""
        self.names = [f"obj-{i:06d}" for i in range(count)]

        def put(name: str) -> None:
            self.small.object(name).get_writer().put_content(os.urandom(SMALL_SIZE))

        objects_per_second(put, self.names, PUT_THREADS)

    def warm_up(self) -> None:
        """Each ETL once inline and once by copy, its output checked, so that no round pays a
        first connection."""
        obj = self.small.object(self.names[0])
        data = read(obj)
        for (transform, _), etl in ETLS.items():
            if obj.get_reader(etl=ETLConfig(etl)).read_all() != apply(transform, data):
                raise RuntimeError(f"the {etl} ETL's inline output is not the {transform}")
            obj.copy(self.out.object("warm-up"), etl=ETLConfig(etl))
        self.out.object("warm-up").delete()

    # (1) one object through the ETL into another bucket

    def copy_one(self, size: int) -> list[Row]:
        """One `size`-byte object through each ETL of HTTPMultiThreadedServer into another
        bucket, and the same by the client, seconds."""
        src = self.big.object(f"big-{size}")
        src.get_writer().put_content(os.urandom(size))
        md5_seconds: list[float] = []

        def server(transform: str) -> Callable[[], float]:
            etl = ETLConfig(ETLS[transform, THREADED])
            return timed(lambda: src.copy(self.out.object(f"{transform}-server"), etl=etl))

        def client(transform: str) -> Callable[[], float]:
            def case() -> None:
                data = read(src)
                t0 = time.perf_counter()
                out = apply(transform, data)
                if transform == MD5:
                    md5_seconds.append(time.perf_counter() - t0)
                del data  # the result alone is held while it is written
                self.out.object(f"{transform}-client").get_writer().put_content(out)

            return timed(case)

        cases: dict[str, Callable[[], float | None]] = {}
        for transform in (MD5, NOOP):
            cases[f"{transform} server"] = server(transform)
            cases[f"{transform} client"] = client(transform)
        secs = interleaved_median(cases, self.rounds)

        digest = self.out.object(f"{MD5}-server").get_reader().read_all()
        if digest != self.out.object(f"{MD5}-client").get_reader().read_all():
            raise RuntimeError(f"the md5 ETL's output of {size} bytes is not the client's")
        if (got := self.out.object(f"{NOOP}-server").head().size) != size:
            raise RuntimeError(f"the no-op ETL's output is {got} bytes, not {size}")
        src.delete()
        for transform in (MD5, NOOP):
            for side in ("server", "client"):
                self.out.object(f"{transform}-{side}").delete()

        label = f"copy one {size_label(size)} object"
        return [
            Row(
                f"{label}, {transform}",
                f"client GET, {transform}, PUT",
                "s",
                secs[f"{transform} server"],
                secs[f"{transform} client"],
                md5_alone=statistics.median(md5_seconds) if transform == MD5 else None,
            )
            for transform in (MD5, NOOP)
        ]

    # (2) inline GET

    def inline(self, threads: int) -> list[Row]:
        """GETs of 10 KiB objects through the no-op ETL of each transformer class, and plain,
        from `threads` threads, objects/s."""
        names = self.names[:INLINE_OBJECTS]

        def reader(etl: str | None) -> Callable[[], float]:
            config = ETLConfig(etl) if etl else None

            def get(name: str) -> None:
                self.small.object(name).get_reader(etl=config).read_all()

            return lambda: objects_per_second(get, names, threads)

        cases: dict[str, Callable[[], float | None]] = {"plain": reader(None)}
        for kind in (THREADED, FASTAPI):
            cases[kind] = reader(ETLS[NOOP, kind])
        rates = interleaved_median(cases, self.rounds)

        rows = []
        for kind in (THREADED, FASTAPI):
            row = Row(
                f"inline GET {len(names):,} × 10 KiB, no-op, {kind}, {plural(threads, 'thread')}",
                "plain GET",
                "obj/s",
                rates[kind],
                rates["plain"],
            )
            row.goals.append(goal(row.speedup, GOAL_INLINE_VS_PLAIN))
            rows.append(row)
        return rows

    # (3) offline transform

    def offline(self, transform: str) -> list[Row]:
        """All the 10 KiB objects through an ETL of HTTPMultiThreadedServer into a new bucket,
        as a job and as a client loop from 1 and from `THREADS` threads, objects/s."""
        etl = ETLS[transform, THREADED]
        n = len(self.names)
        first = read(self.small.object(self.names[0]))

        def check_and_drop(to: Bucket, who: str) -> None:
            written = sum(1 for _ in to.list_objects_iter())
            got = read(to.object(self.names[0]))
            to.delete()
            if written != n or got != apply(transform, first):
                raise RuntimeError(f"{who} wrote {written} of {n} objects, or not the {transform}")

        def job() -> float:
            to = self.client.bucket(f"etl-offline-{transform}")
            start = datetime.now(timezone.utc)
            t0 = time.perf_counter()
            job_id = self.small.transform(etl, to_bck=to, num_workers=self.workers)
            result = self.client.job(job_id).wait(verbose=False, progress=False)
            wall = time.perf_counter() - t0
            if not result.success:
                raise RuntimeError(f"the {etl} job failed: {result.error}")
            secs = (result.end_time - start).total_seconds() if result.end_time else wall
            self.wait_overhead.append(wall - secs)
            check_and_drop(to, f"the {etl} job")
            return n / secs

        def loop(threads: int) -> Callable[[], float]:
            def case() -> float:
                to = self.client.bucket(f"etl-loop-{transform}").create()

                def one(name: str) -> None:
                    data = read(self.small.object(name))
                    to.object(name).get_writer().put_content(apply(transform, data))

                rate = objects_per_second(one, self.names, threads)
                check_and_drop(to, f"the client loop ({plural(threads, 'thread')})")
                return rate

            return case

        rates = interleaved_median({"job": job, "1": loop(1), "n": loop(THREADS)}, self.rounds)

        rows = []
        for key, threads in (("1", 1), ("n", THREADS)):
            row = Row(
                f"offline job, {n:,} × 10 KiB, {transform}, num_workers={self.workers}",
                f"client loop, {plural(threads, 'thread')}",
                "obj/s",
                rates["job"],
                rates[key],
            )
            row.goals.append(goal(row.speedup, GOAL_OFFLINE_VS_LOOP))
            rows.append(row)
        return rows


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


# -- output ---------------------------------------------------------------------------------


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if unit == "s" else f"{value:,.0f}"


def render(rows: list[Row]) -> str:
    header = ["case", "vs", "unit", "ETL", "baseline", "speedup", "md5 alone", "goal"]
    lines = [header]
    for r in rows:
        speedup = r.speedup
        lines.append(
            [
                r.case,
                r.baseline_name,
                r.unit,
                fmt(r.etl, r.unit),
                fmt(r.baseline, r.unit),
                "—" if speedup is None else f"{speedup:.2f}×",
                fmt(r.md5_alone, "s"),
                "; ".join(r.goals),
            ]
        )
    return render_table(lines, left=(0, 1, 2, 7))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--max-size",
        type=parse_size,
        default=256 * MiB,
        help="largest object of the single-object rows (default 256MiB; 1GiB: the full table)",
    )
    ap.add_argument(
        "--count",
        type=int,
        default=10_000,
        help="10 KiB objects of the offline rows (default 10000)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every case (default 3)")
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="num_workers of the offline job (default 0: the server's, 4; -1: one)",
    )
    args = ap.parse_args()
    if args.count < 1 or args.rounds < 1:
        ap.error("--count and --rounds must be at least 1")
    sizes = [size for size in COPY_SIZES if size <= args.max_size]

    load_before = os.getloadavg()[0]
    with LocalServer() as srv:
        bench = EtlBench(srv, args.rounds, args.workers)
        bench.start_etls()
        bench.load(args.count)
        bench.warm_up()
        rows = [row for size in sizes for row in bench.copy_one(size)]
        rows += bench.inline(1) + bench.inline(THREADS)
        rows += bench.offline(MD5) + bench.offline(NOOP)
    load_after = os.getloadavg()[0]

    inits = ", ".join(f"{name} {secs:.2f} s" for name, secs in bench.init_seconds.items())
    print(
        f"# aistore ETL benchmark: {os.cpu_count()} cores, LocalServer with 4 mountpaths under "
        f"{tempfile.gettempdir()}, transformers as local processes (hpush), "
        f"median of {plural(args.rounds, 'interleaved round')}"
    )
    print(render(rows))
    print(f"# ETL init (until the transformer answers): {inits}")
    if bench.wait_overhead:
        print(
            "# offline jobs timed from the request to the end time the server reports; "
            f"wait() returned {statistics.median(bench.wait_overhead):.2f} s later (median)"
        )
    print("# the seed's reference: one 256 MB object, 0.338 s by AIS vs 2.515 s client-side")
    print(
        f"# load average {load_before:.1f} before, {load_after:.1f} after "
        "(other work on the machine skews every figure)"
    )


if __name__ == "__main__":
    main()
