"""The official `ais` CLI (AIStore 5.0) on remote s3:// buckets, against the module's S3 server
(moto), fault proxy and aistore-server (conftest.py): the commands users run on such buckets,
one section per group.

As in test_ais_cli.py, each command must exit 0 and print no error, and its effect is checked
through our SDK (what is cached, what the remote still lists) and the proxy's counts (what reached
S3). The CLI is run as _ais_cli.py says; the module is skipped without it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _ais_cli import NEEDS_CLI, Cli, rows
from _s3 import FaultProxy
from _util import wait_job

from aistore.sdk import Client
from aistore.sdk.bucket import Bucket
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

pytestmark = NEEDS_CLI

# Names without "error" in them (the CLI's output is searched for it); sizes the CLI prints exactly.
KEYS = {
    "top.txt": b"top\n",
    **{f"p/{i:02d}": bytes([65 + i]) * (100 + i) for i in range(6)},
    "q/deep/x.bin": b"x" * 300,
}


@pytest.fixture(scope="module")
def cli(server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(server.endpoint, tmp_path_factory.mktemp("ais-cli-home"))


@pytest.fixture
def remote_bck(client: Client, s3: Any, bucket: str) -> Bucket:
    """A fresh S3 bucket holding KEYS, none of them cached; its s3:// bucket in our SDK."""
    for key, data in KEYS.items():
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    return client.bucket(bucket, provider="aws")


def cached(bck: Bucket) -> set[str]:
    return {e.name for e in bck.list_all_objects(flags=[ListObjectFlag.CACHED])}


def remote_names(bck: Bucket) -> set[str]:
    return {e.name for e in bck.list_all_objects()}


def started_job(out: str) -> str:
    """The job ID in the CLI's "... run 'ais show job <id>'" line."""
    m = re.search(r"ais show job (\S+)'", out)
    assert m, out
    return m.group(1)


# --- listing, cold GET, object properties ---------------------------------------------------


def test_ls_remote_buckets_present(cli: Cli, remote_bck: Bucket) -> None:
    # `ais ls s3 --all` lists what S3 has and marks those in the cluster's BMD present.
    uri = f"s3://{remote_bck.name}"

    def present(*args: str) -> str | None:
        """The PRESENT column of the bucket's row (the footer is one cell)."""
        return {r[0]: r[1] for r in rows(cli.ok(*args)) if len(r) == 2}.get(uri)

    assert present("ls", "s3", "--all", "-H") == "no"
    remote_bck.head()  # added to the BMD on first use
    for args in (("ls", "s3", "--all", "-H"), ("ls", "--all", "-H"), ("ls", "s3", "-H")):
        assert present(*args) == "yes", args


def test_get_cold_then_warm(
    cli: Cli, remote_bck: Bucket, proxy: FaultProxy, tmp_path: Path
) -> None:
    name = "q/deep/x.bin"
    out = tmp_path / "x.bin"
    cli.ok("get", f"s3://{remote_bck.name}/{name}", str(out))
    assert out.read_bytes() == KEYS[name]
    assert cached(remote_bck) == {name}
    assert proxy.count("GET", f"/{remote_bck.name}/{name}") == 1

    cli.ok("get", f"s3://{remote_bck.name}/{name}", str(tmp_path / "again"))
    assert (tmp_path / "again").read_bytes() == KEYS[name]
    assert proxy.count("GET", f"/{remote_bck.name}/{name}") == 1, "a warm GET does not reach S3"


def test_bucket_summary_remote(cli: Cli, remote_bck: Bucket) -> None:
    remote_bck.object("top.txt").get_reader().read_all()
    remote_bck.object("p/00").get_reader().read_all()
    header, *body = rows(cli.ok("bucket", "summary", f"s3://{remote_bck.name}"))
    assert len(body) == 1 and body[0][0] == f"s3://{remote_bck.name}", (header, body)
    assert body[0][1].split()[0] == "2", (header, body)  # objects cached


# --- prefetch and evict ---------------------------------------------------------------------


