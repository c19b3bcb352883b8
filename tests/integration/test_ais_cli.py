"""The official `ais` CLI (AIStore 5.0) against our server: the commands users run first.

test_cli_endpoints.py replays the CLI's requests; here the real binary runs, so a field it cannot
decode fails the command as it fails for a user. Each test checks that the command exits 0, that
it prints no error, and that it had its effect on the server, seen through our SDK (the bytes of
an object, a bucket present or gone, a property changed, the names a listing holds).

The CLI is found and run as _ais_cli.py says; the module is skipped without it. The commands
on remote s3:// buckets are in remote_s3/test_ais_cli_remote.py.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from _ais_cli import NEEDS_CLI, Cli, props_table, rows
from _util import content_for, wait_job, xxh64_hex

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import ErrBckNotFound, ErrObjNotFound
from aistore.server import LocalServer

pytestmark = NEEDS_CLI

# Small enough that the CLI prints every size exactly ("700B"); names without "error" in them.
OBJECTS = {
    "a.txt": content_for("a.txt", 100),
    "dir/b.bin": content_for("dir/b.bin", 700),
    "dir/sub/c.bin": content_for("dir/sub/c.bin", 900),
}


def tar_members(data: bytes) -> dict[str, bytes]:
    """Name -> content of each file in a tar; fails the test when `data` is not a tar."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            return {
                m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if m.isfile()
            }
    except tarfile.ReadError as e:
        why = str(e)
    pytest.fail(f"not a tar ({why}): {len(data)} bytes, starting {data[:32]!r}", pytrace=False)


def bucket_props(bck: Bucket) -> dict[str, Any]:
    props: dict[str, Any] = json.loads(bck.head()["Ais-Bucket-Props"])
    return props


def bucket_names(client: Client) -> set[str]:
    return {b.name for b in client.cluster().list_buckets()}


def fresh_bucket(client: Client, objects: Mapping[str, bytes] | None = None) -> Bucket:
    """A new bucket made through the SDK, holding `objects`."""
    bck = client.bucket(f"cli-{uuid.uuid4().hex[:10]}").create()
    for name, data in (objects or {}).items():
        bck.object(name).get_writer().put_content(data)
    return bck


def read(bck: Bucket, name: str) -> bytes:
    return b"".join(bck.object(name).get_reader())


def contents(bck: Bucket) -> dict[str, bytes]:
    """Name -> bytes of every object in the bucket."""
    return {e.name: read(bck, e.name) for e in bck.list_all_objects()}


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2) as s:
        yield s


@pytest.fixture(scope="module")
def client(srv: LocalServer) -> Client:
    return srv.client()


