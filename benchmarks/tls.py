#!/usr/bin/env python3
"""What TLS costs: 10 KiB GETs/s and 1 GiB GET GB/s over http and https, side by side.

Servers from the same binary, one plain and one with TLS (``LocalServer(tls=True)``: a P-256
certificate, TLS 1.3, AES-GCM), plus, with ``--baseline-bin``, a plain and a TLS server from
another binary (e.g. the build before a change to the HTTP layer). ``wrk`` (2 threads, 16
keep-alive connections) GETs 10 KiB objects; ``curl`` GETs one 1 GiB object to /dev/null, one
stream, the server reading it from page cache. Each case runs ``--rounds`` times, the servers in
turn; the table shows medians, the ratio to plain http of the same binary, and the server's own
CPU time (user + system, from /proc) per 10 KiB GET and per GiB sent: on a shared machine the
rates move with the neighbours' load, the CPU a request costs much less.

Usage:
    python3 benchmarks/tls.py                         # 3 rounds of 5 s, 1 GiB x 3
    python3 benchmarks/tls.py --quick                 # 1 round of 1 s, 256 MiB
    python3 benchmarks/tls.py --baseline-bin /tmp/aistore-server.before
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from aistore.server import LocalServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402
from core import parse_wrk_rate  # noqa: E402

OBJECTS = 256
SMALL = 10 * 1024
BUCKET = "tlsbench"


@dataclass
class Case:
    name: str
    server: LocalServer
    small: list[float] = field(default_factory=list)  # GETs/s
    large: list[float] = field(default_factory=list)  # GB/s
    small_cpu: list[float] = field(default_factory=list)  # server CPU µs per GET
    large_cpu: list[float] = field(default_factory=list)  # server CPU s per GiB


def server_cpu(srv: LocalServer) -> float:
    """The server process's user + system CPU seconds so far."""
    fields = Path(f"/proc/{srv.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def curl_args(srv: LocalServer) -> list[str]:
    return ["--cacert", srv.ca_cert] if srv.ca_cert else []


def load(srv: LocalServer, large_file: Path) -> None:
    client = srv.client()
    bucket = client.bucket(BUCKET).create(exist_ok=True)
    payload = os.urandom(SMALL)
    for i in range(OBJECTS):
        bucket.object(f"o{i}").get_writer().put_content(payload)
    url = f"{srv.endpoint}/v1/objects/{BUCKET}/large"
    subprocess.run(
        ["curl", "-sSf", *curl_args(srv), "-T", str(large_file), url],
        check=True,
        capture_output=True,
    )


def small_rate(srv: LocalServer, seconds: int) -> tuple[float, float]:
    """GETs/s, and server CPU µs per GET."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(
            f'local i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", '
            f'string.format("/v1/objects/{BUCKET}/o%d", i % {OBJECTS}))\nend\n'
        )
    cpu0 = server_cpu(srv)
    try:
        out = subprocess.run(
            ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", lua.name, srv.endpoint],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        Path(lua.name).unlink()
    cpu = server_cpu(srv) - cpu0
    m = re.search(r"(\d+) requests in", out)
    if not m:
        raise RuntimeError(f"no request count in wrk output:\n{out}")
    return parse_wrk_rate(out), cpu / int(m.group(1)) * 1e6


def large_rate(srv: LocalServer, size: int) -> tuple[float, float]:
    """GB/s, and server CPU seconds per GiB."""
    cpu0 = server_cpu(srv)
    url = f"{srv.endpoint}/v1/objects/{BUCKET}/large"
    out = subprocess.run(
        [
            "curl",
            "-sSf",
            *curl_args(srv),
            "-o",
            "/dev/null",
            "-w",
            "%{size_download} %{time_total}",
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    got, secs = int(out[0]), float(out[1])
    if got != size:
        raise RuntimeError(f"short read from {srv.endpoint}: {got} of {size} bytes")
    return size / secs / 1e9, (server_cpu(srv) - cpu0) / (size / (1 << 30))


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--large-mib", type=int, default=1024)
    p.add_argument(
        "--baseline-bin", help="another aistore-server binary: an http and an https row more"
    )
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.seconds, a.large_mib = 1, 1, 256
    for tool in ("wrk", "curl"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is required")
    size = a.large_mib << 20
    with tempfile.TemporaryDirectory(prefix="tlsbench-") as tmp:
        large_file = Path(tmp) / "large"
        with open(large_file, "wb") as f:
            block = os.urandom(1 << 20)
            for _ in range(a.large_mib):
                f.write(block)
        servers = []
        if a.baseline_bin:
            base = a.baseline_bin
            servers += [
                ("http (baseline binary)", LocalServer(num_mountpaths=1, binary=base)),
                ("https (baseline binary)", LocalServer(num_mountpaths=1, tls=True, binary=base)),
            ]
        servers += [
            ("http", LocalServer(num_mountpaths=1)),
            ("https", LocalServer(num_mountpaths=1, tls=True)),
        ]
        cases = [Case(name, srv.start()) for name, srv in servers]
        try:
            for c in cases:
                load(c.server, large_file)
            large_file.unlink()
            for r in range(a.rounds):
                order = cases if r % 2 == 0 else cases[::-1]
                for c in order:
                    rate, cpu = small_rate(c.server, a.seconds)
                    c.small.append(rate)
                    c.small_cpu.append(cpu)
                    rate, cpu = large_rate(c.server, size)
                    c.large.append(rate)
                    c.large_cpu.append(cpu)
            kernel_tls = "tls" in Path("/proc/sys/net/ipv4/tcp_available_ulp").read_text().split()
        finally:
            for c in cases:
                c.server.stop()
    plain = next(c for c in cases if c.name == "http")
    p_small, p_large = statistics.median(plain.small), statistics.median(plain.large)
    lines = [
        [
            "case",
            "data path",
            "10 KiB GET/s",
            "vs http",
            "CPU µs/GET",
            f"{a.large_mib} MiB GET GB/s",
            "vs http",
            "CPU s/GiB",
        ]
    ]
    for c in cases:
        small, large = statistics.median(c.small), statistics.median(c.large)
        path = "read + encrypt, 256 KiB" if c.name.startswith("https") else "sendfile"
        lines.append(
            [
                c.name,
                path,
                f"{small:,.0f}",
                f"{small / p_small:.2f}",
                f"{statistics.median(c.small_cpu):.1f}",
                f"{large:.2f}",
                f"{large / p_large:.2f}",
                f"{statistics.median(c.large_cpu):.2f}",
            ]
        )
    print(render_table(lines))
    print(
        f"\n{a.rounds} round(s), medians; {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; kernel tls ULP "
        f"{'available' if kernel_tls else 'unavailable'} (kTLS is not used by this build)"
    )


if __name__ == "__main__":
    main()
