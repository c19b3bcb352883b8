#!/usr/bin/env python3
"""Download benchmark: a HuggingFace repository into the store by our download job, beside
`huggingface_hub.snapshot_download`, a Python thread pool of `requests`, and curl.

The source is what the Hub is: an API that lists the repository and answers each file's
`resolve` link with a redirect to a CDN (tests/integration/_hf_hub.py, on this machine), the
CDN being a second ``LocalServer`` holding the files (plain HTTP/1.1, sendfile), so the source
is not what limits anyone. The server under test (``LocalServer``, 4 mountpaths under
``$TMPDIR``, ``--download-allow-loopback``) runs the job ``Download.start_hf`` starts, with the
default limits (large files as concurrent ranges), timed from the call to the end its status
reports (polled every 10 ms). The others fetch the same links with ``--workers`` connections:
``snapshot_download`` into a directory under ``$TMPDIR``; the pool GETs each file and PUTs it
into a bucket of the same server (what a user would otherwise write); ``curl --parallel`` into
files under ``$TMPDIR`` is the cost of keeping what arrives, and into /dev/null the wire: what
the source delivers to a client that keeps nothing.

Cases: ``--small`` files of ``--small-size``, ``--large`` of ``--large-size`` and ``--huge``
of ``--huge-size`` (defaults 1,000 x 1 MiB, 20 x 256 MiB, 1 x 2 GiB), one repository each.
The cases take turns in ``--rounds`` rounds; the median round is reported. Prints one table.

Usage:
    python3 benchmarks/download.py
    python3 benchmarks/download.py --small 100 --large 2 --large-size 64MiB --huge 0 --rounds 1
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

from _hf_hub import HfHub, HfRepo  # noqa: E402
from _http_files import file_bytes  # noqa: E402
from _table import render_table  # noqa: E402
from huggingface_hub import snapshot_download  # noqa: E402

from aistore.server import LocalServer  # noqa: E402

SIDES = ("job", "snapshot_download", "requests pool", "curl to files", "curl (wire)")


def parse_size(text: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, mult in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * mult
    return int(text)


def size_text(n: int) -> str:
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} B"


def job_seconds(srv: LocalServer, hub: HfHub, repo: HfRepo) -> float:
    client = srv.client()
    bucket = client.bucket(f"bench-{uuid.uuid4().hex[:6]}")
    t0 = time.monotonic()
    dl = client.download()
    dl.start_hf(bucket, repo.repo_id, endpoint=hub.url, token=False)
    while not (st := dl.status(only_active=True)).finished:
        time.sleep(0.01)
    took = time.monotonic() - t0
    assert st.error_cnt == 0 and st.finished_cnt == len(repo.files), st
    bucket.delete()
    return took


def snapshot_seconds(hub: HfHub, repo: HfRepo, workers: int) -> float:
    target = tempfile.mkdtemp(prefix="snap-")
    try:
        t0 = time.monotonic()
        snapshot_download(
            repo.repo_id, endpoint=hub.url, token=False, local_dir=target, max_workers=workers
        )
        return time.monotonic() - t0
    finally:
        shutil.rmtree(target, ignore_errors=True)


def links_of(hub: HfHub, repo: HfRepo) -> dict[str, str]:
    return {p: f"{hub.url}/{repo.repo_id}/resolve/{repo.sha}/{p}" for p in repo.files}


def pool_seconds(srv: LocalServer, hub: HfHub, repo: HfRepo, workers: int) -> float:
    bucket = srv.client().bucket(f"bench-{uuid.uuid4().hex[:6]}").create()
    local = threading.local()

    def one(item: tuple[str, str]) -> None:
        s = getattr(local, "s", None)
        if s is None:
            s = local.s = requests.Session()
        r = s.get(item[1], timeout=600)
        r.raise_for_status()
        url = f"{srv.endpoint}/v1/objects/{bucket.name}/{item[0]}"
        s.put(url, data=r.content, timeout=600).raise_for_status()

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, links_of(hub, repo).items()))
    took = time.monotonic() - t0
    bucket.delete()
    return took


def curl_seconds(hub: HfHub, repo: HfRepo, workers: int, keep: bool) -> float:
    """curl --parallel of the links: into files under $TMPDIR (`keep`), else into /dev/null."""
    target = tempfile.mkdtemp(prefix="curl-")
    try:

        def out(path: str) -> str:
            return str(Path(target, path.replace("/", "_"))) if keep else "/dev/null"

        config = "".join(
            f'url = "{u}"\noutput = "{out(p)}"\n' for p, u in links_of(hub, repo).items()
        )
        t0 = time.monotonic()
        subprocess.run(
            ["curl", "-sSfL", "--parallel", "--parallel-max", str(workers), "--config", "-"],
            input=config.encode(),
            check=True,
        )
        return time.monotonic() - t0
    finally:
        shutil.rmtree(target, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", type=int, default=1000, help="number of small files")
    ap.add_argument("--small-size", default="1MiB")
    ap.add_argument("--large", type=int, default=20, help="number of large files")
    ap.add_argument("--large-size", default="256MiB")
    ap.add_argument("--huge", type=int, default=1, help="number of huge files")
    ap.add_argument("--huge-size", default="2GiB")
    ap.add_argument("--workers", type=int, default=8, help="connections of the other sides")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if shutil.which("curl") is None:
        sys.exit("curl is not installed (the wire column): apt-get install curl")
    cases = [
        (args.small, parse_size(args.small_size)),
        (args.large, parse_size(args.large_size)),
        (args.huge, parse_size(args.huge_size)),
    ]
    with (
        LocalServer(num_mountpaths=1) as cdn_srv,
        LocalServer(num_mountpaths=4, download_allow_loopback=True) as srv,
    ):
        cdn = cdn_srv.client().bucket("cdn").create()

        def cdn_url(repo: HfRepo, path: str) -> str:
            return f"{cdn_srv.endpoint}/v1/objects/cdn/{repo.repo_id}/{path}"

        hub = HfHub(cdn=cdn_url)
        repos: list[tuple[str, HfRepo]] = []
        for n, (count, size) in enumerate(cases):
            if count == 0:
                continue
            repo = hub.add(
                HfRepo("model", f"bench/case{n}", {f"f{i:05}.bin": size for i in range(count)})
            )
            for path in repo.files:  # the CDN holds what the Hub would serve
                data = file_bytes(repo.content_name(path), size)
                cdn.object(f"{repo.repo_id}/{path}").get_writer().put_content(data)
                del data
            label = f"{count:,} x {size_text(size)}"
            repos.append((label, repo))
        results: dict[str, dict[str, list[float]]] = {label: {} for label, _ in repos}
        for _ in range(args.rounds):
            for label, repo in repos:
                t = results[label]
                t.setdefault("job", []).append(job_seconds(srv, hub, repo))
                t.setdefault("snapshot_download", []).append(
                    snapshot_seconds(hub, repo, args.workers)
                )
                t.setdefault("requests pool", []).append(pool_seconds(srv, hub, repo, args.workers))
                t.setdefault("curl to files", []).append(
                    curl_seconds(hub, repo, args.workers, keep=True)
                )
                t.setdefault("curl (wire)", []).append(
                    curl_seconds(hub, repo, args.workers, keep=False)
                )
        hub.stop()
    header = [
        "case",
        *(f"{s} MB/s" for s in SIDES),
        "job/snapshot",
        "job/pool",
        "job/curl files",
        "job/wire",
    ]
    rows = [header]
    for label, repo in repos:
        mb = sum(repo.files.values()) / 1e6
        med = {k: statistics.median(v) for k, v in results[label].items()}
        rows.append(
            [
                label,
                *(f"{mb / med[s]:.0f}" for s in SIDES),
                f"{med['snapshot_download'] / med['job']:.2f}x",
                f"{med['requests pool'] / med['job']:.2f}x",
                f"{med['curl to files'] / med['job']:.2f}",
                f"{med['curl (wire)'] / med['job']:.2f}",
            ]
        )
    print(render_table(rows))
    print(
        f"(others: {args.workers} connections; the job: its defaults; {args.rounds} rounds, median)"
    )


if __name__ == "__main__":
    main()