@pytest.fixture(scope="module")
def cli(srv: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(srv.endpoint, tmp_path_factory.mktemp("ais-cli-home"))


@pytest.fixture(scope="module")
def src(client: Client) -> Bucket:
    """A bucket holding OBJECTS, written through the SDK; tests only read it."""
    return fresh_bucket(client, OBJECTS)


@pytest.fixture(scope="module")
def tid(client: Client) -> str:
    ((target,),) = [list(client.cluster().get_info().tmap)]
    return target


# --- buckets and objects --------------------------------------------------------------------


def test_bucket_create(cli: Cli, client: Client) -> None:
    name = f"cli-{uuid.uuid4().hex[:10]}"
    cli.ok("bucket", "create", f"ais://{name}")
    assert name in bucket_names(client)
    assert bucket_props(client.bucket(name))["provider"] == "ais"


def test_ls_buckets(cli: Cli, src: Bucket) -> None:
    out = cli.ok("ls")
    assert f"ais://{src.name}" in out, out


def test_put_file(cli: Cli, client: Client, tmp_path: Path) -> None:
    bck = fresh_bucket(client)
    data = content_for("put.bin", 777)
    (tmp_path / "put.bin").write_bytes(data)
    cli.ok("put", str(tmp_path / "put.bin"), f"ais://{bck.name}/in/put.bin")
    assert contents(bck) == {"in/put.bin": data}


def test_put_directory_recursive(cli: Cli, client: Client, tmp_path: Path) -> None:
    bck = fresh_bucket(client)
    files = {"a.txt": b"alpha\n", "sub/b.txt": b"beta\n", "sub/deeper/c.bin": bytes(range(256))}
    for rel, data in files.items():
        (tmp_path / "tree" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / rel).write_bytes(data)
    cli.ok("put", str(tmp_path / "tree"), f"ais://{bck.name}/up/", "--recursive", "--yes")
    assert contents(bck) == {f"up/{rel}": data for rel, data in files.items()}


def test_get_to_file(cli: Cli, src: Bucket, tmp_path: Path) -> None:
    for name, data in OBJECTS.items():
        out = tmp_path / name.replace("/", "_")
        cli.ok("get", f"ais://{src.name}/{name}", str(out))
        assert out.read_bytes() == data, name


def test_ls_bucket(cli: Cli, src: Bucket) -> None:
    out = cli.ok("ls", f"ais://{src.name}", "--units", "raw", "-H")
    assert {r[0]: int(r[1]) for r in rows(out)} == {n: len(d) for n, d in OBJECTS.items()}, out
    assert {e.name for e in src.list_all_objects()} == set(OBJECTS)


def test_ls_bucket_props(cli: Cli, src: Bucket, tid: str) -> None:
    out = cli.ok("ls", f"ais://{src.name}", "--props", "name,size,checksum", "--units", "raw", "-H")
    want = {n: [n, str(len(d)), xxh64_hex(d)] for n, d in OBJECTS.items()}
    assert {r[0]: r for r in rows(out)} == want, out

    out = cli.ok("ls", f"ais://{src.name}", "--props", "all", "-H")
    listed = {r[0]: r for r in rows(out)}
    assert set(listed) == set(OBJECTS), out
    for name, data in OBJECTS.items():
        row = listed[name]
        assert xxh64_hex(data) in row and f"t[{tid}]" in row and row[-1] == "ok", out


def test_show_object(cli: Cli, src: Bucket, tid: str) -> None:
    name = "dir/b.bin"
    data = OBJECTS[name]
    shown = props_table(cli.ok("show", "object", f"ais://{src.name}/{name}", "-H"))
    assert shown["name"] == f"ais://{src.name}/{name}", shown
    assert shown["size"] == f"{len(data)}B", shown
    cksum_type = bucket_props(src)["checksum"]["type"]
    assert shown["checksum"] == f"{cksum_type}[{xxh64_hex(data)}]", shown
    assert src.object(name).head().size == len(data)

    shown = props_table(cli.ok("show", "object", f"ais://{src.name}/{name}", "--props", "all"))
    assert shown["size"] == f"{len(data)}B", shown
    assert shown["location"].startswith(f"t[{tid}]"), shown
    assert shown["copies"].startswith("1"), shown


def test_show_bucket(cli: Cli, src: Bucket) -> None:
    props = bucket_props(src)
    shown = props_table(cli.ok("show", "bucket", f"ais://{src.name}", "-H"))
    assert shown["provider"] == "ais" and shown["present"] == "yes", shown
    assert shown["checksum.type"] == props["checksum"]["type"], shown
    versioning = str(props["versioning"]["enabled"]).lower()
    assert shown["versioning.enabled"] == versioning, shown

    same = props_table(cli.ok("bucket", "props", "show", f"ais://{src.name}", "-H"))
    assert same == shown

    doc = json.loads(cli.ok("show", "bucket", f"ais://{src.name}", "--json"))
    assert doc["provider"] == "ais" and doc["checksum"] == props["checksum"], doc


def test_bucket_props_set(cli: Cli, client: Client) -> None:
    bck = fresh_bucket(client)
    before = bucket_props(bck)["versioning"]["enabled"]
    want = not before
    cli.ok("bucket", "props", "set", f"ais://{bck.name}", f"versioning.enabled={str(want).lower()}")
    props = bucket_props(bck)
    assert props["versioning"]["enabled"] is want, props

    shown = props_table(cli.ok("bucket", "props", "show", f"ais://{bck.name}", "versioning", "-H"))
    assert shown["versioning.enabled"] == str(want).lower(), shown

    cli.ok("bucket", "props", "set", f"ais://{bck.name}", "checksum.type=md5")
    assert bucket_props(bck)["checksum"]["type"] == "md5"
    shown = props_table(cli.ok("show", "bucket", f"ais://{bck.name}", "checksum", "-H"))
    assert shown["checksum.type"] == "md5", shown


# --- cluster, storage, jobs, performance -----------------------------------------------------


def test_show_cluster(cli: Cli, client: Client) -> None:
    smap = client.cluster().get_info()
    out = cli.ok("show", "cluster")
    lines = out.splitlines()
    for node in (f"p[{next(iter(smap.pmap))}]", f"t[{next(iter(smap.tmap))}]"):
        (row,) = [line for line in lines if line.startswith(node)]
        assert "online" in row, out


def test_show_storage(cli: Cli, tid: str) -> None:
    out = cli.ok("show", "storage")
    assert any(line.startswith(f"t[{tid}]") for line in out.splitlines()), out


def test_show_performance(cli: Cli, srv: LocalServer, src: Bucket, tid: str) -> None:
    # `ais show performance` alone shows four views 5 s apart; `ais performance` is the same
    # command. Counters and capacity are the views that answer at once.
    out = cli.ok("show", "performance", "counters")
    header, *body = rows(out)
    (row,) = [r for r in body if r[0] == f"t[{tid}]"]
    assert int(row[header.index("PUT(n)")]) >= len(OBJECTS), out

    header, *body = rows(cli.ok("performance", "capacity"))
    (row,) = [r for r in body if r[0] == f"t[{tid}]"]
    assert int(row[header.index("MOUNTPATHS")]) == len(srv.mountpaths), (header, row)


def test_show_job_after_copy(cli: Cli, srv: LocalServer, client: Client, src: Bucket) -> None:
    dst = f"cli-{uuid.uuid4().hex[:10]}"
    out = cli.ok("bucket", "cp", f"ais://{src.name}", f"ais://{dst}")
    m = re.search(r"ais show job (\S+)'", out)
    assert m, out
    job_id = m.group(1)
    wait_job(srv.endpoint, job_id)

    cli.ok("show", "job")  # running jobs only: none, or the copy
    for args in (("show", "job", job_id), ("show", "job", "copy-bucket", "--all")):
        out = cli.ok(*args)
        (row,) = [r for r in rows(out) if job_id in r]
        assert row[2:5] == ["copy-bck", f"ais://{src.name}", f"ais://{dst}"], out
        assert row[-1] == "Finished", out
    assert contents(client.bucket(dst)) == OBJECTS


# --- bucket inventory ------------------------------------------------------------------------
# AIS builds inventories of remote buckets only (remote_s3/test_ais_cli_remote.py has those);
# ours also of ais:// buckets, where a listing from one reads a few chunks instead of every object.


def test_nbi_on_ais_bucket(cli: Cli, client: Client) -> None:
    bck = fresh_bucket(client, OBJECTS)
    uri = f"ais://{bck.name}"
    out = cli.ok("nbi", "create", uri, "--inv-name", "snap")
    m = re.search(r"ais show job (\S+)'", out)
    assert m, out
    cli.ok("wait", m.group(1))
    assert list(bck.show_inventory()) == [f"ais/@#/{bck.name}/snap"]

    header, *body = rows(cli.ok("nbi", "show", uri))
    assert header[:4] == ["BUCKET", "NAME", "SIZE", "OBJECTS"], header
    assert [(r[0], r[1], r[3]) for r in body] == [(uri, "snap", str(len(OBJECTS)))], body
    assert any(r[:2] == [uri, "snap"] for r in rows(cli.ok("nbi", "show", "ais:")))

    listed = rows(cli.ok("ls", uri, "--inventory", "--units", "raw", "-H"))
    assert {r[0]: int(r[1]) for r in listed} == {n: len(d) for n, d in OBJECTS.items()}
    top = cli.ok("ls", uri, "--inventory", "--nr", "-H")
    assert [r[0] for r in rows(top)] == ["dir/", "a.txt"], top  # the CLI puts directories first
    assert top == cli.ok("ls", uri, "--nr", "-H")
    under = rows(cli.ok("ls", f"{uri}/dir/", "--inventory", "--nr", "-H"))
    assert [r[0] for r in under] == ["dir/sub/", "dir/b.bin"]

    cli.ok("nbi", "rm", uri, "--inv-name", "snap")
    assert bck.show_inventory() == {}
    assert "No inventories for" in cli.ok("nbi", "show", uri)


# --- copy, rename, archive, remove -----------------------------------------------------------


def test_bucket_cp_wait(cli: Cli, client: Client, src: Bucket) -> None:
    dst = f"cli-{uuid.uuid4().hex[:10]}"
    cli.ok("bucket", "cp", f"ais://{src.name}", f"ais://{dst}", "--wait")
    assert contents(client.bucket(dst)) == OBJECTS
    assert contents(src) == OBJECTS


def test_bucket_mv_wait(cli: Cli, client: Client) -> None:
    bck = fresh_bucket(client, OBJECTS)
    new = f"cli-{uuid.uuid4().hex[:10]}"
    cli.ok("bucket", "mv", f"ais://{bck.name}", f"ais://{new}", "--wait")
    names = bucket_names(client)
    assert new in names and bck.name not in names, names
    assert contents(client.bucket(new)) == OBJECTS


def test_archive_put_file(cli: Cli, client: Client, tmp_path: Path) -> None:
    bck = fresh_bucket(client)
    (tmp_path / "one.txt").write_bytes(b"one file\n")
    cli.ok("archive", "put", str(tmp_path / "one.txt"), f"ais://{bck.name}/one.tar")
    assert tar_members(read(bck, "one.tar")) == {"one.txt": b"one file\n"}


def test_archive_put_directory(cli: Cli, client: Client, tmp_path: Path) -> None:
    bck = fresh_bucket(client)
    files = {"a.txt": b"alpha\n", "sub/b.txt": b"beta\n"}
    for rel, data in files.items():
        (tmp_path / "d" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "d" / rel).write_bytes(data)
    cli.ok("archive", "put", str(tmp_path / "d"), f"ais://{bck.name}/d.tar", "-r", "--yes")
    assert tar_members(read(bck, "d.tar")) == files


def test_archive_bucket(cli: Cli, client: Client, src: Bucket) -> None:
    dst = fresh_bucket(client)
    listed = ["a.txt", "dir/b.bin"]
    cli.ok(
        "archive",
        "bucket",
        f"ais://{src.name}",
        f"ais://{dst.name}/list.tar",
        "--list",
        ",".join(listed),
        "--wait",
    )
    assert tar_members(read(dst, "list.tar")) == {n: OBJECTS[n] for n in listed}

    cli.ok("archive", "bucket", f"ais://{src.name}/dir/", f"ais://{dst.name}/dir.tar", "--wait")
    want = {n: d for n, d in OBJECTS.items() if n.startswith("dir/")}
    assert tar_members(read(dst, "dir.tar")) == want


def test_object_rm(cli: Cli, client: Client) -> None:
    bck = fresh_bucket(client, {"keep.bin": b"keep", "gone.bin": b"gone"})
    cli.ok("object", "rm", f"ais://{bck.name}/gone.bin")
    assert contents(bck) == {"keep.bin": b"keep"}
    with pytest.raises(ErrObjNotFound):
        read(bck, "gone.bin")


def test_bucket_rm(cli: Cli, client: Client) -> None:
    bck = fresh_bucket(client, {"x.bin": b"x"})
    cli.ok("bucket", "rm", f"ais://{bck.name}", "--yes")
    assert bck.name not in bucket_names(client)
    with pytest.raises(ErrBckNotFound):
        bck.list_all_objects()


def test_etl_commands(cli: Cli, client: Client) -> None:
    """`ais etl` against an ETL started with our SDK (a transformer as a local process)."""
    from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer

    name = f"upper-{uuid.uuid4().hex[:8]}"

    @client.etl(name).init_class()
    class Upper(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return data.upper()

    table = {r[0]: r[1:] for r in rows(cli.ok("etl", "show"))}
    assert table[name][0] == "Running"
    shown = cli.ok("etl", "show", name)
    assert "hpush://" in shown and "aistorage/runtime_python" in shown
    bck = fresh_bucket(client, OBJECTS)
    bck.object("hello.txt").get_writer().put_content(b"hello etl")
    assert cli.ok("etl", "object", name, f"ais://{bck.name}/hello.txt", "-") == "HELLO ETL"
    cli.ok("etl", "object", name, "cp", f"ais://{bck.name}/dir/b.bin", f"ais://{bck.name}/b.up")
    assert read(bck, "b.up") == OBJECTS["dir/b.bin"].upper()
    dst = f"cli-etl-{uuid.uuid4().hex[:8]}"
    cli.ok("etl", "bucket", name, f"ais://{bck.name}", f"ais://{dst}", "--prefix", "dir/", "--wait")
    expected = {n: d.upper() for n, d in OBJECTS.items() if n.startswith("dir/")}
    assert contents(client.bucket(dst)) == expected
    assert "aistore.etl_runtime" in cli.ok("etl", "view-logs", name)
    cli.ok("etl", "stop", name)
    assert {r[0]: r[1] for r in rows(cli.ok("etl", "show"))}[name] == "Aborted"
    cli.ok("etl", "start", name)
    assert {r[0]: r[1] for r in rows(cli.ok("etl", "show"))}[name] == "Running"
    cli.ok("etl", "rm", name)
    assert name not in cli.ok("etl", "show")
