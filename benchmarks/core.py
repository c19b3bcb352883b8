#!/usr/bin/env python3
"""Core data-path benchmark: our client and server side by side with their peers, in one run.

Starts our server (``LocalServer``, 4 mountpaths in a temporary directory: under ``$TMPDIR``,
/tmp by default; ``TMPDIR=/dev/shm`` takes the disk's filesystem out of the PUT figures) and
measures, against it:

* GET of 10 KiB objects, objects/s, with 1 and 16 concurrent clients: our client (threads, one
  shared ``Client``), the official SDK (same, in its own venv), plain ``requests`` (threads, one
  ``Session`` each) and ``wrk`` (a Lua script spreads requests over all object names);
* the client's CPU per GET of those objects (one client; ``time.process_time`` of the client
  process over its GETs, microseconds): our client, the official SDK and plain ``requests``;
* single-stream GET of large objects (1 and 2 GiB) stored as 64 MiB chunks, GB/s: our
  ``read_all()`` (timed until it returns the bytes, as the official SDK's), iteration (1 MiB
  chunks) and ``as_file().readinto()`` into a preallocated buffer, the official SDK's
  ``read_all()`` and ``curl -o /dev/null``; with the loopback TCP bandwidth measured in the
  same run (a two-process socket pump) as the machine's limit;
* a full listing (``list_objects_iter()``) of 100K objects of 1 KiB (1M with ``--list-1m``:
  its fill takes ~10x longer), seconds: the first listing after the fill (the server knows the
  headers it wrote), the first after a restart of the server (it saved the headers it knew
  when it stopped), the first after a crash (SIGKILL: every header read from its file), the
  first after a crash once the running server saved its headers (``--header-snapshot-interval``,
  set to 5 s here; 60 s by default), then
  in rounds our SDK, the official SDK, the pages alone (plain
  ``requests``, msgpack not decoded: the server's share); each against our SDK through a
  bucket inventory (a snapshot of the listing). For times, the ratio columns are speed ratios
  (the peer's time over ours);
* PUT of new 10 KiB objects (1 and 8 clients) and 1 MiB objects (8 clients), objects/s: our
  client, the official SDK, ``requests`` (threads, one ``Session`` each) and ``wrk`` (a Lua
  script PUTs the same body under a new name each time); and of a 1 GiB file (GB/s): our
  ``put_file``, the official SDK's, ``requests`` and ``curl``.

Every case runs in rounds in which the clients take turns, and reports the median round, so
a change in the machine's load hits all clients alike. Prints one table; ``--json PATH`` also
writes every figure. GB/s and MB/s are 10^9 and 10^6 bytes per second. Objects are read from
the page cache (the machine has the RAM).

Usage:
    python3 benchmarks/core.py            # 1, 2 GiB objects, 100K listed, 3 rounds (~9 min)
    python3 benchmarks/core.py --quick    # 256 MiB object, 10K listed, 1 round of 1 s (~1 min)
    python3 benchmarks/core.py --list-1m  # and a listing of 1M objects (fill: ~2 min on tmpfs)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import requests

from aistore.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "tests" / "compat"))
import official_sdk  # noqa: E402
from _loopback import loopback_seconds  # noqa: E402
from _table import render_table  # noqa: E402

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SMALL_SIZE = 10 * KiB
CHUNK_SIZE = 64 * MiB
DOCUMENTED_LOOPBACK_GBPS = 3.5  # ../shared/design.md, used only if the measurement fails
GOAL_VS_OFFICIAL = 2.0
GOAL_VS_CURL = 0.85
GOAL_WRK_GET_RATE = 30_000
GOAL_PUT_SMALL_RATE = 5_000  # 10 KiB PUTs/s through our SDK, 8 clients
GOAL_PUT_VS_OFFICIAL = 5.0
GOAL_PUT_BIG_GBPS = 1.5
PUT_CLIENTS = 8
GOAL_LIST_100K_SECONDS = 0.4
GOAL_INVENTORY_SPEEDUP = 8.0
LISTED_SIZE = KiB
HEADER_SNAPSHOT_MS = 5000  # --header-snapshot-interval of the server measured (default 60000)
LOWER_IS_BETTER = ("s", "us")  # units of time or cost: ratios are the peer's over ours

OFFICIAL_SCRIPT = (Path(__file__).parent / "_official_core.py").read_text()


@dataclass
class Config:
    small_objects: int = 1000
    seconds: float = 2.0  # one round of a rate case
    big_sizes: tuple[int, ...] = (GiB, 2 * GiB)
    reps: int = 3  # rounds of every case; the median is reported
    put_big_size: int = 1 * GiB
    list_sizes: tuple[int, ...] = (100_000,)  # objects per listing case
    ours_only: bool = False  # skip the peers (official SDK, requests, wrk, curl, loopback)

    @classmethod
    def quick(cls) -> Config:
        return cls(
            small_objects=200,
            seconds=1.0,
            big_sizes=(256 * MiB,),
            reps=1,
            list_sizes=(10_000,),
            put_big_size=256 * MiB,
        )


@dataclass
class Row:
    """One case: a figure per client, in `unit`; None where a client was not run."""

    case: str
    unit: str
    ours: float | None = None
    official: float | None = None
    requests: float | None = None
    tool: float | None = None  # wrk or curl
    tool_name: str = ""
    limit: float | None = None  # the machine's limit in the same unit, when one applies
    goals: list[str] = field(default_factory=list)


def big_name(size: int) -> str:
    return f"big-{size // MiB}MiB"


class PageHead(msgspec.Struct):
    """What `pages()` decodes of a list-objects page: where the next one starts."""

    UUID: str
    ContinuationToken: str


PAGE_HEAD = msgspec.msgpack.Decoder(PageHead)


# -- measurement helpers --------------------------------------------------------------------


def cpu_us_per_op(op: Callable[[int, int], None], seconds: float) -> float:
    """This process's CPU time (every thread's) per `op(0, i)`, run back to back in this thread
    for `seconds`, in microseconds: what one operation costs the client."""
    done, cpu0 = 0, time.process_time()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        op(0, done)
        done += 1
    return (time.process_time() - cpu0) / done * 1e6


def rate_in_threads(op: Callable[[int, int], None], conc: int, seconds: float) -> float:
    """Operations per second of `op(thread, i)` run back to back in `conc` threads."""
    counts = [0] * conc
    errors: list[BaseException] = []
    barrier = threading.Barrier(conc + 1)
    deadline = [0.0]

    def worker(t: int) -> None:
        barrier.wait()
        i, done = t, 0
        try:
            while time.perf_counter() < deadline[0]:
                op(t, i)
                i, done = i + conc, done + 1
        except BaseException as e:  # surfaced below: a failed op must not pass as a slow one
            errors.append(e)
        counts[t] = done

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(conc)]
    for th in threads:
        th.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + seconds
    barrier.wait()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return sum(counts) / (time.perf_counter() - t0)


def timed(fn: Callable[[], object]) -> Callable[[], float]:
    """`fn` as a case of `interleaved_median`: returns the seconds it took."""

    def case() -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    return case


def interleaved_median(
    cases: dict[str, Callable[[], float | None]], reps: int, run_only: set[str] | None = None
) -> dict[str, float | None]:
    """Median result (seconds or a rate) of each case over `reps` rounds. Cases take turns
    within a round, so a change in the machine's load hits all of them alike; a case returns
    None when it cannot run. With `run_only`, the other cases are not run (their result is
    None)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(reps):
        for name, case in cases.items():
            if run_only is not None and name not in run_only:
                continue
            if (secs := case()) is not None:
                times[name].append(secs)
    return {name: statistics.median(t) if t else None for name, t in times.items()}


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if res.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({res.returncode}): {res.stderr.strip()[-2000:]}")
    return res


