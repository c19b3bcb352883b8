#!/usr/bin/env python3
"""Two server binaries side by side under ``wrk``: 10 KiB GETs and 10 KiB PUTs (each a new
object) per second, one table with A, B, B/A and the noise.

Only the server differs (no client library is in the loop: wrk speaks HTTP itself), so this is
the check that a server change - a refactoring, a new step on the request path - costs nothing
measurable. Rounds alternate the binaries (A B, then B A, ...), so a drift in the machine's
load hits both alike; a figure is the median of its rounds, and the noise of a build is the
spread of its own rounds (max/min - 1). A case is flagged WORSE when B is below A by more than
either build's noise.

Usage:
    python3 benchmarks/server_builds.py --a /tmp/aistore-server.old \\
        --b build/dev/server/aistore-server
    python3 benchmarks/server_builds.py --a OLD --b NEW --rounds 5 --seconds 5
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
BUCKET = "server-builds"

# GET: the OBJECTS objects round robin. PUT: a new name per request (thread, random round,
# counter), the same body, so no PUT times the drop of an older version.
GET_LUA = f"""local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", string.format("/v1/objects/{BUCKET}/o%d", i % {OBJECTS}))
end
"""
PUT_LUA = f"""local body = string.rep("x", {SIZE})
local threads, n = 0, 0
setup = function(thread) thread:set("tid", threads); threads = threads + 1 end
init = function() round = tostring(math.random(1, 1e9)) end
request = function()
  n = n + 1
  local path = string.format("/v1/objects/{BUCKET}/put-%s-%d-%d", round, tid, n)
  return wrk.format("PUT", path, nil, body)
end
"""


def wrk(endpoint: str, script: Path, seconds: int) -> float:
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", str(script), endpoint],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return parse_wrk_rate(out)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--a", required=True, help="the baseline aistore-server binary")
    p.add_argument("--b", required=True, help="the aistore-server binary to compare with it")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=5)
    a = p.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed (apt-get install wrk; scripts/setup.sh installs it)")
    data = b"x" * SIZE
    cases = {"10 KiB GET/s": GET_LUA, "10 KiB PUT/s (new objects)": PUT_LUA}
    builds = {"A": a.a, "B": a.b}
    rates: dict[tuple[str, str], list[float]] = {(c, b): [] for c in cases for b in builds}
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        scripts = {}
        for i, (case, lua) in enumerate(cases.items()):
            scripts[case] = scratch / f"case{i}.lua"
            scripts[case].write_text(lua)
        servers = {
            name: stack.enter_context(LocalServer(num_mountpaths=2, binary=binary))
            for name, binary in builds.items()
        }
        for srv in servers.values():
            bucket = srv.client().bucket(BUCKET).create()
            for i in range(OBJECTS):
                bucket.object(f"o{i}").get_writer().put_content(data)
            wrk(srv.endpoint, scripts["10 KiB GET/s"], 1)  # warm-up
        for r in range(a.rounds):
            order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
            for case, script in scripts.items():
                for name in order:
                    rates[(case, name)].append(wrk(servers[name].endpoint, script, a.seconds))
    rows = [["case", "A", "B", "B/A", "A/A", "B/B", ""]]
    for case in cases:
        med = {b: statistics.median(rates[(case, b)]) for b in builds}
        noise = {b: max(rates[(case, b)]) / min(rates[(case, b)]) - 1 for b in builds}
        ratio = med["B"] / med["A"]
        worse = ratio < 1 - max(noise.values())
        rows.append(
            [
                case,
                f"{med['A']:,.0f}",
                f"{med['B']:,.0f}",
                f"{ratio:.3f}",
                f"{noise['A']:.1%}",
                f"{noise['B']:.1%}",
                "WORSE" if worse else "",
            ]
        )
    print(f"\nwrk -t2 -c16, {a.rounds} rounds x {a.seconds} s, builds alternated each round")
    print(f"A = {a.a}\nB = {a.b}\n")
    print(render_table(rows))


if __name__ == "__main__":
    main()
