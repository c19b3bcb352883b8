"""The official `ais` CLI (AIStore 5.0) on remote s3:// buckets, against the module's S3 server
(moto), fault proxy and aistore-server (conftest.py): the commands users run on such buckets,
one section per group.

As in test_ais_cli.py, each command must exit 0 and print no error, and its effect is checked
through our SDK (what is cached, what the remote still lists, which inventories exist) and the
proxy's counts (what reached S3). The CLI is run as _ais_cli.py says; the module is skipped
without it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _ais_cli import NEEDS_CLI, Cli, props_table, rows
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


@pytest.fixture(scope="module")
def tid(server: LocalServer) -> str:
    ((target,),) = [list(server.client().cluster().get_info().tmap)]
    return target


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


def test_ls_remote_bucket(cli: Cli, remote_bck: Bucket, proxy: FaultProxy) -> None:
    uri = f"s3://{remote_bck.name}"
    listed = rows(cli.ok("ls", uri, "--units", "raw", "-H"))
    assert {r[0]: (int(r[1]), r[2]) for r in listed} == {k: (len(d), "no") for k, d in KEYS.items()}
    assert "No objects in" in cli.ok("ls", uri, "--cached")

    remote_bck.object("p/01").get_reader().read_all()
    assert [r[0] for r in rows(cli.ok("ls", uri, "--cached", "-H"))] == ["p/01"]
    not_cached = rows(cli.ok("ls", uri, "--not-cached", "-H"))
    assert {r[0] for r in not_cached} == set(KEYS) - {"p/01"}
    top = rows(cli.ok("ls", uri, "--nr", "-H"))
    assert [r[0] for r in top] == ["p/", "q/", "top.txt"]

    # Every property: a cached object has its access time, location and one copy; one that is
    # only in S3 has none of them (it showed an access time of "01 Jan 70" and a location).
    lists = proxy.count("GET", f"/{remote_bck.name}/")
    out = cli.ok("ls", uri, "--props", "all", "-H")
    assert proxy.count("GET", f"/{remote_bck.name}/") > lists, "a remote listing asks S3"
    assert "01 Jan 70" not in out, out
    by_name = {r[0]: r for r in rows(out)}
    assert set(by_name) == set(KEYS), out
    location = next(c for c in by_name["p/01"] if c.startswith("t["))
    assert "yes" in by_name["p/01"], out
    for name in set(KEYS) - {"p/01"}:
        assert location not in by_name[name] and "no" in by_name[name], out


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


def test_show_object_remote(cli: Cli, remote_bck: Bucket, tid: str) -> None:
    uri = f"s3://{remote_bck.name}"
    remote_bck.object("p/02").get_reader().read_all()
    shown = props_table(cli.ok("show", "object", f"{uri}/p/02", "-H"))
    assert shown["name"] == f"{uri}/p/02" and shown["size"] == f"{len(KEYS['p/02'])}B", shown
    assert props_table(cli.ok("show", "object", f"{uri}/p/02", "--check-cached", "-H")) == shown

    full = props_table(cli.ok("show", "object", f"{uri}/p/02", "--props", "all", "-H"))
    assert full["location"].startswith(f"t[{tid}]") and full["copies"].startswith("1"), full

    # Not cached: AIS's `show object` looks in the cluster only, so it is not found there (exit 1,
    # with the CLI's tip); --not-cached asks S3, and then nothing says where it is stored.
    r = cli.run("show", "object", f"{uri}/p/03")
    assert r.returncode == 1 and "not found" in r.stderr and "--not-cached" in r.stderr, r
    remote = props_table(cli.ok("show", "object", f"{uri}/p/03", "--not-cached", "--props", "all"))
    assert remote["size"] == f"{len(KEYS['p/03'])}B", remote
    assert "location" not in remote and remote["copies"] == "-", remote
    assert cached(remote_bck) == {"p/02"}, "HEAD does not cache"


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


# --- bucket inventory (ais nbi, ais ls --inventory) ------------------------------------------


def nbi_rows(cli: Cli, *args: str) -> dict[tuple[str, str], dict[str, str]]:
    """`ais nbi show *args` as (bucket, inventory name) -> column -> value."""
    header, *body = rows(cli.ok("nbi", "show", *args))  # every cell has a value ("-" for none)
    return {(row[0], row[1]): dict(zip(header, row, strict=True)) for row in body}


def test_nbi_create_show_list_remove(
    cli: Cli, s3: Any, remote_bck: Bucket, proxy: FaultProxy
) -> None:
    uri = f"s3://{remote_bck.name}"
    remote_bck.object("p/04").get_reader().read_all()
    cli.ok("wait", started_job(cli.ok("nbi", "create", uri, "--inv-name", "snap")))
    objname = f"aws/@#/{remote_bck.name}/snap"
    assert list(remote_bck.show_inventory()) == [objname]

    shown = nbi_rows(cli, uri)
    assert list(shown) == [(uri, "snap")], shown
    snap = shown[uri, "snap"]
    assert snap["OBJECTS"] == str(len(KEYS)) and snap["PREFIX"] == "-", shown
    verbose = nbi_rows(cli, uri, "--inv-name", "snap", "-v")
    assert verbose[uri, "snap"]["OBJECT"] == objname, verbose
    # Without a bucket: every bucket's inventories, or those of one provider.
    assert nbi_rows(cli)[uri, "snap"] == snap
    assert nbi_rows(cli, "s3:")[uri, "snap"] == snap
    assert "No inventories" in cli.ok("nbi", "show", "ais:")

    # Listings from the snapshot: S3 is not asked again, and what changed there since is not seen.
    expected_top = [r[0] for r in rows(cli.ok("ls", uri, "--nr", "-H"))]
    assert expected_top == ["p/", "q/", "top.txt"]
    s3.put_object(Bucket=remote_bck.name, Key="late.txt", Body=b"late")
    s3_lists = proxy.count("GET", f"/{remote_bck.name}/")
    listed = rows(cli.ok("ls", uri, "--inventory", "--units", "raw", "-H"))
    want = {k: (len(d), "yes" if k == "p/04" else "no") for k, d in KEYS.items()}
    assert {r[0]: (int(r[1]), r[2]) for r in listed} == want
    named = rows(cli.ok("ls", uri, "--inventory", "--inv-name", "snap", "--units", "raw", "-H"))
    assert named == listed
    under = rows(cli.ok("ls", uri, "--inventory", "--prefix", "p/", "-H"))
    assert [r[0] for r in under] == [f"p/{i:02d}" for i in range(6)]
    paged = cli.ok("ls", uri, "--inventory", "--paged", "--page-size", "3", "-H")
    assert [r[0] for r in rows(paged)] == sorted(KEYS)
    # Non-recursive: the names directly under the prefix and one entry per directory, as the
    # bucket's own --nr listing has them (it listed them recursively).
    top = rows(cli.ok("ls", uri, "--inventory", "--nr", "-H"))
    assert [r[0] for r in top] == expected_top
    deeper = rows(cli.ok("ls", f"{uri}/q/", "--inventory", "--nr", "-H"))
    assert [r[0] for r in deeper] == ["q/deep/"]
    assert proxy.count("GET", f"/{remote_bck.name}/") == s3_lists, "inventory listings never ask S3"

    cli.ok("nbi", "rm", uri, "--inv-name", "snap")
    assert remote_bck.show_inventory() == {}
    assert "No inventories for" in cli.ok("nbi", "show", uri)
    r = cli.run("ls", uri, "--inventory")
    assert r.returncode != 0, r


def test_nbi_default_name_force_prefix(cli: Cli, remote_bck: Bucket) -> None:
    uri = f"s3://{remote_bck.name}"
    job = started_job(cli.ok("nbi", "create", uri))
    cli.ok("wait", job)
    # No name given: the inventory is named after its job, as AIS names it.
    assert list(nbi_rows(cli, uri)) == [(uri, job)]

    r = cli.run("nbi", "create", uri, "--inv-name", "second")
    assert r.returncode != 0 and "already exists" in r.stderr, r
    cli.ok(
        "wait",
        started_job(
            cli.ok("nbi", "create", uri, "--inv-name", "second", "--force", "--prefix", "p/")
        ),
    )
    shown = nbi_rows(cli, uri)
    assert list(shown) == [(uri, "second")], shown
    assert shown[uri, "second"]["PREFIX"] == "p/" and shown[uri, "second"]["OBJECTS"] == "6", shown
    listed = rows(cli.ok("ls", uri, "--inventory", "-H"))
    assert [r[0] for r in listed] == [f"p/{i:02d}" for i in range(6)]

    cli.ok(
        "wait",
        started_job(cli.ok("nbi", "create", uri, "--inv-name", "names", "--force", "--name-only")),
    )
    assert [r[0] for r in rows(cli.ok("ls", uri, "--inventory", "-H"))] == sorted(KEYS)
    cli.ok("nbi", "rm", uri)  # every inventory of the bucket
    assert remote_bck.show_inventory() == {}
