#!/usr/bin/env python3
"""What observing every request costs: 10 KiB GETs/s with metrics on vs off, and with the
access log on vs off, side by side.

Servers from the same binary: the default (metrics on, access log off), one with
``--no-metrics``, one with ``--access-log FILE``; with ``--baseline-bin`` also one from another
binary (e.g. the main branch's build: "off must equal today's"). ``wrk`` (2 threads, 16
keep-alive connections) GETs 10 KiB objects from each in turn, ``--rounds`` times, the order
rotated every round. The table shows each server's median rate and spread (max - min over the
median: the noise), and each against metrics off.

Usage:
    python3 benchmarks/metrics_cost.py              # 5 rounds of 5 s
    python3 benchmarks/metrics_cost.py --quick      # 1 round of 1 s
    python3 benchmarks/metrics_cost.py --baseline-bin ../main/build/gtest/server/aistore-server
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from aistore.server import LocalServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402
from core import parse_wrk_rate  # noqa: E402

OBJECTS = 256
SIZE = 10 * 1024
OFF = "metrics off (--no-metrics)"


def wrk_rate(endpoint: str, bucket: str, seconds: int, headers: tuple[str, ...] = ()) -> float:
    """GETs/s of wrk GETting the OBJECTS objects o0, o1, ... of `bucket` round robin, with
    `headers` ("Name: value") on every request."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(
            f'local i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", '
            f'string.format("/v1/objects/{bucket}/o%d", i % {OBJECTS}))\nend\n'
        )
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", lua.name]
        + [arg for h in headers for arg in ("-H", h)]
        + [endpoint],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    Path(lua.name).unlink()
    return parse_wrk_rate(out)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--baseline-bin", help="another aistore-server binary to compare (metrics on)")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.seconds = 1, 1
    if not shutil.which("wrk"):
        sys.exit("wrk is needed (apt-get install wrk; scripts/setup.sh installs it)")
    data = b"x" * SIZE
    with contextlib.ExitStack() as stack:
        log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers = {
            "metrics on, access log off": stack.enter_context(LocalServer(num_mountpaths=2)),
            OFF: stack.enter_context(LocalServer(num_mountpaths=2, args=["--no-metrics"])),
            "metrics on, access log on (file)": stack.enter_context(
                LocalServer(num_mountpaths=2, args=["--access-log", str(log_dir / "access.log")])
            ),
        }
        if a.baseline_bin:
            servers["baseline binary (metrics on)"] = stack.enter_context(
                LocalServer(num_mountpaths=2, binary=a.baseline_bin)
            )
        for srv in servers.values():
            b = srv.client().bucket("metrics-cost").create()
            for i in range(OBJECTS):
                b.object(f"o{i}").get_writer().put_content(data)
            wrk_rate(srv.endpoint, "metrics-cost", 1)  # warm-up
        rates: dict[str, list[float]] = {name: [] for name in servers}
        names = list(servers)
        for r in range(a.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                rates[name].append(wrk_rate(servers[name].endpoint, "metrics-cost", a.seconds))
    median = {n: statistics.median(v) for n, v in rates.items()}
    base = median[OFF]
    rows = [["server", "", "GET/s (median)", "spread", "vs off"]]
    for name, values in rates.items():
        spread = (max(values) - min(values)) / median[name] if median[name] else 0.0
        rows.append(
            [
                name,
                "",
                f"{median[name]:,.0f}",
                f"±{spread * 50:.1f}%",
                f"{median[name] / base:.3f}x",
            ]
        )
    print(f"\n10 KiB GETs, wrk -t2 -c16, {a.rounds} x {a.seconds} s, order rotated each round\n")
    print(render_table(rows))


if __name__ == "__main__":
    main()
