"""Bucket namespaces (`ais://#ns/bucket`) on the real server: each namespace's bucket is a bucket
of its own, beside the global one of the same name (create, PUT, GET, list, destroy), in the BMD
and across a restart; listed by namespace; addressed by our SDK's `Namespace`, the raw
`namespace=@#ns` query, a copy's `bck_to` uname, and the official `ais` CLI (`ais://#ns/b`).
What is not served (namespaces of cloud buckets, GetBatch across namespaces) is refused by name.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _ais_cli import NEEDS_CLI, Cli, rows
from _util import call, content_for, wait_job

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError
from aistore.sdk.namespace import Namespace
from aistore.server import LocalServer


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2) as s:
        yield s


@pytest.fixture(scope="module")
def client(srv: LocalServer) -> Client:
    return srv.client()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def read(bck: Bucket, name: str) -> bytes:
    return b"".join(bck.object(name).get_reader())


def assert_missing(bck: Bucket) -> None:
    """HEAD of `bck` is a 404 naming it (a namespaced bucket's 404 is no ErrBckNotFound to the
    SDK: its message names `ais://#ns/b`, as AIS's does)."""
    with pytest.raises(AISError) as e:
        bck.head()
    assert e.value.status_code == 404 and bck.name in str(e.value), e.value


def names(bck: Bucket) -> list[str]:
    return sorted(e.name for e in bck.list_all_objects())


def test_same_name_in_two_namespaces_is_two_buckets(client: Client) -> None:
    name, ns = unique("nsb"), Namespace(name=unique("ns"))
    glob = client.bucket(name).create()
    local = client.bucket(name, namespace=ns).create()
    glob.object("g.txt").get_writer().put_content(b"global")
    local.object("n.txt").get_writer().put_content(b"namespaced")
    local.object("shared").get_writer().put_content(b"in ns")
    glob.object("shared").get_writer().put_content(b"in global")
    assert names(glob) == ["g.txt", "shared"]
    assert names(local) == ["n.txt", "shared"]
    assert read(local, "shared") == b"in ns" and read(glob, "shared") == b"in global"
    assert local.object("n.txt").head().size == len(b"namespaced")
    # destroying one leaves the other whole
    local.delete()
    assert_missing(local)
    assert read(glob, "shared") == b"in global"


def test_list_buckets_by_namespace(srv: LocalServer, client: Client) -> None:
    name, ns = unique("lsb"), unique("ns")
    client.bucket(name, namespace=Namespace(name=ns)).create()
    client.bucket(name).create()
    every = call(srv, "GET", "/v1/buckets", params={"provider": "ais"}).json()
    ours = [b for b in every if b["name"] == name]
    assert sorted(b["namespace"]["name"] for b in ours) == ["", ns]
    only = call(
        srv, "GET", "/v1/buckets", params={"provider": "ais", "namespace": f"@#{ns}"}
    ).json()
    assert only == [{"name": name, "provider": "ais", "namespace": {"uuid": "", "name": ns}}]
    listed = client.cluster().list_buckets()
    assert any(b.name == name and b.namespace and b.namespace.name == ns for b in listed)


def test_bmd_keeps_namespaces_across_a_restart(srv: LocalServer, client: Client) -> None:
    name, ns = unique("bmd"), unique("ns")
    bck = client.bucket(name, namespace=Namespace(name=ns)).create()
    bck.object("kept").get_writer().put_content(content_for("kept", 3000))
    bmd = call(srv, "GET", "/v1/daemon", params={"what": "bmd"}).json()
    assert name in bmd["providers"]["ais"][f"@#{ns}"]
    assert name not in bmd["providers"]["ais"].get("@#", {})
    srv.restart()
    again = srv.client().bucket(name, namespace=Namespace(name=ns))
    assert read(again, "kept") == content_for("kept", 3000)
    assert_missing(srv.client().bucket(name))


def test_copy_into_a_namespace(srv: LocalServer, client: Client) -> None:
    src = client.bucket(unique("src")).create()
    for i in range(3):
        src.object(f"o{i}").get_writer().put_content(content_for(f"o{i}", 500))
    dst = client.bucket(unique("dst"), namespace=Namespace(name=unique("ns")))
    job = src.copy(dst)
    wait_job(srv.endpoint, job)
    assert names(dst) == ["o0", "o1", "o2"]
    assert read(dst, "o1") == content_for("o1", 500)


@pytest.mark.parametrize(
    ("params", "status", "words"),
    [
        ({"namespace": "@#bad ns"}, 400, "namespace"),
        ({"namespace": "nohash"}, 400, "namespace"),
        ({"namespace": "@#" + "x" * 65}, 400, "namespace"),
        ({"provider": "aws", "namespace": "@#prod"}, 501, "ais:// buckets only"),
        ({"namespace": "@@#"}, 400, "any remote cluster"),
        ({"namespace": "@nosuchalias#"}, 404, "remote ais clusters"),
    ],
)
def test_bad_or_unserved_namespaces_are_refused(
    srv: LocalServer, params: dict[str, str], status: int, words: str
) -> None:
    r = call(srv, "HEAD", "/v1/buckets/b1", params=params)
    assert r.status_code == status, (params, r.status_code, r.headers)
    assert words in r.headers.get("Hdr-Error", ""), r.headers.get("Hdr-Error")


def test_getbatch_across_namespaces_is_refused(srv: LocalServer) -> None:
    r = call(
        srv, "GET", "/v1/ml/moss/b", body={"in": [{"objname": "o"}]}, params={"namespace": "@#ns"}
    )
    assert r.status_code == 501 and "namespaces" in r.text


# --- the official CLI ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli(srv: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(srv.endpoint, tmp_path_factory.mktemp("ais-cli-home"))


@NEEDS_CLI
def test_cli_namespace_bucket_lifecycle(cli: Cli, client: Client, tmp_path: Path) -> None:
    name, ns = unique("clib"), unique("ns")
    uri = f"ais://#{ns}/{name}"
    cli.ok("bucket", "create", uri)
    bck = client.bucket(name, namespace=Namespace(name=ns))
    bck.head()
    src = tmp_path / "up.bin"
    src.write_bytes(content_for("up", 1234))
    cli.ok("put", str(src), f"{uri}/dir/up.bin")
    assert read(bck, "dir/up.bin") == content_for("up", 1234)
    listed = cli.ok("ls", uri)
    assert any(r and r[0] == "dir/up.bin" for r in rows(listed)), listed
    assert f"#{ns}" in cli.ok("ls", "ais://")  # the bucket list shows the namespace
    out = tmp_path / "down.bin"
    cli.ok("get", f"{uri}/dir/up.bin", str(out))
    assert out.read_bytes() == content_for("up", 1234)
    assert_missing(client.bucket(name))  # the global namespace has no such bucket
    cli.ok("bucket", "rm", uri, "--yes")
    assert_missing(bck)


def test_summary_names_the_namespace_and_s3_lists_global_buckets_only(
    srv: LocalServer, client: Client
) -> None:
    name, ns = unique("sum"), unique("ns")
    bck = client.bucket(name, namespace=Namespace(name=ns)).create()
    bck.object("a").get_writer().put_content(b"12345")
    summary = bck.summary()
    assert summary["namespace"] == {"uuid": "", "name": ns}
    assert summary["ObjCount"]["obj_count_present"] == "1"
    listed = call(srv, "GET", "/s3").text  # S3 names buckets of the global namespace only
    assert f"<Name>{name}</Name>" not in listed
    client.bucket(name).create()
    assert call(srv, "GET", "/s3").text.count(f"<Name>{name}</Name>") == 1