def wrk_case(script: Path, conc: int, seconds: float, endpoint: str) -> Callable[[], float]:
    """A case of `interleaved_median`: `wrk` running `script` over `conc` connections, req/s."""
    threads = min(conc, os.cpu_count() or 1)
    cmd = ["wrk", f"-t{threads}", f"-c{conc}", f"-d{max(1, round(seconds))}s", "-s", str(script)]
    return lambda: parse_wrk_rate(run([*cmd, endpoint]).stdout)


def parse_wrk_rate(output: str) -> float:
    if m := re.search(r"Non-2xx or 3xx responses:\s*(\d+)", output):
        raise RuntimeError(f"wrk got {m.group(1)} error responses")
    m = re.search(r"Requests/sec:\s*([\d.]+)", output)
    if not m:
        raise RuntimeError(f"no Requests/sec in wrk output:\n{output}")
    return float(m.group(1))


# -- the benchmark --------------------------------------------------------------------------


class CoreBench:
    """Owns the server's data set and a scratch directory; each method measures one case."""

    def __init__(self, srv: LocalServer, cfg: Config, scratch: Path) -> None:
        self.srv = srv
        self.cfg = cfg
        self.scratch = scratch
        self.endpoint = srv.endpoint
        self.client = srv.client(max_pool_size=16)
        self.srv_promote_root = scratch / "promote"
        self.small = self.client.bucket("bench-small").create(exist_ok=True)
        self.big = self.client.bucket("bench-big").create(exist_ok=True)
        self.put = self.client.bucket("bench-put").create(exist_ok=True)
        self.notes: list[str] = []
        self.official_error: str | None = None
        self.official_get_cpu_us: float | None = None  # measured by get_small(1)

    # setup

    def load(self) -> None:
        for i in range(self.cfg.small_objects):
            self.small.object(f"obj-{i:06d}").get_writer().put_content(os.urandom(SMALL_SIZE))
        chunks = {"objsize_limit": CHUNK_SIZE, "chunk_size": CHUNK_SIZE}
        resp = requests.patch(
            f"{self.endpoint}/v1/buckets/bench-big",
            params={"provider": "ais"},
            json={"action": "set-bprops", "value": {"chunks": chunks}},
            timeout=30,
        )
        resp.raise_for_status()
        self.block = os.urandom(64 * MiB)  # the big objects repeat this block
        path = self.scratch / "big.bin"
        for size in self.cfg.big_sizes:
            with open(path, "wb") as f:
                for _ in range(size // len(self.block)):
                    f.write(self.block)
            self.big.object(big_name(size)).get_writer().put_file(path)
            path.unlink()
            props = self.big.object(big_name(size)).head("chunked")
            if props.chunks is None or props.chunks.chunk_count != size // CHUNK_SIZE:
                raise RuntimeError(f"big object is not stored in 64 MiB chunks: {props.chunks}")
        self.put_file = self.scratch / "put.bin"
        self.put_file.write_bytes(os.urandom(self.cfg.put_big_size))

    def check_big(self, data: bytes | bytearray | memoryview, size: int) -> None:
        n = len(self.block)
        if (
            len(data) != size
            or data[:MiB] != self.block[:MiB]
            or (data[-MiB:] != self.block[n - MiB :])
        ):
            raise RuntimeError("big object read back wrong")

    def object_url(self, bucket: str, name: str) -> str:
        return f"{self.endpoint}/v1/objects/{bucket}/{name}?provider=ais"

    def official(self, *args: str) -> Any:
        if self.official_error is not None:
            return None
        try:
            return official_sdk.run_script(OFFICIAL_SCRIPT, self.endpoint, args, timeout=900)
        except official_sdk.VenvError as e:  # incl. PyPIUnreachable
            self.official_error = str(e).splitlines()[0]
            self.notes.append(f"official SDK not run: {self.official_error}")
            return None

    def ours_cases(self, ours: set[str]) -> set[str] | None:
        """The cases to run: all, or only `ours` under --ours-only."""
        return ours if self.cfg.ours_only else None

    # (a) small GET

    def get_small(self, conc: int) -> Row:
        n, secs = self.cfg.small_objects, self.cfg.seconds
        sessions = [requests.Session() for _ in range(conc)]

        def ours(_: int, i: int) -> None:
            self.small.object(f"obj-{i % n:06d}").get_reader().read_all()

        def plain(t: int, i: int) -> None:
            resp = sessions[t].get(self.object_url("bench-small", f"obj-{i % n:06d}"))
            if resp.status_code != 200 or len(resp.content) != SMALL_SIZE:
                raise RuntimeError(f"GET failed: {resp.status_code}")

        official_cpu: list[float] = []

        def official() -> float | None:
            res = self.official("get-small", "bench-small", str(n), str(conc), str(secs))
            if res and conc == 1:
                official_cpu.append(res["cpu_us"])
            return res and res["rate"]

        lua = self.scratch / "spread.lua"
        lua.write_text(
            f"local n, i = {n}, 0\n"
            "request = function()\n"
            "  i = i + 1\n"
            '  return wrk.format("GET", string.format('
            '"/v1/objects/bench-small/obj-%06d?provider=ais", i % n))\n'
            "end\n"
        )
        rates = interleaved_median(
            {
                "ours": lambda: rate_in_threads(ours, conc, secs),
                "requests": lambda: rate_in_threads(plain, conc, secs),
                "official": official,
                "wrk": wrk_case(lua, conc, secs, self.endpoint),
            },
            self.cfg.reps,
            self.ours_cases({"ours"}),
        )
        for s in sessions:
            s.close()
        row = Row(
            f"GET 10 KiB, {conc} client{'s' if conc > 1 else ''}",
            "obj/s",
            ours=rates["ours"],
            official=rates["official"],
            requests=rates["requests"],
            tool=rates["wrk"],
            tool_name="wrk",
        )
        if conc > 1 and row.tool is not None:
            verdict = "ok" if row.tool >= GOAL_WRK_GET_RATE else "MISS"
            row.goals.append(f"wrk ≥ {GOAL_WRK_GET_RATE}/s: {verdict}")
        if official_cpu:
            self.official_get_cpu_us = statistics.median(official_cpu)
        return row

    def get_small_cpu(self) -> Row:
        """The client's CPU per 10 KiB GET, one client (after get_small(1), whose official
        runs measured the official SDK's)."""
        n, secs = self.cfg.small_objects, self.cfg.seconds
        session = requests.Session()

        def ours(_: int, i: int) -> None:
            self.small.object(f"obj-{i % n:06d}").get_reader().read_all()

        def plain(_: int, i: int) -> None:
            resp = session.get(self.object_url("bench-small", f"obj-{i % n:06d}"))
            if resp.status_code != 200 or len(resp.content) != SMALL_SIZE:
                raise RuntimeError(f"GET failed: {resp.status_code}")

        cpu = interleaved_median(
            {
                "ours": lambda: cpu_us_per_op(ours, secs),
                "requests": lambda: cpu_us_per_op(plain, secs),
            },
            self.cfg.reps,
            self.ours_cases({"ours"}),
        )
        session.close()
        return Row(
            "client CPU per GET 10 KiB, 1 client",
            "us",
            ours=cpu["ours"],
            official=self.official_get_cpu_us,
            requests=cpu["requests"],
        )

    # (b) large single-stream GET

    def get_big(self, size: int) -> list[Row]:
        reps, name = self.cfg.reps, big_name(size)
        obj = self.big.object(name)
        label = f"GET {size // GiB} GiB" if size >= GiB else f"GET {size // MiB} MiB"

        def ours_read_all() -> float:
            t0 = time.perf_counter()
            data = obj.get_reader().read_all()
            secs = time.perf_counter() - t0
            self.check_big(data, size)
            return secs

        def ours_iter() -> None:
            got = sum(len(c) for c in obj.get_reader(chunk_size=MiB))
            if got != size:
                raise RuntimeError(f"iteration read {got} bytes")

        view = memoryview(bytearray(size))
        # read_all() is timed until it returns (as the official SDK's, _official_core.py): the
        # 1-2 GiB result is dropped after the check, outside the time.

        def ours_readinto() -> None:
            with obj.get_reader().as_file() as f:
                got = 0
                while n := f.readinto(view[got:]):
                    got += n
            self.check_big(view[:got], size)

        curl_cmd = ["curl", "-sS", "--fail", "-o", "/dev/null", self.object_url("bench-big", name)]

        def official() -> float | None:
            res = self.official("get-big", "bench-big", name, "1")
            return res and res["seconds"][0]

        def loopback() -> float | None:
            try:
                return loopback_seconds(size)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                self.notes.append(f"loopback not measured: {e}")
                return None

        ours: dict[str, Callable[[], float]] = {
            "read_all()": ours_read_all,
            "iter 1 MiB": timed(ours_iter),
            "as_file().readinto": timed(ours_readinto),
        }
        secs = interleaved_median(
            {
                **ours,
                "curl": timed(lambda: run(curl_cmd)),
                "official": official,
                "loopback": loopback,
            },
            reps,
            self.ours_cases(set(ours)),
        )
        gbps = {k: v and size / v / 1e9 for k, v in secs.items()}
        if gbps["loopback"]:
            self.notes.append(
                f"loopback TCP measured: {gbps['loopback']:.2f} GB/s (socket pump, {label})"
            )
        else:
            gbps["loopback"] = DOCUMENTED_LOOPBACK_GBPS
            self.notes.append(f"limit: documented loopback {DOCUMENTED_LOOPBACK_GBPS} GB/s")
        rows = []
        for how in ours:
            row = Row(f"{label} chunked, 1 stream, ours {how}", "GB/s", tool_name="curl")
            row.ours, row.official, row.tool = gbps[how], gbps["official"], gbps["curl"]
            row.limit = gbps["loopback"]
            row.goals.append(goal("vs official", row.ours, row.official, GOAL_VS_OFFICIAL))
            row.goals.append(goal("vs curl", row.ours, row.tool, GOAL_VS_CURL))
            rows.append(row)
        return rows

    # (c) listing

    def fill_listed(self, n: int) -> str:
        """A bucket of `n` objects of 1 KiB named `d/obj-NNNNNNN`, 1/4 per mountpath, promoted from
        local files (the server's own write path, no HTTP per object) and timed for a note."""
        name = f"bench-list-{n}"
        bucket = self.client.bucket(name).create(exist_ok=True)
        src = self.srv_promote_root / name
        src.mkdir()
        data = os.urandom(LISTED_SIZE)
        t0 = time.perf_counter()
        for i in range(n):
            (src / f"obj-{i:07d}").write_bytes(data)
        job = bucket.object("d").promote(str(src), recursive=True, delete_source=True)
        self.client.job(job).wait(timeout=24 * 3600)
        self.notes.append(f"{n:,} objects to list: filled in {time.perf_counter() - t0:.0f} s")
        return name

    def list_all(self, n: int) -> list[Row]:
        """Five rows: the first listing after the fill (the server knows the headers it wrote),
        the first after a restart of the server (it saved the headers it knew when it stopped),
        the first after a crash (every object's header read from its file), the first after a
        crash that came after a periodic save of the headers, and later ones (the server keeps
        the headers with its directory cache)."""
        name, reps = self.fill_listed(n), self.cfg.reps
        bucket = self.client.bucket(name)
        url = f"{self.endpoint}/v1/buckets/{name}?provider=ais"

        def count(entries: Any) -> None:
            got = sum(1 for _ in entries)
            if got != n:
                raise RuntimeError(f"listed {got} of {n} objects")

        label = f"list {n // 1000}K objects" if n < 1_000_000 else f"list {n // 1_000_000}M objects"
        written = Row(f"{label}, first listing after the fill", "s")
        written.ours = timed(lambda: count(bucket.list_objects_iter()))()
        self.client.job(bucket.create_inventory(name="bench")).wait(timeout=3600)
        self.srv.restart()  # same mountpaths and port: SIGTERM, the server saves what it knew
        restarted = Row(f"{label}, first listing after a restart", "s")
        restarted.ours = timed(lambda: count(bucket.list_objects_iter()))()
        self.srv.kill()  # SIGKILL: nothing saved, nothing kept in the server's memory
        self.srv.start()
        first = Row(f"{label}, first listing after a crash", "s", tool_name="inventory")
        first.ours = timed(lambda: count(bucket.list_objects_iter()))()
        first.tool = timed(lambda: count(bucket.list_objects_iter(inventory_name="bench")))()
        if first.ours and first.tool:
            ok = first.ours >= GOAL_INVENTORY_SPEEDUP * first.tool
            first.goals.append(
                f"inventory ≥ {GOAL_INVENTORY_SPEEDUP:g}× faster: {'ok' if ok else 'MISS'}"
            )
        # The running server saves the headers it knows every HEADER_SNAPSHOT_MS when they
        # changed, leaving out directories changed within the last 2 s: wait for one such save.
        time.sleep(HEADER_SNAPSHOT_MS / 1000 + 3)
        self.srv.kill()
        self.srv.start()
        saved = Row(f"{label}, first listing after a crash, headers saved while running", "s")
        saved.ours = timed(lambda: count(bucket.list_objects_iter()))()

        def pages() -> None:  # the server's share: pages fetched, not decoded
            token, uuid = "", ""
            with requests.Session() as s:
                while True:
                    value = {"continuation_token": token, "uuid": uuid}
                    resp = s.get(
                        url,
                        headers={"Accept": "application/msgpack"},
                        json={"action": "list", "value": value},
                        timeout=60,
                    )
                    resp.raise_for_status()
                    page = PAGE_HEAD.decode(resp.content)
                    token, uuid = page.ContinuationToken, page.UUID
                    if not token:
                        break

        def official() -> float | None:
            res = self.official("list", name, "1")
            if res and res["count"] != n:
                raise RuntimeError(f"the official SDK listed {res['count']} of {n} objects")
            return res and res["seconds"][0]

        secs = interleaved_median(
            {
                "ours": timed(lambda: count(bucket.list_objects_iter())),
                "pages": timed(pages),
                "inventory": timed(lambda: count(bucket.list_objects_iter(inventory_name="bench"))),
                "official": official,
            },
            reps,
            self.ours_cases({"ours", "inventory"}),
        )
        row = Row(
            label,
            "s",
            ours=secs["ours"],
            official=secs["official"],
            requests=secs["pages"],
            tool=secs["inventory"],
            tool_name="inventory",
        )
        if n == 100_000:
            for r in (written, restarted, first, saved, row):
                ok = r.ours is not None and r.ours <= GOAL_LIST_100K_SECONDS
                r.goals.insert(0, f"≤ {GOAL_LIST_100K_SECONDS} s: {'ok' if ok else 'MISS'}")
        return [written, restarted, first, saved, row]

    # (c) PUT

    def put_objects(self, size: int, conc: int) -> Row:
        """PUT of new `size`-byte objects from `conc` clients, objects/s."""
        secs = self.cfg.seconds
        data = os.urandom(size)
        sessions = [requests.Session() for _ in range(conc)]
        names = itertools.count()  # every PUT creates a new object
        label = f"{size // KiB} KiB" if size < MiB else f"{size // MiB} MiB"
        tag = label.replace(" ", "")

        def ours(_: int, __: int) -> None:
            self.put.object(f"put-ours-{tag}-{next(names):08d}").get_writer().put_content(data)

        def plain(t: int, __: int) -> None:
            url = self.object_url("bench-put", f"put-requests-{tag}-{next(names):08d}")
            sessions[t].put(url, data=data).raise_for_status()

        def official() -> float | None:
            res = self.official("put-small", "bench-put", str(size), str(conc), str(secs))
            return res and res["rate"]

        # wrk: every request a new name (thread id, round, counter), the same body.
        lua = self.scratch / f"put-{tag}.lua"
        body = self.scratch / f"put-{tag}.bin"
        body.write_bytes(data)
        lua.write_text(
            f'local f = io.open("{body}", "rb")\n'
            "local body = f:read('*a')\n"
            "f:close()\n"
            "local threads, n = 0, 0\n"
            "setup = function(thread) thread:set('tid', threads); threads = threads + 1 end\n"
            "init = function() round = tostring(math.random(1, 1e9)) end\n"
            "request = function()\n"
            "  n = n + 1\n"
            "  local path = string.format('/v1/objects/bench-put/put-wrk-%s-%d-%d?provider=ais',"
            " round, tid, n)\n"
            "  return wrk.format('PUT', path, nil, body)\n"
            "end\n"
        )

        def emptied(case: Callable[[], float | None]) -> Callable[[], float | None]:
            # The objects a case wrote are dropped after it (untimed): gigabytes of them would
            # otherwise fill the page cache (or the tmpfs) under the cases that follow.
            def run_case() -> float | None:
                rate = case()
                self.put.delete()
                self.put.create()
                time.sleep(0.5)  # the old bucket's files go in the background
                return rate

            return run_case

        rates = interleaved_median(
            {
                "ours": emptied(lambda: rate_in_threads(ours, conc, secs)),
                "requests": emptied(lambda: rate_in_threads(plain, conc, secs)),
                "official": emptied(official),
                "wrk": emptied(wrk_case(lua, conc, secs, self.endpoint)),
            },
            self.cfg.reps,
            self.ours_cases({"ours"}),
        )
        for sess in sessions:
            sess.close()
        row = Row(
            f"PUT {label}, {conc} client{'s' if conc > 1 else ''}",
            "obj/s",
            ours=rates["ours"],
            official=rates["official"],
            requests=rates["requests"],
            tool=rates["wrk"],
            tool_name="wrk",
        )
        if size == SMALL_SIZE and conc > 1:
            row.goals.append(goal_rate(row.ours, GOAL_PUT_SMALL_RATE))
            row.goals.append(goal("vs official", row.ours, row.official, GOAL_PUT_VS_OFFICIAL))
        return row

    def put_big(self) -> Row:
        path, size, reps = self.put_file, self.cfg.put_big_size, self.cfg.reps
        session = requests.Session()
        # Every PUT creates a new object (overwriting one would also time dropping the old
        # version's pages), deleted after its case so the data set stays one object large.
        names = (f"put-big-{i:03d}" for i in itertools.count())

        def timed_put(put: Callable[[str], None]) -> Callable[[], float]:
            def case() -> float:
                name = next(names)
                t0 = time.perf_counter()
                put(name)
                secs = time.perf_counter() - t0
                self.put.object(name).delete()
                return secs

            return case

        def ours(name: str) -> None:
            self.put.object(name).get_writer().put_file(path)

        def plain(name: str) -> None:
            with open(path, "rb") as f:
                session.put(self.object_url("bench-put", name), data=f).raise_for_status()

        def curl(name: str) -> None:
            url = self.object_url("bench-put", name)
            run(["curl", "-sS", "--fail", "-o", "/dev/null", "-T", str(path), url])

        def official() -> float | None:
            # The script's own timing, without its interpreter's start.
            name = next(names)
            res = self.official("put-file", "bench-put", name, str(path), "1")
            if not res:
                return None
            self.put.object(name).delete()
            return float(res["seconds"][0])

        secs = interleaved_median(
            {
                "ours": timed_put(ours),
                "requests": timed_put(plain),
                "curl": timed_put(curl),
                "official": official,
            },
            reps,
            self.ours_cases({"ours"}),
        )
        session.close()
        gbps = {k: v and size / v / 1e9 for k, v in secs.items()}
        row = Row(
            f"PUT {size // MiB} MiB file, 1 client",
            "GB/s",
            ours=gbps["ours"],
            official=gbps["official"],
            requests=gbps["requests"],
            tool=gbps["curl"],
            tool_name="curl",
        )
        if row.ours is not None:
            row.goals.append(
                f"≥ {GOAL_PUT_BIG_GBPS} GB/s: {'ok' if row.ours >= GOAL_PUT_BIG_GBPS else 'MISS'}"
            )
        return row


def goal_rate(value: float | None, least: float) -> str:
    """`≥ least/s: ok|MISS`."""
    text = f"≥ {least:,.0f}/s"
    return f"{text}: n/a" if not value else f"{text}: {'ok' if value >= least else 'MISS'}"


def goal(name: str, value: float | None, base: float | None, min_ratio: float) -> str:
    """`name ≥ k×: ok|MISS` for value / base against min_ratio."""
    text = f"{name} ≥ {min_ratio:g}×"
    if not value or not base:
        return f"{text}: n/a"
    return f"{text}: {'ok' if value >= min_ratio * base else 'MISS'}"


# -- output ---------------------------------------------------------------------------------


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "GB/s":
        return f"{value:.2f}"
    if unit == "s":
        return f"{value:.3f}"
    if unit == "us":
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def ratio(a: float | None, b: float | None, unit: str = "") -> str:
    """How many times ours (`a`) is the peer (`b`): for times and costs, the peer's over ours."""
    if not a or not b:
        return "—"
    return f"{b / a:.2f}×" if unit in LOWER_IS_BETTER else f"{a / b:.2f}×"


def render(rows: list[Row]) -> str:
    header = [
        "case",
        "unit",
        "ours",
        "official",
        "requests",
        "wrk/curl",
        "ours/off",
        "ours/req",
        "ours/tool",
        "of limit",
        "goals",
    ]
    lines = [header]
    for r in rows:
        limit = f"{r.ours / r.limit:.0%}" if r.ours and r.limit else "—"
        lines.append(
            [
                r.case,
                r.unit,
                fmt(r.ours, r.unit),
                fmt(r.official, r.unit),
                fmt(r.requests, r.unit),
                f"{fmt(r.tool, r.unit)} {r.tool_name}",
                ratio(r.ours, r.official, r.unit),
                ratio(r.ours, r.requests, r.unit),
                ratio(r.ours, r.tool, r.unit),
                limit,
                "; ".join(r.goals),
            ]
        )
    figures = range(2, 10)
    return render_table(lines, left=[i for i in range(len(header)) if i not in figures])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small, fast run (~40 s)")
    ap.add_argument("--json", metavar="PATH", help="also write all measurements as JSON")
    ap.add_argument(
        "--ours-only", action="store_true", help="measure our client only (no peers, no limit)"
    )
    ap.add_argument(
        "--list-1m",
        action="store_true",
        help="also list 1M objects (fill: ~2 min on tmpfs, longer on disk)",
    )
    ap.add_argument(
        "--only",
        choices=("get", "list", "put"),
        action="append",
        help="run only these groups of cases (repeatable; default: all)",
    )
    args = ap.parse_args()
    groups = set(args.only or ("get", "list", "put"))
    cfg = Config.quick() if args.quick else Config()
    cfg.ours_only = args.ours_only
    if args.list_1m:
        cfg.list_sizes = (*cfg.list_sizes, 1_000_000)
    if not cfg.ours_only and (not shutil.which("wrk") or not shutil.which("curl")):
        sys.exit("benchmarks/core.py needs wrk and curl (apt-get install wrk curl)")

    load_before = os.getloadavg()[0]
    scratch = Path(tempfile.mkdtemp(prefix="ais-bench-"))
    try:
        promote_root = scratch / "promote"
        promote_root.mkdir()
        with LocalServer(
            num_mountpaths=4,
            promote_root=promote_root,
            args=["--header-snapshot-interval", str(HEADER_SNAPSHOT_MS)],
        ) as srv:
            bench = CoreBench(srv, cfg, scratch)
            if "get" not in groups:
                cfg.big_sizes = ()
            bench.load()
            rows = []
            if "get" in groups:
                rows += [bench.get_small(1), bench.get_small_cpu(), bench.get_small(16)]
                rows += [row for size in cfg.big_sizes for row in bench.get_big(size)]
            if "list" in groups:
                rows += [row for n in cfg.list_sizes for row in bench.list_all(n)]
            if "put" in groups:
                rows += [
                    bench.put_objects(SMALL_SIZE, 1),
                    bench.put_objects(SMALL_SIZE, PUT_CLIENTS),
                    bench.put_objects(MiB, PUT_CLIENTS),
                    bench.put_big(),
                ]
            load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
            notes = [*bench.notes, f"{load} (other work on the machine skews every figure)"]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(
        f"# aistore core benchmark ({'quick' if args.quick else 'full'}): {os.cpu_count()} cores, "
        f"server with 4 mountpaths, {cfg.small_objects} × 10 KiB objects, "
        f"median of {cfg.reps} interleaved round(s), {cfg.seconds:g} s per rate round"
    )
    print(render(rows))
    for note in notes:
        print(f"# {note}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "config": asdict(cfg),
                    "notes": notes,
                    "rows": [asdict(r) for r in rows],
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
