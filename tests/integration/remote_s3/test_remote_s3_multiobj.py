"""Remote s3:// buckets behaving as AIS's (issue 35): multi-object delete written through to S3,
evict by template and prefix, copies into a remote bucket, `start_after`, checksums of fetched
objects, directory listings that agree with ais:// ones, job queries and custom metadata.
The S3 server, fault proxy and aistore-server of the module are conftest.py's.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from _s3 import Fault, FaultProxy
from _util import bucket_action, raw_request, xxh64_hex

from aistore.sdk import Client
from aistore.sdk.errors import AISError, ErrObjNotFound
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

_counter = iter(range(10**6))  # names of the ais:// buckets a test makes


def put(s3: Any, bucket: str, *keys: str) -> None:
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())


def in_s3(s3: Any, bucket: str) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


def cached(client: Client, bucket: str) -> list[str]:
    b = client.bucket(bucket, provider="aws")
    return sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))


def delete_listrange(endpoint: str, bucket: str, value: dict[str, Any]) -> str:
    """DELETE delete-listrange as the SDK sends it (raw: the SDK refuses an empty template)."""
    return bucket_action(endpoint, "DELETE", bucket, "delete-listrange", value, "aws").decode()


def test_delete_list_range_prefix_and_bucket_write_through(
    client: Client, s3: Any, bucket: str, server: LocalServer, proxy: FaultProxy
) -> None:
    put(s3, bucket, "l/1", "l/2", "r/0", "r/2", "p/a", "p/b/c", "q", "z")
    b = client.bucket(bucket, provider="aws")
    for name in ("l/1", "r/0", "p/a", "q"):
        b.object(name).get_reader().read_all()

    assert client.job(b.objects(obj_names=["l/1", "l/2"]).delete()).wait(timeout=60).success
    assert in_s3(s3, bucket) == ["p/a", "p/b/c", "q", "r/0", "r/2", "z"]
    assert cached(client, bucket) == ["p/a", "q", "r/0"]

    # A range names objects that need not exist: r/1 is skipped, not an error.
    job = b.objects(obj_template="r/{0..2}").delete()
    assert client.job(job).wait(timeout=60).success
    assert in_s3(s3, bucket) == ["p/a", "p/b/c", "q", "z"]
    stats = client.job(job).get_details().list_snapshots()[0].stats
    assert stats is not None and stats.objects == 2
    assert proxy.count("DELETE", f"/{bucket}/r/1") == 0

    # A prefix is listed in S3 (p/b/c was never cached).
    assert client.job(b.objects(obj_template="p/").delete()).wait(timeout=60).success
    assert in_s3(s3, bucket) == ["q", "z"]
    assert cached(client, bucket) == ["q"]

    # The whole bucket, cached copies included.
    whole = delete_listrange(server.endpoint, bucket, {"template": ""})
    assert client.job(whole).wait(timeout=60).success
    assert in_s3(s3, bucket) == [] and cached(client, bucket) == []


def test_delete_missing_listed_name_fails_the_job(client: Client, s3: Any, bucket: str) -> None:
    put(s3, bucket, "a", "b")
    b = client.bucket(bucket, provider="aws")
    result = client.job(b.objects(obj_names=["a", "nope", "b"]).delete()).wait(timeout=60)
    assert not result.success
    assert result.error is not None and f"s3://{bucket}/nope does not exist" in result.error
    assert in_s3(s3, bucket) == [], "the rest went"


def test_delete_backend_failure_leaves_the_cache(
    client: Client, s3: Any, bucket: str, proxy: FaultProxy, server: LocalServer
) -> None:
    put(s3, bucket, "a", "b", "c")
    b = client.bucket(bucket, provider="aws")
    for name in ("a", "b", "c"):
        b.object(name).get_reader().read_all()
    # One at a time: the refused b stops the job before c.
    proxy.inject(Fault(status=403, match=f"DELETE /{bucket}/b"))
    job = delete_listrange(server.endpoint, bucket, {"objnames": ["b", "c"], "num-workers": -1})
    result = client.job(job).wait(timeout=60)
    assert not result.success and "aws-error[" in str(result.error)
    assert in_s3(s3, bucket) == ["a", "b", "c"] and cached(client, bucket) == ["a", "b", "c"]

    # Continue on error: b is recorded and stays (in S3 and cached), c goes.
    proxy.inject(Fault(status=403, match=f"DELETE /{bucket}/b"))
    job = delete_listrange(server.endpoint, bucket, {"objnames": ["b", "c"], "coer": True})
    result = client.job(job).wait(timeout=60)
    assert not result.success and f"s3://{bucket}/b" in str(result.error)
    assert in_s3(s3, bucket) == ["a", "b"] and cached(client, bucket) == ["a", "b"]


def list_raw(endpoint: str, bucket: str, value: dict[str, Any]) -> dict[str, Any]:
    """One list-objects page of s3://bucket (JSON), raw: the SDK refuses `start_after` on a
    remote bucket before sending it, as the official one does."""
    page: dict[str, Any] = json.loads(bucket_action(endpoint, "GET", bucket, "list", value, "aws"))
    return page


def test_list_start_after(client: Client, s3: Any, bucket: str, server: LocalServer) -> None:
    put(s3, bucket, "a", "b", "c", "d")
    client.bucket(bucket, provider="aws").object("c").get_reader().read_all()

    def names(page: dict[str, Any]) -> list[str]:
        return [e["name"] for e in page["entries"]]

    assert names(list_raw(server.endpoint, bucket, {"props": "name", "start_after": "b"})) == [
        "c",
        "d",
    ]
    merged = list_raw(server.endpoint, bucket, {"props": "name,size,atime", "start_after": "b"})
    assert names(merged) == ["c", "d"] and merged["entries"][0]["flags"] & 64  # c is cached
    # the first page only: a continuation goes on from S3's token
    first = list_raw(server.endpoint, bucket, {"props": "name", "start_after": "a", "pagesize": 2})
    assert names(first) == ["b", "c"] and first["continuation_token"]
    rest = list_raw(
        server.endpoint,
        bucket,
        {
            "props": "name",
            "start_after": "a",
            "pagesize": 2,
            "continuation_token": first["continuation_token"],
            "uuid": first["uuid"],
        },
    )
    assert names(rest) == ["d"]
    cached = list_raw(server.endpoint, bucket, {"props": "name", "start_after": "a", "flags": "1"})
    assert names(cached) == ["c"]


def test_job_queries_find_remote_bucket_jobs(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    put(s3, bucket, "j1", "j2")
    b = client.bucket(bucket, provider="aws")
    job_id = b.objects(obj_names=["j1", "j2"]).prefetch()
    assert client.job(job_id).wait(timeout=60).success
    snap = client.job(job_id).get_details().list_snapshots()[0]
    assert snap.kind == "prefetch-listrange"
    assert snap.bucket is not None and (snap.bucket.name, snap.bucket.provider) == (bucket, "aws")
    # A query that names the bucket (as `ais show job --bck s3://...` does) finds it.
    for bck in ({"name": bucket, "provider": "aws"}, {"name": bucket, "provider": "s3"}):
        body = json.dumps({"kind": "prefetch-listrange", "bck": bck}).encode()
        r = raw_request(server.endpoint, "GET", "/v1/cluster?what=status", body=body)
        assert r.status == 200, r.body
        assert json.loads(r.body)["uuid"] == job_id
        r = raw_request(server.endpoint, "GET", "/v1/cluster?what=qryxstats", body=body)
        assert r.status == 200, r.body
        assert [s["id"] for snaps in json.loads(r.body).values() for s in snaps] == [job_id]
    evict = b.objects(obj_template="j{1..2}").evict()
    assert client.job(evict).wait(timeout=60).success
    evicted = client.job(evict).get_details().list_snapshots()[0].bucket
    assert evicted is not None and evicted.provider == "aws"


def test_checksum_of_fetched_objects(client: Client, s3: Any, bucket: str) -> None:
    data = os.urandom(100_000)
    s3.put_object(Bucket=bucket, Key="ck", Body=data)
    s3.put_object(Bucket=bucket, Key="blob", Body=data * 3)
    b = client.bucket(bucket, provider="aws")
    b.object("ck").get_reader().read_all()  # a cold GET, streamed while written
    client.job(b.object("blob").blob_download(chunk_size=65536)).wait(timeout=60)
    expected = {"ck": xxh64_hex(data), "blob": xxh64_hex(data * 3)}
    for name, value in expected.items():
        attrs = b.object(name).head(props="checksum")
        assert (attrs.checksum_type, attrs.checksum_value) == ("xxhash2", value), name
    listed = {e.name: e for e in b.list_all_objects(props="name,checksum")}
    for name, value in expected.items():
        assert listed[name].checksum == value, name


def test_copy_object_within_a_remote_bucket(
    client: Client, s3: Any, bucket: str, proxy: FaultProxy
) -> None:
    put(s3, bucket, "src")
    b = client.bucket(bucket, provider="aws")
    b.object("src").copy(b.object("dst"))
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"src"
    assert b.object("dst").head().present
    # S3 refuses: nothing is cached under the new name
    proxy.inject(Fault(status=403, match=f"PUT /{bucket}/refused"))
    with pytest.raises(AISError):
        b.object("src").copy(b.object("refused"))
    assert "refused" not in in_s3(s3, bucket) and "refused" not in cached(client, bucket)


def test_copy_listrange_and_bucket_into_remote(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    put(s3, bucket, "m/1", "m/2")
    b = client.bucket(bucket, provider="aws")
    ids = b.objects(obj_names=["m/1", "m/2"]).copy(b, prepend="copied/")
    client.job(ids[0]).wait(timeout=60)
    assert in_s3(s3, bucket) == ["copied/m/1", "copied/m/2", "m/1", "m/2"]
    src = client.bucket(f"to-remote-{next(_counter)}").create()
    src.object("x").get_writer().put_content(b"x")
    try:
        assert client.job(src.copy(b, prepend="from-ais/")).wait(timeout=60).success
        assert s3.get_object(Bucket=bucket, Key="from-ais/x")["Body"].read() == b"x"
        assert "from-ais/x" in cached(client, bucket)
    finally:
        src.delete()


def test_evict_by_template_and_prefix_keeps_s3(client: Client, s3: Any, bucket: str) -> None:
    put(s3, bucket, "e/0", "e/1", "e/2", "f/0", "g")
    b = client.bucket(bucket, provider="aws")
    client.job(b.objects(obj_template="e/").prefetch()).wait(timeout=60)
    client.job(b.objects(obj_names=["f/0", "g"]).prefetch()).wait(timeout=60)
    assert cached(client, bucket) == ["e/0", "e/1", "e/2", "f/0", "g"]
    assert client.job(b.objects(obj_template="e/{0..1}").evict()).wait(timeout=60).success
    assert cached(client, bucket) == ["e/2", "f/0", "g"]
    assert client.job(b.objects(obj_template="f/").evict()).wait(timeout=60).success
    assert cached(client, bucket) == ["e/2", "g"]
    assert in_s3(s3, bucket) == ["e/0", "e/1", "e/2", "f/0", "g"]


TREE = ["a-b", "a.txt", "a/x", "a/y/z", "a/y/w", "a0", "b/c/d/e", "top"]


def test_directory_listings_agree_with_ais(client: Client, s3: Any, bucket: str) -> None:
    local = client.bucket(f"tree-{next(_counter)}").create()
    put(s3, bucket, *TREE)
    for name in TREE:
        local.object(name).get_writer().put_content(name.encode())
    remote = client.bucket(bucket, provider="aws")
    remote.object("a/x").get_reader().read_all()  # one cached entry among them

    def listed(bck: Any, **kw: Any) -> list[str]:
        return [f"[{e.name}]" if e.flags & 256 else e.name for e in bck.list_all_objects(**kw)]

    nr = [ListObjectFlag.NO_RECURSION]
    no_dirs = [*nr, ListObjectFlag.NO_DIRS]
    try:
        for prefix in ("", "a", "a/", "a/y/", "b/", "b/c/", "nothing/"):
            for flags in (nr, no_dirs, [ListObjectFlag.NO_DIRS]):
                for page_size in (0, 2):
                    want = listed(local, prefix=prefix, flags=flags, page_size=page_size)
                    got = listed(remote, prefix=prefix, flags=flags, page_size=page_size)
                    assert got == want, (prefix, flags, page_size)
        assert listed(remote, flags=nr) == ["a-b", "a.txt", "[a/]", "a0", "[b/]", "top"]
    finally:
        local.delete()


def test_set_custom_props_on_a_cached_object(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    put(s3, bucket, "md", "cold")
    obj = client.bucket(bucket, provider="aws").object("md")
    obj.get_reader().read_all()
    obj.get_writer().set_custom_props({"color": "red"})
    assert obj.head(props="custom").custom_metadata["color"] == "red"
    assert "ETag" in obj.head(props="custom").custom_metadata, "merged with what the fetch kept"
    # in-cluster metadata only, as AIS: S3's object is untouched
    assert s3.head_object(Bucket=bucket, Key="md")["Metadata"] == {}
    obj.get_writer().set_custom_props({"only": "this"}, replace_existing=True)
    assert obj.head(props="custom").custom_metadata == {"only": "this"}
    # not cached: nothing to set, as AIS (404), and nothing fetched
    with pytest.raises(ErrObjNotFound):
        client.bucket(bucket, provider="aws").object("cold").get_writer().set_custom_props(
            {"k": "v"}
        )
    assert cached(client, bucket) == ["md"]
