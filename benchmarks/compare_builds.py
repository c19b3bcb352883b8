#!/usr/bin/env python3
"""Two builds side by side: run benchmarks with interpreter A and interpreter B alternately,
in one run, and print one table of our client's figures with A, B, B/A and the noise.

Each interpreter is a Python whose installed `aistore` (package, extension and server binary)
is one build, e.g. a venv per git worktree::

    python3 -m venv --system-site-packages /tmp/old/.venv
    /tmp/old/.venv/bin/python -m pip install /tmp/old   # a worktree at the old commit

Both run the same benchmark scripts (this directory's, with ``--quick --ours-only --json``),
so only the build differs. A round runs every benchmark once with each build, the order
flipping from round to round (A B, then B A, ...), so a drift in the machine's load hits
both builds alike. A figure is the median of its rounds.

Noise: for each case, the spread of one build's own rounds, max/min - 1 (the A/A and B/B
columns); with 3 rounds this is a rough lower bound of the true noise. A case is flagged
WORSE when B is worse than A by more than max(A/A, B/B), i.e. by more than either build
differs from itself. Rates (objects/s, GB/s, MB/s) are higher-better; the CPU figures that
getbatch.py and parallel_download.py report (client and server CPU per object or per GiB) are
lower-better, and, unlike rates, hardly depend on what else runs on the machine.

Usage:
    python3 benchmarks/compare_builds.py --a /tmp/old/.venv/bin/python \\
        --b .venv/bin/python --rounds 3 [--bench core,getbatch,parallel_download] [--full]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _table import render_table

HERE = Path(__file__).resolve().parent
BENCHES = ("core", "getbatch", "parallel_download")
# Variables that would point a benchmark at another build, cluster or bucket.
_FOREIGN_ENV = ("PYTHONPATH", "PYTHONSAFEPATH", "AISTORE_SERVER_BIN", "AIS_ENDPOINT", "AIS_BUCKET")
_EXTRA_ARGS = {"parallel_download": ["--no-dataloader"]}


Figure = tuple[str, float, bool]  # unit, value, higher is better


def figures(bench: str, doc: dict[str, Any]) -> dict[str, Figure]:
    """Our client's figures in a benchmark's JSON: case → (unit, value, higher is better).
    Rates where the benchmark has them, and CPU per object or per GiB (client, server) where
    it reports them: CPU hardly depends on what else runs on the machine."""
    out: dict[str, Figure] = {}
    if bench == "core":
        for row in doc["rows"]:
            if row["ours"] is not None:
                out[row["case"]] = (row["unit"], row["ours"], True)
    elif bench == "getbatch":
        for row in doc["rows"]:
            size = row["size"]
            label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
            case = f"GetBatch {label} x {row['batch']}"
            if row["ours"] is not None:
                out[case] = ("obj/s", row["ours"], True)
            if row["ours_cpu"] is not None:
                out[f"{case} client cpu"] = ("us/obj", row["ours_cpu"][0], False)
                out[f"{case} server cpu"] = ("us/obj", row["ours_cpu"][1], False)
            if row["per_get"] is not None:
                out[f"GET per object {label}"] = ("obj/s", row["per_get"], True)
    else:
        for case, value in doc["figures"].items():
            if value is not None and case != "loopback":
                out[case] = (doc["unit"], value, True)
        for case, (client, server) in doc.get("cpu_s_per_gib", {}).items():
            out[f"{case} client cpu"] = ("cpu s/GiB", client, False)
            out[f"{case} server cpu"] = ("cpu s/GiB", server, False)
    return out


def describe(python: str) -> str:
    """Where the interpreter's aistore lives (the build a label stands for)."""
    code = (
        "import aistore, aistore._native; from aistore.server import find_server_binary; "
        "print(aistore.__file__.rsplit('/', 2)[0], find_server_binary())"
    )
    res = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, cwd="/", env=clean_env(), check=True
    )
    return res.stdout.strip()


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}


def run_once(python: str, bench: str, full: bool, out: Path) -> dict[str, Figure]:
    cmd = [python, str(HERE / f"{bench}.py"), "--ours-only", "--json", str(out)]
    cmd += _EXTRA_ARGS.get(bench, [])
    if not full:
        cmd.append("--quick")
    res = subprocess.run(cmd, capture_output=True, text=True, cwd="/", env=clean_env(), check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}")
    return figures(bench, json.loads(out.read_text()))


def spread(values: list[float]) -> float:
    return max(values) / min(values) - 1 if len(values) > 1 and min(values) > 0 else 0.0


def render(
    results: dict[str, dict[str, dict[str, list[float]]]], units: dict[str, tuple[str, bool]]
) -> tuple[str, list[float]]:
    """The table, and every case's noise (max of the two spreads)."""
    head = ["case", "unit", "A", "B", "B/A", "A/A", "B/B", ""]
    lines = [head]
    noises = []
    for bench, cases in results.items():
        for case, by in cases.items():
            a, b = by.get("A", []), by.get("B", [])
            if not a or not b:
                continue
            ma, mb = statistics.median(a), statistics.median(b)
            noise = max(spread(a), spread(b))
            noises.append(noise)
            unit, higher_better = units[case]
            gain = mb / ma if higher_better else ma / mb  # > 1: B is better
            flag = "WORSE" if gain < 1 - noise else ""
            fmt = ".2f" if unit in ("GB/s", "cpu s/GiB") else ",.0f"
            lines.append(
                [
                    f"{bench}: {case}",
                    unit + ("" if higher_better else " (lower better)"),
                    f"{ma:{fmt}}",
                    f"{mb:{fmt}}",
                    f"{mb / ma:.2f}",
                    f"±{spread(a):.0%}",
                    f"±{spread(b):.0%}",
                    flag,
                ]
            )
    return render_table(lines), noises


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="interpreter of build A (the baseline)")
    ap.add_argument("--b", required=True, help="interpreter of build B")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--bench", default=",".join(BENCHES), help="comma-separated, of " + ", ".join(BENCHES)
    )
    ap.add_argument("--full", action="store_true", help="the benchmarks' full runs, not --quick")
    ap.add_argument("--json", type=Path, help="also write every round's figures here")
    args = ap.parse_args()
    benches = [b for b in args.bench.split(",") if b]
    if unknown := set(benches) - set(BENCHES):
        sys.exit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    builds = {"A": args.a, "B": args.b}
    for label, python in builds.items():
        print(f"# {label}: {python}: {describe(python)}")
    results: dict[str, dict[str, dict[str, list[float]]]] = {b: {} for b in benches}
    units: dict[str, tuple[str, bool]] = {}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compare-builds-") as tmp:
        for r in range(args.rounds):
            order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
            for bench in benches:
                for label in order:
                    got = run_once(builds[label], bench, args.full, Path(tmp) / "out.json")
                    for case, (unit, value, higher_better) in got.items():
                        units[case] = (unit, higher_better)
                        results[bench].setdefault(case, {}).setdefault(label, []).append(value)
                    elapsed = time.perf_counter() - started
                    print(f"[{elapsed:5.0f}s] round {r + 1}: {bench} {label}", file=sys.stderr)
    table, noises = render(results, units)
    print(
        f"# {args.rounds} rounds, order alternating; A, B = median of rounds; "
        "A/A, B/B = spread of one build's rounds (max/min - 1)"
    )
    print(table)
    if noises:
        print(
            f"# noise over all cases: median ±{statistics.median(noises):.0%}, "
            f"max ±{max(noises):.0%}; load average {load_before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs"
        )
    if args.json:
        args.json.write_text(json.dumps({"builds": builds, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
