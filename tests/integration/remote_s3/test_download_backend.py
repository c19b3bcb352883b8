"""Download jobs of type `backend` (spec backends-and-downloads §7): a remote s3:// bucket's
objects under a prefix, ending in a suffix, fetched into the cluster; unchanged cached ones
skipped; `synchronize` drops cached objects the backend no longer has. Also `single` with
`from_remote`, and our SDK's `client.download()`. The S3 server and aistore-server of the
module are conftest.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from _http_files import FileServer, file_bytes
from _s3 import RemoteS3, remote_s3

from aistore.sdk import Client
from aistore.sdk.errors import AISError
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteS3]:
    """conftest.py's stack, its server also allowed to download from this host (the links)."""
    with remote_s3(args=("--download-allow-loopback",)) as r:
        yield r


@pytest.fixture(scope="module")
def files() -> Iterator[FileServer]:
    fs = FileServer()
    yield fs
    fs.stop()


def cached(client: Client, bucket: str) -> list[str]:
    b = client.bucket(bucket, provider="aws")
    return sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))


def test_backend_prefix_suffix_skip_and_sync(client: Client, s3: Any, bucket: str) -> None:
    for key in ("d/a.tar", "d/b.tar", "d/c.txt", "e/x.tar"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode() * 100)
    b = client.bucket(bucket, provider="aws")
    dl = client.download()
    dl.start_backend(b, prefix="d/", suffix=".tar")
    st = dl.wait(timeout=60)
    assert st.total == -1 and st.finished_cnt == 2 and st.error_cnt == 0, st
    assert st.description == f"remote bucket prefetch -> s3://{bucket}"
    assert cached(client, bucket) == ["d/a.tar", "d/b.tar"]
    assert b.object("d/a.tar").get_reader().read_all() == b"d/a.tar" * 100

    # Again: both cached and unchanged, so skipped; one changed remotely is fetched again.
    s3.put_object(Bucket=bucket, Key="d/b.tar", Body=b"new")
    st = client.download(dl.start_backend(b, prefix="d/", suffix=".tar")).wait(timeout=60)
    assert st.skipped_cnt == 1 and st.finished_cnt == 2, st
    assert b.object("d/b.tar").get_reader().read_all() == b"new"

    # synchronize: what S3 no longer has goes from the cache too.
    s3.delete_object(Bucket=bucket, Key="d/a.tar")
    st = client.download(dl.start_backend(b, prefix="d/", suffix=".tar", sync=True)).wait(
        timeout=60
    )
    assert st.error_cnt == 0, st
    assert cached(client, bucket) == ["d/b.tar"]


def test_single_from_remote(client: Client, server: LocalServer, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="one", Body=b"1" * 1000)
    b = client.bucket(bucket, provider="aws")
    ep = server.endpoint
    body = {
        "type": "single",
        "bucket": {"name": bucket, "provider": "aws"},
        "object_name": "one",
        "from_remote": True,
    }
    r = requests.post(f"{ep}/v1/download", json=body, timeout=30)
    assert r.status_code == 200, r.text
    st = client.download(r.json()["id"]).wait(timeout=60)
    assert st.finished_cnt == 1, st
    assert cached(client, bucket) == ["one"]
    assert b.object("one").get_reader().read_all() == b"1" * 1000


def test_backend_needs_a_remote_bucket(client: Client) -> None:
    b = client.bucket("plain-ais-dl").create(exist_ok=True)
    with pytest.raises(AISError) as info:
        client.download().start_backend(b)
    assert info.value.status_code == 400
    assert "requires a remote bucket" in str(info.value)


def test_links_into_an_s3_bucket_are_written_through(
    client: Client, s3: Any, bucket: str, files: FileServer
) -> None:
    """As AIS's OWT put: a downloaded file lands in S3 first, then in the cache; a large one
    (concurrent ranges, a multipart upload here) too."""
    b = client.bucket(bucket, provider="aws")
    links = {
        "small.bin": f"{files.url}/files/70000/wt-small",
        "big.bin": f"{files.url}/files/{40 << 20}/wt-big",
    }
    dl = client.download()
    dl.start_multi(b, links)
    st = dl.wait(timeout=120, progress=False)
    assert st.finished_cnt == 2 and st.error_cnt == 0, st
    for name, size, seed in (("small.bin", 70000, "wt-small"), ("big.bin", 40 << 20, "wt-big")):
        body = s3.get_object(Bucket=bucket, Key=name)["Body"].read()
        assert body == file_bytes(seed, size), name
        assert b.object(name).get_reader().read_all() == body
    assert cached(client, bucket) == ["big.bin", "small.bin"]
