"""Cluster and job calls of the SDK against the real server."""

from __future__ import annotations

import pytest

from aistore import Client
from aistore.sdk import Bucket
from aistore.sdk.errors import AISError
from aistore.server import LocalServer


def test_cluster_map_and_readiness(client: Client, ais_server: LocalServer) -> None:
    cluster = client.cluster()
    smap = cluster.get_info()
    assert smap.proxy_si.public_net is not None
    assert cluster.get_primary_url() == smap.proxy_si.public_net.direct_url
    assert cluster.get_primary_url().rstrip("/") == ais_server.endpoint.rstrip("/")
    assert smap.tmap, "the node must list itself as a target"
    assert cluster.get_uuid() == smap.uuid != ""
    assert cluster.is_ready() is True


def test_list_buckets(client: Client, bucket: Bucket) -> None:
    names = [b.name for b in client.cluster().list_buckets()]
    assert bucket.name in names
    all_providers = client.cluster().list_buckets(provider="")
    assert bucket.name in [b.name for b in all_providers]
    assert all(b.provider == "ais" for b in client.cluster().list_buckets())


def test_direct_read_uses_the_map(client: Client, bucket: Bucket) -> None:
    obj = bucket.object("direct/x.bin")
    obj.get_writer().put_content(b"direct bytes")
    assert obj.get_reader(direct=True).read_all() == b"direct bytes"


def test_rechunk_job_status_and_wait(client: Client, bucket: Bucket) -> None:
    data = bytes(range(256)) * 64
    bucket.object("r/obj").get_writer().put_content(data)
    value = {"objsize-limit": 1024, "chunk-size": 4096, "prefix": "", "sync-remote": False}
    job_id = bucket.make_request("POST", "rechunk", value=value).text
    assert job_id
    result = client.job(job_id).wait(timeout=60, verbose=False)
    assert result.success, result.error
    assert result.job_id == job_id
    status = client.job(job_id).status()
    assert status.end_time > 0 and not status.aborted
    chunks = bucket.object("r/obj").head("chunked").chunks
    assert chunks is not None and chunks.chunk_count == 4 and chunks.max_chunk_size == 4096
    assert bucket.object("r/obj").get_reader().read_all() == data


def test_unknown_job_status_is_an_error(client: Client) -> None:
    with pytest.raises(AISError) as info:
        client.job("no-such-job").status()
    assert info.value.status_code == 404
