#!/usr/bin/env python3
"""What access control costs on the data path: 10 KiB GETs/s and a 1 GiB GET's GB/s with tokens
required vs not.

Three servers from the same binary: no access control; ``--auth-required`` with an HS256
secret; ``--auth-required`` with an RSA public key. ``wrk`` (2 threads, 16 keep-alive
connections) GETs 10 KiB objects from each in turn with an admin token, and curl GETs a 1 GiB
object, ``--rounds`` times, the order rotated every round. A token is verified once and then
found in the server's cache, so what a request pays is the cache lookup and the permission
check. The table shows each
server's median rate, spread (max - min over the median: the noise) and the ratio to the
server without access control.

Usage:
    python3 benchmarks/auth_cost.py              # 5 rounds of 5 s
    python3 benchmarks/auth_cost.py --quick      # 1 round of 1 s
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from aistore.sdk import Client
from aistore.server import LocalServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import render_table  # noqa: E402
from metrics_cost import OBJECTS, SIZE, wrk_rate  # noqa: E402

SECRET = "auth-cost-benchmark-" + "s" * 48
BUCKET = "auth-cost"
LARGE = 1 << 30


def curl_gbps(url: str, token: str) -> float:
    """GB/s of one GET of `url` by curl, the body discarded."""
    out = subprocess.run(
        [
            "curl",
            "-sf",
            "-o",
            "/dev/null",
            "-w",
            "%{speed_download}",
            "-H",
            f"Authorization: Bearer {token}",
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out) / 1e9


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.seconds = 1, 1
    if not shutil.which("wrk"):
        sys.exit("wrk is needed (apt-get install wrk; scripts/setup.sh installs it)")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    claims = {"sub": "bench", "admin": True, "exp": int(time.time()) + 3600}
    hs_token = jwt.encode(claims, SECRET, algorithm="HS256")
    rs_token = jwt.encode(claims, key, algorithm="RS256")
    required = ["--auth-required"]
    rsa_env = {"AIS_AUTHN_PUBLIC_KEY": public_pem}
    with (
        LocalServer(num_mountpaths=2) as off,
        LocalServer(num_mountpaths=2, args=required, env={"AIS_AUTHN_SECRET_KEY": SECRET}) as hs,
        LocalServer(num_mountpaths=2, args=required, env=rsa_env) as rsa_,
    ):
        servers = {
            "no access control": (off, hs_token),  # the token is sent and ignored
            "tokens required, HS256": (hs, hs_token),
            "tokens required, RS256": (rsa_, rs_token),
        }
        for srv, token in servers.values():
            b = Client(srv.endpoint, token=token).bucket(BUCKET).create()
            for i in range(OBJECTS):
                b.object(f"o{i}").get_writer().put_content(b"x" * SIZE)
            wrk_rate(srv.endpoint, BUCKET, 1, (f"Authorization: Bearer {token}",))  # warm-up
            with tempfile.NamedTemporaryFile() as f:  # one 1 GiB object, put from a file
                f.truncate(LARGE)
                b.object("large").get_writer().put_file(f.name)
        rates: dict[str, list[float]] = {name: [] for name in servers}
        large: dict[str, list[float]] = {name: [] for name in servers}
        names = list(servers)
        for r in range(a.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                srv, token = servers[name]
                header = (f"Authorization: Bearer {token}",)
                rates[name].append(wrk_rate(srv.endpoint, BUCKET, a.seconds, header))
                url = f"{srv.endpoint}/v1/objects/{BUCKET}/large"
                large[name].append(curl_gbps(url, token))
    median = {n: statistics.median(v) for n, v in rates.items()}
    base = median["no access control"]
    big = {n: statistics.median(v) for n, v in large.items()}
    rows = [["server", "10 KiB GET/s", "spread", "vs none", "1 GiB GET GB/s", "vs none"]]
    for name, values in rates.items():
        spread = (max(values) - min(values)) / median[name] if median[name] else 0.0
        rows.append(
            [
                name,
                f"{median[name]:,.0f}",
                f"±{spread * 50:.1f}%",
                f"{median[name] / base:.3f}x",
                f"{big[name]:.2f}",
                f"{big[name] / big['no access control']:.3f}x",
            ]
        )
    print(
        f"\n10 KiB GETs: wrk -t2 -c16; 1 GiB: one curl GET; {a.rounds} rounds of {a.seconds} s,"
        " order rotated each round; medians\n"
    )
    print(render_table(rows))


if __name__ == "__main__":
    main()
