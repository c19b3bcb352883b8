"""The official `ais` CLI (AIStore 5.0) on az:// buckets, against the module's Azurite, fault
proxy and aistore-server (conftest.py): listing, cold and warm GET, PUT, the bucket list. Each
command must exit 0 and print no error; effects are checked through Azure, our SDK and the
proxy's counts. The module is skipped without the CLI (_ais_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ais_cli import NEEDS_CLI, Cli, rows
from _azure import ACCOUNT, AzureBlobs
from _s3 import FaultProxy

from aistore.sdk import Client
from aistore.sdk.bucket import Bucket
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

pytestmark = NEEDS_CLI

KEYS = {"top.txt": b"top\n", "p/00": b"A" * 100, "p/01": b"B" * 101, "q/deep/x.bin": b"x" * 300}


@pytest.fixture(scope="module")
def cli(server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(server.endpoint, tmp_path_factory.mktemp("ais-cli-home"))


@pytest.fixture
def remote_bck(client: Client, azure: AzureBlobs, bucket: str) -> Bucket:
    """A fresh container holding KEYS, none of them cached; its az:// bucket in our SDK."""
    for key, data in KEYS.items():
        azure.put(bucket, key, data)
    return client.bucket(bucket, provider="azure")


def cached(bck: Bucket) -> set[str]:
    return {e.name for e in bck.list_all_objects(flags=[ListObjectFlag.CACHED])}


def test_ls_get_put_and_buckets(
    cli: Cli, remote_bck: Bucket, azure: AzureBlobs, proxy: FaultProxy, tmp_path: Path
) -> None:
    uri = f"az://{remote_bck.name}"
    listed = rows(cli.ok("ls", uri, "--units", "raw", "-H"))
    assert {r[0]: (int(r[1]), r[2]) for r in listed} == {k: (len(d), "no") for k, d in KEYS.items()}
    assert [r[0] for r in rows(cli.ok("ls", uri, "--nr", "-H"))] == ["p/", "q/", "top.txt"]

    name = "q/deep/x.bin"
    path = f"/{ACCOUNT}/{remote_bck.name}/{name}"
    cli.ok("get", f"{uri}/{name}", str(tmp_path / "x.bin"))
    assert (tmp_path / "x.bin").read_bytes() == KEYS[name]
    assert cached(remote_bck) == {name}
    fetched = proxy.count("GET", path)
    assert fetched == 1
    cli.ok("get", f"{uri}/{name}", str(tmp_path / "again"))
    assert (tmp_path / "again").read_bytes() == KEYS[name]
    assert proxy.count("GET", path) == fetched, "a warm GET does not reach Azure"
    assert [r[0] for r in rows(cli.ok("ls", uri, "--cached", "-H"))] == [name]

    src = tmp_path / "up.bin"
    src.write_bytes(b"from the cli" * 100)
    cli.ok("put", str(src), f"{uri}/up/up.bin")
    assert azure.get(remote_bck.name, "up/up.bin") == src.read_bytes(), "written through"
    assert "up/up.bin" in cached(remote_bck)

    present = {r[0]: r[1] for r in rows(cli.ok("ls", "az", "--all", "-H")) if len(r) == 2}
    assert present.get(uri) == "yes"
