"""The official `ais` CLI (AIStore 5.0) on gs:// buckets, against the module's emulator, fault
proxy and aistore-server (conftest.py): listing, cold and warm GET, the bucket list. Each command
must exit 0 and print no error; effects are checked through our SDK and the proxy's counts. The
module is skipped without the CLI (_ais_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ais_cli import NEEDS_CLI, Cli, rows
from _gcs import GcsJson
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
def remote_bck(client: Client, gcs: GcsJson, bucket: str) -> Bucket:
    """A fresh GCS bucket holding KEYS, none of them cached; its gs:// bucket in our SDK."""
    for key, data in KEYS.items():
        gcs.put(bucket, key, data)
    return client.bucket(bucket, provider="gcp")


def cached(bck: Bucket) -> set[str]:
    return {e.name for e in bck.list_all_objects(flags=[ListObjectFlag.CACHED])}


def test_ls_get_and_buckets(
    cli: Cli, remote_bck: Bucket, proxy: FaultProxy, tmp_path: Path
) -> None:
    uri = f"gs://{remote_bck.name}"
    listed = rows(cli.ok("ls", uri, "--units", "raw", "-H"))
    assert {r[0]: (int(r[1]), r[2]) for r in listed} == {k: (len(d), "no") for k, d in KEYS.items()}
    assert [r[0] for r in rows(cli.ok("ls", uri, "--nr", "-H"))] == ["p/", "q/", "top.txt"]

    name = "q/deep/x.bin"
    path = f"/storage/v1/b/{remote_bck.name}/o/q%2Fdeep%2Fx.bin"
    cli.ok("get", f"{uri}/{name}", str(tmp_path / "x.bin"))
    assert (tmp_path / "x.bin").read_bytes() == KEYS[name]
    assert cached(remote_bck) == {name}
    fetched = proxy.count("GET", path)
    cli.ok("get", f"{uri}/{name}", str(tmp_path / "again"))
    assert (tmp_path / "again").read_bytes() == KEYS[name]
    assert proxy.count("GET", path) == fetched, "a warm GET does not reach GCS"
    assert [r[0] for r in rows(cli.ok("ls", uri, "--cached", "-H"))] == [name]

    present = {r[0]: r[1] for r in rows(cli.ok("ls", "gs", "--all", "-H")) if len(r) == 2}
    assert present.get(uri) == "yes"
