"""The small remainder of the official SDK surface against the real server: accessors of
Bucket, Object and ObjectGroup, URL listings, raw make_request, and the two other Job waits
(wait_for_idle, wait_single_node)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from _parity import put_many

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import InvalidBckProvider
from aistore.sdk.namespace import Namespace
from aistore.sdk.provider import Provider
from aistore.sdk.types import BucketModel
from aistore.server import LocalServer


def test_bucket_accessors_and_make_request(bucket: Bucket, client: Client) -> None:
    assert bucket.name.startswith("test-") and bucket.provider is Provider.AIS
    assert bucket.namespace is None and bucket.qparam == {"provider": "ais"}
    assert bucket.get_path() == f"ais/@#/{bucket.name}/"
    assert bucket.as_model() == BucketModel(name=bucket.name, provider="ais")
    assert bucket.client is not None
    with_ns = Bucket("b", bucket.client, namespace=Namespace(uuid="u", name="n"))
    assert with_ns.qparam["namespace"] == "@u#n" and with_ns.get_path() == "ais/@u#n/b/"
    with pytest.raises(InvalidBckProvider):
        bucket.verify_cloud_bucket()
    Bucket("r", bucket.client, provider="s3").verify_cloud_bucket()
    resp = bucket.make_request("get", "list", value={"props": "name", "pagesize": 0})
    assert resp.status_code == 200 and "uuid" in resp.json()


def test_url_and_object_listings(bucket: Bucket, ais_server: LocalServer) -> None:
    put_many(ais_server.endpoint, bucket.name, ["u/1", "u/2", "v/3"])
    urls = list(bucket.list_urls(prefix="u/"))
    assert [requests.get(u, timeout=10).content for u in urls] == [b"u/1", b"u/2"]
    objs = list(bucket.list_all_objects_iter(prefix="u/", props="name,size"))
    assert [(o.name, o.props_cached.size if o.props_cached else None) for o in objs] == [
        ("u/1", 3),
        ("u/2", 3),
    ]
    group = bucket.objects(obj_names=["u/1", "v/3"])
    assert group.client is bucket.client
    assert [requests.get(u, timeout=10).content for u in group.list_urls()] == [b"u/1", b"v/3"]
    got = list(group.list_all_objects_iter(prefix="v/"))
    assert [o.name for o in got] == ["v/3"] and got[0].props_cached is not None
    assert [o.props_cached for o in group.list_all_objects_iter(props=None)] == [None, None]


def test_object_accessors(bucket: Bucket) -> None:
    obj = bucket.object("dir/x y")
    obj.get_writer().put_content(b"abc")
    assert obj.bucket_name == bucket.name and obj.bucket_provider is Provider.AIS
    assert obj.query_params == {"provider": "ais"} and obj.name == "dir/x y"
    assert obj.uname == f"ais/@#/{bucket.name}/dir/x y"
    assert obj.get_semantic_url() == f"ais://{bucket.name}/dir/x y"
    assert obj.props_cached is None
    assert obj.props.size == 3 and obj.props_cached is not None
    assert obj.props_cached.name == "dir/x y" and obj.props_cached.bucket_name == bucket.name


@pytest.fixture(scope="module")
def quick_idle_server() -> Iterator[LocalServer]:
    """A copy-listrange job idles for --job-idle-timeout after its work before it ends (60 s by
    default, as AIS): a server of its own with 1 s, so waiting for the end takes a second."""
    with LocalServer(num_mountpaths=1, args=["--job-idle-timeout", "1000"]) as srv:
        yield srv


def test_wait_for_idle_and_single_node(quick_idle_server: LocalServer) -> None:
    client = quick_idle_server.client()
    bucket = client.bucket("idle-src").create()
    put_many(quick_idle_server.endpoint, bucket.name, [f"w/{i}" for i in range(5)])
    dst = client.bucket(bucket.name + "-w")
    (job_id,) = bucket.objects(obj_template="w/{0..4}").copy(dst)
    job = client.job(job_id)
    assert job.job_id == job_id and job.job_kind == ""
    result = job.wait_for_idle(timeout=60)
    assert result.success and len(dst.list_all_objects()) == 5
    assert client.job(job_id).wait_single_node(timeout=60).success
    kinded = client.job(job_id, job_kind="copy-listrange")
    assert kinded.job_kind == "copy-listrange" and kinded.wait(timeout=60).success
    dst.delete()
