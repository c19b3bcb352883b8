#!/usr/bin/env python3
"""Ours against the real thing: our SDK and server beside the official SDK and a real AIStore
cluster, in one run (issue 41's table).

Starts two stacks itself: our server (``LocalServer``, 4 mountpaths under ``$TMPDIR``) and a
real AIStore cluster, 1 proxy + 3 targets of the official ``aisnode`` on loopback
(``../shared/tools/ais/ais-cluster.sh``, or ``$AIS_TOOLS_DIR``; without it the cluster columns
stay empty and say why). Each stack gets the same data, then in rounds (the median shown; within
a round the clients take turns, so a change in the machine's load hits all alike):

* 10 KiB GETs (``get_reader().read_all()``) from 1 and 8 threads, 10 KiB PUTs from 8 threads,
  objects/s: the official SDK 2.0.0 (own venv) on the cluster, ours on the cluster, ours on ours;
* GetBatch of 1,000 x 10 KiB objects (batches of 100), objects/s;
* a full listing of ``--listed`` objects of 1 byte, seconds;
* one ``read_all()`` of a ``--big`` object, GB/s, and ``curl -o /dev/null`` of it from each stack
  (the wire); ``read_all(num_workers=8)`` (ours);
* a DataLoader epoch over ``--samples`` x 10 KiB with 2 workers through ``AISMapDataset`` and
  ``AISIterDataset`` (batch 32), samples/s, beside plain ``open().read()`` of the same bytes as
  local files through the same DataLoader;
* ``wrk`` GETs of 10 KiB objects straight to one target, requests/s: our server vs an aisnode
  target (only the objects that target owns, so it never redirects).

Each row shows the ratio its goal is about, beside the goal (issue 41): one stream >= 0.85 of
curl on our server; one-thread GETs >= 10,000/s on ours, 8 threads above 1; DataLoader >= 50% of
local files; on the cluster our SDK >= 4x the official one on every small-object row; wrk on our
server >= 2x the aisnode target.

Usage:
    python3 benchmarks/vs_aisnode.py            # 1 GiB, 100K listed, 5,000 samples, 3 rounds
    python3 benchmarks/vs_aisnode.py --quick    # 64 MiB, 5K listed, 1,000 samples, 1 round
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aistore import Client
from aistore.sdk.bucket import Bucket
from aistore.server import LocalServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.append(str(REPO / "tests" / "compat"))
import official_sdk  # noqa: E402
from _loader import time_epoch  # noqa: E402
from _table import render_table  # noqa: E402
from core import interleaved_median, parse_wrk_rate, rate_in_threads, run  # noqa: E402

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SMALL = 10 * KiB
TOOLS = Path(os.environ.get("AIS_TOOLS_DIR", REPO.parent / "shared" / "tools" / "ais"))
CLUSTER_SH = TOOLS / "ais-cluster.sh"
OFFICIAL_CORE = (HERE / "_official_core.py").read_text()
OFFICIAL_BATCH = (HERE / "_official_getbatch.py").read_text()
OFFICIAL_LOADER = (HERE / "_official_dataloader.py").read_text()
OFFICIAL, OURS_CLUSTER, OURS = "official -> cluster", "ours -> cluster", "ours -> ours"


@dataclass
class Config:
    objects: int = 1000  # distinct 10 KiB objects the GET cases cycle through
    seconds: float = 3.0
    big: int = 1 * GiB
    listed: int = 100_000
    samples: int = 5000
    rounds: int = 3
    targets: int = 3
    # The cluster's proxy; its nodes take the next ports and +100, +200. Below Linux's ephemeral
    # range (32768-60999), where client connections in TIME_WAIT would keep a listener out.
    port: int = 23_700

    @classmethod
    def quick(cls) -> Config:
        return cls(objects=200, seconds=1.0, big=64 * MiB, listed=5000, samples=1000, rounds=1)


@dataclass
class Row:
    case: str
    unit: str
    cells: dict[str, float | None] = field(default_factory=dict)
    ratio: str = ""
    goal: str = ""


class Stack:
    """One server (ours, or a cluster's proxy) holding the benchmark's data."""

    def __init__(self, name: str, endpoint: str, cfg: Config) -> None:
        self.name, self.endpoint, self.cfg = name, endpoint, cfg
        self.client = Client(endpoint, max_pool_size=16)
        self.small = self._bucket("vs-small")
        self.big = self._bucket("vs-big")
        self.listed = self._bucket("vs-list")
        self.epoch = self._bucket("vs-epoch")
        self.put = self._bucket("vs-put")

    def _bucket(self, name: str) -> Bucket:
        return self.client.bucket(name).create(exist_ok=True)

    def fill(self, big: Path) -> None:
        body = os.urandom(SMALL)

        def put(bucket: Bucket, name: str) -> None:
            bucket.object(name).get_writer().put_content(b"x" if bucket is self.listed else body)

        with ThreadPoolExecutor(8) as pool:
            names = [(self.small, f"obj-{i:06d}") for i in range(self.cfg.objects)]
            names += [(self.listed, f"l-{i:07d}") for i in range(self.cfg.listed)]
            names += [(self.epoch, f"s-{i:06d}") for i in range(self.cfg.samples)]
            list(pool.map(lambda bn: put(*bn), names))
        self.big.object("big").get_writer().put_file(str(big))

    def official(self, script: str, *args: str, torch: bool = False) -> Any:
        return official_sdk.run_script(script, self.endpoint, args, timeout=1800, with_torch=torch)


@contextmanager
def real_cluster(cfg: Config, notes: list[str]) -> Iterator[str | None]:
    if not os.access(CLUSTER_SH, os.X_OK):
        notes.append(f"no real cluster: {CLUSTER_SH} is absent (set AIS_TOOLS_DIR)")
        yield None
        return
    root = Path(tempfile.mkdtemp(prefix="vs-aisnode-"))
    try:
        try:
            out = run([str(CLUSTER_SH), "start", str(root / "c"), str(cfg.port), str(cfg.targets)])
        except RuntimeError as e:
            logs = sorted((root / "c").glob("node*/log/*.log"))
            tails = [
                f"--- {p}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-5:])
                for p in logs
            ]
            raise RuntimeError("\n".join([str(e), *tails])) from None
        endpoint = out.stdout.strip().splitlines()[-1]
        deadline = time.monotonic() + 60
        while len(Client(endpoint).cluster().get_info().tmap) < cfg.targets:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{cfg.targets} targets did not join {endpoint}")
            time.sleep(0.5)
        yield endpoint
    finally:
        try:  # its stop removes every object file: minutes for a large data set on a busy disk
            subprocess.run([str(CLUSTER_SH), "stop", str(root / "c")], check=False, timeout=900)
        except subprocess.TimeoutExpired:
            print(f"# the cluster in {root} did not stop within 15 min", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)


class Bench:
    def __init__(self, cfg: Config, stacks: dict[str, Stack], scratch: Path) -> None:
        self.cfg, self.stacks, self.scratch = cfg, stacks, scratch
        self.notes: list[str] = []
        self.official_error: str | None = None

    def cluster(self) -> Stack | None:
        return self.stacks.get("cluster")

    def _official(self, script: str, *args: str, torch: bool = False) -> Any:
        stack = self.cluster()
        if stack is None or self.official_error:
            return None
        try:
            return stack.official(script, *args, torch=torch)
        except official_sdk.VenvError as e:
            self.official_error = str(e).splitlines()[0]
            self.notes.append(f"official SDK not run: {self.official_error}")
            return None

    def _cases(
        self, ours: Callable[[Stack], float | None], official: Callable[[], float | None] | None
    ) -> dict[str, Callable[[], float | None]]:
        cases: dict[str, Callable[[], float | None]] = {}
        if official is not None and self.cluster() is not None:
            cases[OFFICIAL] = official
        if (cl := self.cluster()) is not None:
            cases[OURS_CLUSTER] = lambda: ours(cl)
        cases[OURS] = lambda: ours(self.stacks["ours"])
        return cases

    def _median(self, cases: dict[str, Callable[[], float | None]]) -> dict[str, float | None]:
        return interleaved_median(cases, self.cfg.rounds)

    # -- rows ------------------------------------------------------------------------------

    def get_small(self, conc: int) -> Row:
        n, secs = self.cfg.objects, self.cfg.seconds

        def ours(stack: Stack) -> float:
            def op(_: int, i: int) -> None:
                stack.small.object(f"obj-{i % n:06d}").get_reader().read_all()

            return rate_in_threads(op, conc, secs)

        def official() -> float | None:
            res = self._official(
                OFFICIAL_CORE, "get-small", "vs-small", str(n), str(conc), str(secs)
            )
            return res and res["rate"]

        return Row(
            f"GET 10 KiB, {conc} thread{'s' if conc > 1 else ''}",
            "obj/s",
            self._median(self._cases(ours, official)),
        )

    def put_small(self, conc: int) -> Row:
        secs = self.cfg.seconds
        body = os.urandom(SMALL)

        def ours(stack: Stack) -> float:
            stamp = time.monotonic_ns()

            def op(t: int, i: int) -> None:
                stack.put.object(f"p-{stamp}-{t}-{i}").get_writer().put_content(body)

            return rate_in_threads(op, conc, secs)

        def official() -> float | None:
            res = self._official(
                OFFICIAL_CORE, "put-small", "vs-put", str(SMALL), str(conc), str(secs)
            )
            return res and res["rate"]

        return Row(
            f"PUT 10 KiB, {conc} threads", "obj/s", self._median(self._cases(ours, official))
        )

    def getbatch(self, items: int = 1000, batch: int = 100) -> Row:
        n = self.cfg.objects
        names = [f"obj-{i % n:06d}" for i in range(items)]

        def ours(stack: Stack) -> float:
            got = 0
            t0 = time.perf_counter()
            for start in range(0, items, batch):
                for _, data in stack.client.batch(
                    names[start : start + batch], bucket=stack.small
                ).get():
                    got += len(data) == SMALL
            if got != items:
                raise RuntimeError(f"GetBatch delivered {got} of {items}")
            return items / (time.perf_counter() - t0)

        def official() -> float | None:
            res = self._official(OFFICIAL_BATCH, "vs-small", "obj-", str(n), str(batch), str(items))
            return res and res["items"] / res["seconds"]

        return Row(f"GetBatch {items} x 10 KiB", "obj/s", self._median(self._cases(ours, official)))

    def listing(self) -> Row:
        def ours(stack: Stack) -> float:
            t0 = time.perf_counter()
            count = sum(1 for _ in stack.listed.list_objects_iter())
            if count != self.cfg.listed:
                raise RuntimeError(f"listed {count} of {self.cfg.listed}")
            return time.perf_counter() - t0

        def official() -> float | None:
            res = self._official(OFFICIAL_CORE, "list", "vs-list", "1")
            return res and res["seconds"][0]

        return Row(
            f"list {self.cfg.listed:,} objects", "s", self._median(self._cases(ours, official))
        )

    def big_reads(self) -> list[Row]:
        size = self.cfg.big

        def ours(stack: Stack) -> float:
            t0 = time.perf_counter()
            data = stack.big.object("big").get_reader().read_all()
            secs = time.perf_counter() - t0
            if len(data) != size:
                raise RuntimeError(f"read_all returned {len(data)} bytes")
            return size / secs / 1e9

        def parallel(stack: Stack) -> float:
            t0 = time.perf_counter()
            buf = stack.big.object("big").get_reader(num_workers=8).read_all()
            secs = time.perf_counter() - t0
            if len(buf) != size:
                raise RuntimeError(f"parallel read_all returned {len(buf)} bytes")
            buf.close()
            return size / secs / 1e9

        def curl(stack: Stack) -> float:
            url = f"{stack.endpoint}/v1/objects/vs-big/big?provider=ais"
            out = run(
                ["curl", "-sfL", "-o", "/dev/null", "-w", "%{size_download} %{time_total}", url]
            )
            got, secs = out.stdout.split()
            if int(got) != size:
                raise RuntimeError(f"curl got {got} bytes")
            return size / float(secs) / 1e9

        def official() -> float | None:
            res = self._official(OFFICIAL_CORE, "get-big", "vs-big", "big", "1")
            return res and size / res["seconds"][0] / 1e9

        label = f"{size // GiB} GiB" if size >= GiB else f"{size // MiB} MiB"
        return [
            Row(f"curl GET {label} (the wire)", "GB/s", self._median(self._cases(curl, None))),
            Row(
                f"read_all() {label}, one stream", "GB/s", self._median(self._cases(ours, official))
            ),
            Row(
                f"read_all(num_workers=8) {label}",
                "GB/s",
                self._median(self._cases(parallel, None)),
            ),
        ]

    def epochs(self) -> list[Row]:
        from dataloader import LocalFiles

        from aistore.pytorch import AISIterDataset, AISMapDataset  # the torch extra

        local = self.scratch / "local"
        local.mkdir(exist_ok=True)
        body = os.urandom(SMALL)
        for i in range(self.cfg.samples):
            (local / f"s-{i:06d}").write_bytes(body)
        rows = []
        for kind, cls in (("map", AISMapDataset), ("iter", AISIterDataset)):

            def ours(stack: Stack, cls: Any = cls) -> float:
                epoch = time_epoch(lambda: cls(stack.client.bucket("vs-epoch")), 2, 32)
                if epoch.samples != self.cfg.samples:
                    raise RuntimeError(f"epoch delivered {epoch.samples} samples")
                return epoch.rate

            def official(kind: str = kind) -> float | None:
                job = {
                    "mode": "epoch",
                    "dataset": kind,
                    "bucket": "vs-epoch",
                    "workers": 2,
                    "batch_size": 32,
                    "limit": None,
                }
                res = self._official(OFFICIAL_LOADER, str(HERE), json.dumps(job), torch=True)
                return res and res["samples"] / res["seconds"]

            name = "AISMapDataset" if kind == "map" else "AISIterDataset"
            rows.append(
                Row(
                    f"DataLoader epoch {self.cfg.samples:,} x 10 KiB, {name} w=2",
                    "samples/s",
                    self._median(self._cases(ours, official)),
                )
            )
        local_rate = interleaved_median(
            {OURS: lambda: time_epoch(lambda: LocalFiles(local), 2, 32).rate}, self.cfg.rounds
        )
        rows.append(Row("DataLoader epoch, local files w=2", "samples/s", local_rate))
        return rows

    def wrk_target(self) -> Row:
        if shutil.which("wrk") is None:
            self.notes.append("wrk not installed: no per-request server row")
            return Row("wrk GET 10 KiB at a target, 16 conns", "req/s")
        ours_stack, cl = self.stacks["ours"], self.cluster()
        cells: dict[str, Callable[[], float | None]] = {}

        def wrk(url: str, names: list[str], bucket: str) -> float:
            lua = self.scratch / f"wrk-{bucket}-{len(names)}.lua"
            listed = ",".join(f'"{n}"' for n in names)
            lua.write_text(
                f"local names, i = {{{listed}}}, 0\n"
                "request = function()\n"
                "  i = i % #names + 1\n"
                f'  return wrk.format("GET", "/v1/objects/{bucket}/" .. names[i]'
                ' .. "?provider=ais")\n'
                "end\n"
            )
            secs = str(max(1, round(self.cfg.seconds)))
            out = run(["wrk", "-t2", "-c16", f"-d{secs}s", "-s", str(lua), url])
            return parse_wrk_rate(out.stdout)

        n = self.cfg.objects
        all_names = [f"obj-{i:06d}" for i in range(n)]
        cells[OURS] = lambda: wrk(ours_stack.endpoint, all_names, "vs-small")
        if cl is not None:
            smap = cl.client.cluster().get_info()
            target = next(iter(smap.tmap.values()))
            assert target.public_net is not None
            owned = [
                m
                for m in all_names
                if smap.get_target_for_object(cl.small.object(m).uname).daemon_id
                == target.daemon_id
            ]
            cells["aisnode target"] = lambda: wrk(target.public_net.direct_url, owned, "vs-small")  # type: ignore[union-attr]
        return Row(
            "wrk GET 10 KiB at a target, 16 conns",
            "req/s",
            interleaved_median(cells, self.cfg.rounds),
        )


def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    if unit in ("GB/s", "s"):
        return f"{v:.3f}" if v < 10 else f"{v:.1f}"
    return f"{v:,.0f}"


def judge(rows: list[Row]) -> None:
    """Each row's ratio and goal (issue 41)."""
    by = {r.case: r for r in rows}

    def ok(x: float, least: float) -> str:
        return "ok" if x >= least else "MISS"

    def versus(r: Row, least: float, speed_is_time: bool = False) -> None:
        o, u = r.cells.get(OFFICIAL), r.cells.get(OURS_CLUSTER)
        if o and u:
            x = o / u if speed_is_time else u / o
            r.ratio = f"{x:.2f}x vs official"
            r.goal = f">= {least:g}x: {ok(x, least)}"

    for r in rows:
        if r.case.startswith(("GET 10 KiB", "PUT 10 KiB", "GetBatch")):
            versus(r, 4.0)
        elif r.case.startswith("list "):
            versus(r, 4.0, speed_is_time=True)
    one = next((r for r in rows if r.case == "GET 10 KiB, 1 thread"), None)
    eight = next((r for r in rows if r.case == "GET 10 KiB, 8 threads"), None)
    if one and (v := one.cells.get(OURS)):
        one.goal = "; ".join(filter(None, [one.goal, f"ours >= 10,000/s: {ok(v, 10_000)}"]))
    if one and eight and (a := one.cells.get(OURS)) and (b := eight.cells.get(OURS)):
        scaled = f"ours 8 > 1 thread ({b / a:.2f}x): {ok(b / a, 1.0001)}"
        eight.goal = "; ".join(filter(None, [eight.goal, scaled]))
    curl = next((r for r in rows if r.case.startswith("curl GET")), None)
    single = next((r for r in rows if r.case.startswith("read_all()")), None)
    if curl and single and (c := curl.cells.get(OURS)) and (s := single.cells.get(OURS)):
        single.ratio = f"{s / c:.2f} of curl (ours)"
        single.goal = f">= 0.85: {ok(s / c, 0.85)}"
    local = by.get("DataLoader epoch, local files w=2")
    if local and (lr := local.cells.get(OURS)):
        for r in rows:
            if (
                r.case.startswith("DataLoader epoch ")
                and r is not local
                and (v := r.cells.get(OURS))
            ):
                vs_official = f"; {r.ratio}" if r.ratio else ""
                r.ratio = f"{v / lr:.2f} of local{vs_official}"
                r.goal = f">= 0.5 of local: {ok(v / lr, 0.5)}"
                o, u = r.cells.get(OFFICIAL), r.cells.get(OURS_CLUSTER)
                if o and u:
                    r.ratio += f", {u / o:.2f}x vs official"
    wrk = by.get("wrk GET 10 KiB at a target, 16 conns")
    if wrk and (a := wrk.cells.get(OURS)) and (b := wrk.cells.get("aisnode target")):
        wrk.ratio = f"{a / b:.2f}x vs aisnode"
        wrk.goal = f">= 2x: {ok(a / b, 2.0)}"


def render(rows: list[Row]) -> str:
    cols = [OFFICIAL, OURS_CLUSTER, OURS]
    lines = [["case", "unit", *cols, "ratio", "goal"]]
    for r in rows:
        cells = dict(r.cells)
        if "aisnode target" in cells:  # wrk: the aisnode target sits in the cluster's column
            cells[OURS_CLUSTER] = cells.pop("aisnode target")
        lines.append([r.case, r.unit, *(fmt(cells.get(c), r.unit) for c in cols), r.ratio, r.goal])
    return render_table(lines, left=(0, 1, 5, 6))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small, fast run (~3 min)")
    ap.add_argument("--rounds", type=int, help="rounds per case (median shown)")
    ap.add_argument("--listed", type=int, help="objects in the listing case")
    ap.add_argument("--samples", type=int, help="10 KiB samples of the DataLoader epochs")
    ap.add_argument("--big-mib", type=int, help="size of the big object, MiB")
    ap.add_argument("--no-cluster", action="store_true", help="our server only")
    ap.add_argument("--no-dataloader", action="store_true", help="skip the DataLoader rows")
    args = ap.parse_args()
    cfg = Config.quick() if args.quick else Config()
    if args.rounds:
        cfg.rounds = args.rounds
    if args.listed:
        cfg.listed = args.listed
    if args.samples:
        cfg.samples = args.samples
    if args.big_mib:
        cfg.big = args.big_mib * MiB
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="vs-aisnode-") as tmp:
        scratch = Path(tmp)
        big = scratch / "big.bin"
        with open(big, "wb") as f:
            for _ in range(cfg.big // (64 * MiB) or 1):
                f.write(os.urandom(min(cfg.big, 64 * MiB)))
        srv = LocalServer(mountpaths=[scratch / f"mp{i}" for i in range(4)]).start()
        try:
            with real_cluster(cfg, notes) if not args.no_cluster else _none() as endpoint:
                stacks = {"ours": Stack("ours", srv.endpoint, cfg)}
                if endpoint:
                    stacks["cluster"] = Stack("cluster", endpoint, cfg)
                for s in stacks.values():
                    t0 = time.perf_counter()
                    s.fill(big)
                    print(f"# filled {s.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
                big.unlink()
                bench = Bench(cfg, stacks, scratch)
                rows = [
                    bench.get_small(1),
                    bench.get_small(8),
                    bench.put_small(8),
                    bench.getbatch(),
                    bench.listing(),
                ]
                rows += bench.big_reads()
                if not args.no_dataloader:
                    rows += bench.epochs()
                rows.append(bench.wrk_target())
                notes += bench.notes
                judge(rows)  # printed before the stacks go: stopping them takes a while
                print(render(rows))
                for n in notes:
                    print(f"note: {n}", flush=True)
        finally:
            srv.stop()


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()