def test_prefetch_list_template_prefix_bucket(
    cli: Cli, server: LocalServer, remote_bck: Bucket, proxy: FaultProxy
) -> None:
    # With --wait the CLI polls the job every 2 s or more (xact.MinPollTime) until it ends; the
    # forms without it print the job's ID, which the test waits for itself.
    uri = f"s3://{remote_bck.name}"
    cli.ok("prefetch", uri, "--list", "p/00,p/01", "--wait")
    assert cached(remote_bck) == {"p/00", "p/01"}
    wait_job(server.endpoint, started_job(cli.ok("prefetch", uri, "--template", "p/{02..03}")))
    assert cached(remote_bck) == {f"p/{i:02d}" for i in range(4)}
    cli.ok("prefetch", uri, "--prefix", "p/", "--wait")
    assert cached(remote_bck) == {k for k in KEYS if k.startswith("p/")}
    wait_job(server.endpoint, started_job(cli.ok("prefetch", f"{uri}/top.txt")))
    assert "top.txt" in cached(remote_bck)
    # The whole bucket: what is not cached yet.
    wait_job(server.endpoint, started_job(cli.ok("prefetch", uri)))
    assert cached(remote_bck) == set(KEYS)
    for key in KEYS:
        assert proxy.count("GET", f"/{remote_bck.name}/{key}") == 1, key
    assert remote_bck.object("p/05").get_reader().read_all() == KEYS["p/05"]
    assert proxy.count("GET", f"/{remote_bck.name}/p/05") == 1, "prefetched: the GET is warm"

    # The jobs as `ais show job` shows them: one bucket each (no SRC/DST pair, no "match[...]").
    out = cli.ok("show", "job", "prefetch", "--all")
    mine = [r for r in rows(out) if uri in r]
    assert len(mine) == 5 and all(
        "prefetch-listrange" in r and r[-1] == "Finished" for r in mine
    ), out
    assert "match[" not in out, out


def test_evict_object_list_template_prefix(
    cli: Cli, server: LocalServer, client: Client, remote_bck: Bucket
) -> None:
    uri = f"s3://{remote_bck.name}"
    client.job(remote_bck.objects(obj_names=list(KEYS)).prefetch()).wait(timeout=60)
    assert cached(remote_bck) == set(KEYS)

    wait_job(server.endpoint, started_job(cli.ok("evict", f"{uri}/top.txt")))
    assert cached(remote_bck) == set(KEYS) - {"top.txt"}
    cli.ok("evict", uri, "--list", "p/00,p/01", "--wait")
    wait_job(server.endpoint, started_job(cli.ok("evict", uri, "--template", "p/{02..03}")))
    assert cached(remote_bck) == {"p/04", "p/05", "q/deep/x.bin"}
    cli.ok("evict", uri, "--prefix", "p/", "--wait")
    assert cached(remote_bck) == {"q/deep/x.bin"}
    assert remote_names(remote_bck) == set(KEYS), "evicted, still in S3"
    assert remote_bck.object("p/00").get_reader().read_all() == KEYS["p/00"]


def test_evict_bucket_keep_md_then_whole(
    cli: Cli, client: Client, s3: Any, remote_bck: Bucket
) -> None:
    uri = f"s3://{remote_bck.name}"
    client.job(remote_bck.objects(obj_template="p/").prefetch()).wait(timeout=60)
    in_cluster = {b.name for b in client.cluster().list_buckets(provider="")}
    assert remote_bck.name in in_cluster

    cli.ok("evict", uri, "--keep-md")
    assert cached(remote_bck) == set()
    assert remote_bck.name in {b.name for b in client.cluster().list_buckets(provider="")}
    assert uri in [r[0] for r in rows(cli.ok("ls", "s3"))]

    client.job(remote_bck.objects(obj_names=["top.txt"]).prefetch()).wait(timeout=60)
    cli.ok("evict", uri)
    assert remote_bck.name not in {b.name for b in client.cluster().list_buckets(provider="")}
    assert uri not in [r[0] for r in rows(cli.ok("ls", "s3"))]
    assert s3.get_object(Bucket=remote_bck.name, Key="top.txt")["Body"].read() == KEYS["top.txt"]
    assert remote_names(remote_bck) == set(KEYS), "listed again (and added back) from S3"
    assert cached(remote_bck) == set()
