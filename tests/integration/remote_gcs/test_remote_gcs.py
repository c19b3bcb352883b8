"""Remote gs:// buckets: the cache tier on GCS (cold and warm GETs, HEAD, listing, write-through,
faults of the backend, evict, prefetch, blob download, copies), through the SDK with
provider="gcp". The emulator, fault proxy and aistore-server of the module are conftest.py's.

A read of a cold object is two GCS requests, as AIS's GCP backend makes them: the object's
metadata, then its media pinned to that generation; both go to the object's path."""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from _gcs import GcsJson
from _s3 import Fault, FaultProxy
from _util import ENTRY_IS_CACHED, bucket_action, raw_request, work_files

from aistore.sdk import Client
from aistore.sdk.errors import AISError, ErrObjNotFound, ErrRemoteBckNotFound
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

ENTRY_IS_DIR = 256


def opath(bucket: str, name: str) -> str:
    """The path of an object's JSON API requests (metadata and media), as the proxy counts it."""
    return f"/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}"


def head_v1(endpoint: str, bucket: str, name: str) -> tuple[dict[str, str], dict[str, str]]:
    """HEAD (v1: every property) of gs://bucket/name: (headers, custom metadata)."""
    r = raw_request(endpoint, "HEAD", f"/v1/objects/{bucket}/{name}?provider=gcp")
    assert r.status == 200, r.header("Hdr-Error")
    custom = {}
    for line in r.headers.get_all("Ais-Custom-Md") or []:  # one k=v per header line
        k, _, v = line.partition("=")
        custom[k] = v
    return dict(r.headers.items()), custom


def md5_hex(resource: dict[str, Any]) -> str:
    return base64.b64decode(resource["md5Hash"]).hex()


def test_cold_get_fetches_once_then_serves_locally(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(300_000)
    res = gcs.put(bucket, "dir/obj", data)
    obj = client.bucket(bucket, provider="gcp").object("dir/obj")
    assert obj.get_reader().read_all() == data
    assert proxy.count("GET", opath(bucket, "dir/obj")) == 2, "metadata, then media"
    for _ in range(3):
        assert obj.get_reader().read_all() == data
    assert proxy.count("GET", opath(bucket, "dir/obj")) == 2, "warm GETs must not reach GCS"
    headers, md = head_v1(server.endpoint, bucket, "dir/obj")
    assert headers["Ais-Present"] == "true"
    assert md["source"] == "gcp"
    assert md["version"] == res["generation"] and headers["Ais-Version"] == res["generation"]
    assert md["md5"] == md5_hex(res) and md["crc32c"] == res["crc32c"]
    assert md["ETag"] == res["etag"]


def test_head_of_uncached_object_asks_gcs(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    res = gcs.put(bucket, "h", b"12345")
    headers, md = head_v1(server.endpoint, bucket, "h")
    assert headers["Ais-Present"] == "false"
    assert headers["Content-Length"] == "5"
    assert md["version"] == res["generation"] and md["source"] == "gcp"
    assert client.bucket(bucket, provider="gcp").object("h").head().size == 5
    # HEAD does not cache it: presence=2 (present only) answers 404 without asking GCS.
    heads = proxy.count("GET", opath(bucket, "h"))
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/h?provider=gcp&presence=2&props=size"
    )
    assert r.status == 404
    assert proxy.count("GET", opath(bucket, "h")) == heads


def test_keys_are_encoded_as_gcs_requires(client: Client, gcs: GcsJson, bucket: str) -> None:
    names = ["a b/c+d", "ünï/çødé", "q?x=1&y#z", "100%/pct"]
    for n in names:
        gcs.put(bucket, n, n.encode())
    b = client.bucket(bucket, provider="gcp")
    for n in names:
        assert b.object(n).get_reader().read_all() == n.encode()
    b.object("w %/ü+").get_writer().put_content(b"up")
    assert gcs.get(bucket, "w %/ü+") == b"up"
    assert sorted(e.name for e in b.list_all_objects()) == sorted([*names, "w %/ü+"])


def test_range_get_cold_and_warm(client: Client, gcs: GcsJson, bucket: str) -> None:
    data = os.urandom(100_000)
    gcs.put(bucket, "r", data)
    obj = client.bucket(bucket, provider="gcp").object("r")
    assert obj.get_reader(byte_range="bytes=1000-1999").read_all() == data[1000:2000]
    assert obj.get_reader(byte_range="bytes=-10").read_all() == data[-10:]


def test_concurrent_cold_gets_fetch_once(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str
) -> None:
    data = os.urandom(2_000_000)
    gcs.put(bucket, "hot", data)
    # Keep the first fetch in flight (its metadata request waits).
    proxy.inject(Fault(delay=0.5, match=f"GET {opath(bucket, 'hot')}"))
    obj = client.bucket(bucket, provider="gcp").object("hot")
    results: list[bytes] = []
    lock = threading.Lock()

    def read() -> None:
        got = obj.get_reader().read_all()
        with lock:
            results.append(got)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [data] * 8
    assert proxy.count("GET", opath(bucket, "hot")) == 2, "one fetch: metadata and media once"


def test_validate_cold_get_checks_the_md5(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="gcp")
    b.head()
    data = os.urandom(50_000)
    gcs.put(bucket, "v", data)
    # The media reply damaged on the way (the metadata GET passes untouched): GCS's md5Hash
    # catches it, and nothing is cached.
    proxy.inject(
        Fault(match=f"GET {opath(bucket, 'v')}"), Fault(flip=1000, match=opath(bucket, "v"))
    )
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/v?provider=gcp")
    assert r.status == 500 and b"BAD DATA CHECKSUM" in r.body, r.body
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert work_files(Path(p) for p in server.mountpaths) == []
    assert b.object("v").get_reader().read_all() == data, "the next GET fetches it whole"
    _, md = head_v1(server.endpoint, bucket, "v")
    assert md["md5"] == md5_hex(gcs.meta(bucket, "v") or {})
    # Without validation the damage goes unseen (what validate_cold_get is for).
    bucket_action(
        server.endpoint,
        "PATCH",
        bucket,
        "set-bprops",
        {"checksum": {"validate_cold_get": False}},
        provider="gcp",
    )
    gcs.put(bucket, "w", data)
    proxy.inject(
        Fault(match=f"GET {opath(bucket, 'w')}"), Fault(flip=1000, match=opath(bucket, "w"))
    )
    assert b.object("w").get_reader().read_all() != data


def test_latest_sees_out_of_band_changes(client: Client, gcs: GcsJson, bucket: str) -> None:
    gcs.put(bucket, "v", b"one")
    obj = client.bucket(bucket, provider="gcp").object("v")
    assert obj.get_reader().read_all() == b"one"
    time.sleep(0.01)  # (the emulator's generation is a clock reading)
    gcs.put(bucket, "v", b"two!")
    assert obj.get_reader().read_all() == b"one", "a warm GET is local"
    assert obj.get_reader(latest=True).read_all() == b"two!"
    assert obj.get_reader().read_all() == b"two!", "the new generation is cached"
    gcs.delete(bucket, "v")
    assert obj.get_reader().read_all() == b"two!", "deleted remotely, still served warm"
    with pytest.raises(ErrObjNotFound):
        obj.get_reader(latest=True).read_all()


def test_listing_flags(client: Client, gcs: GcsJson, bucket: str) -> None:
    for key in ("a/1", "a/2", "b", "c/d/e"):
        gcs.put(bucket, key, key.encode())
    b = client.bucket(bucket, provider="gcp")
    b.object("a/1").get_reader().read_all()

    default = {e.name: e for e in b.list_all_objects()}
    assert sorted(default) == ["a/1", "a/2", "b", "c/d/e"]
    assert all(e.flags & ENTRY_IS_CACHED == 0 for e in default.values())
    assert default["c/d/e"].size == 5

    merged = {e.name: e for e in b.list_all_objects(props="name,size,atime")}
    assert merged["a/1"].is_cached() and not merged["a/2"].is_cached()
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == ["a/1"]
    not_cached = [
        e.name for e in b.list_all_objects(props="name,size", flags=[ListObjectFlag.NOT_CACHED])
    ]
    assert sorted(not_cached) == ["a/2", "b", "c/d/e"]
    top = {e.name: e.flags for e in b.list_all_objects(flags=[ListObjectFlag.NO_RECURSION])}
    assert top == {"b": 0, "a/": ENTRY_IS_DIR, "c/": ENTRY_IS_DIR}
    assert sorted(e.name for e in b.list_all_objects(prefix="a/")) == ["a/1", "a/2"]


def test_listing_pages_and_start_after(
    client: Client, gcs: GcsJson, bucket: str, server: LocalServer
) -> None:
    for i in range(5):
        gcs.put(bucket, f"p{i}", b"x")
    b = client.bucket(bucket, provider="gcp")
    paged = list(b.list_objects_iter(page_size=2))
    assert sorted(e.name for e in paged) == [f"p{i}" for i in range(5)]
    # On the wire (the SDK refuses start_after on a remote bucket before sending it). GCS's
    # startOffset is inclusive and the emulator ignores it: the server drops what is not after.
    value = {"props": "name", "start_after": "p2"}
    page = json.loads(bucket_action(server.endpoint, "GET", bucket, "list", value, "gcp"))
    assert [e["name"] for e in page["entries"]] == ["p3", "p4"]


@pytest.mark.skip(
    reason="gcp-storage-emulator ignores maxResults and pageToken (it sends every object in one "
    "page, no nextPageToken), so paging through GCS's nextPageToken cannot be shown against it"
)
def test_listing_follows_next_page_token() -> None:  # pragma: no cover
    raise AssertionError("needs an emulator that pages")


@pytest.mark.skip(
    reason="gcp-storage-emulator fails an empty media upload (TypeError in _media_upload: no "
    "request data), so neither seeding nor writing through an empty gs:// object can be shown"
)
def test_empty_object_round_trip() -> None:  # pragma: no cover
    raise AssertionError("needs an emulator that takes empty uploads")


def test_put_and_delete_write_through(
    client: Client, gcs: GcsJson, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="gcp")
    data = os.urandom(70_000)
    b.object("w/new").get_writer().put_content(data)
    assert gcs.get(bucket, "w/new") == data
    headers, md = head_v1(server.endpoint, bucket, "w/new")
    assert headers["Ais-Present"] == "true"
    res = gcs.meta(bucket, "w/new") or {}
    assert md["ETag"] == res["etag"] and md["version"] == res["generation"]
    assert md["md5"] == md5_hex(res)
    b.object("w/new").delete()
    assert gcs.names(bucket) == []
    with pytest.raises(ErrObjNotFound):
        b.object("w/new").get_reader().read_all()


def test_put_fails_when_gcs_refuses_and_nothing_is_cached(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str
) -> None:
    b = client.bucket(bucket, provider="gcp")
    b.head()
    proxy.inject(Fault(status=403, match=f"POST /upload/storage/v1/b/{bucket}/o"))
    with pytest.raises(AISError) as e:
        b.object("denied").get_writer().put_content(b"secret")
    assert e.value.status_code == 403
    assert "gcp-error[" in str(e.value)
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert gcs.names(bucket) == []


def test_missing_remote_object_and_bucket(client: Client, bucket: str) -> None:
    with pytest.raises(ErrObjNotFound):
        client.bucket(bucket, provider="gcp").object("nothing").get_reader().read_all()
    with pytest.raises(ErrRemoteBckNotFound) as e:
        client.bucket(f"{bucket}-missing", provider="gcp").list_all_objects()
    assert e.value.status_code == 404
    assert f"gs://{bucket}-missing" in str(e.value)


def test_gcs_errors_are_retried_then_reported(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    gcs.put(bucket, "flaky", b"ok")
    obj = client.bucket(bucket, provider="gcp").object("flaky")
    proxy.inject(Fault(status=503, match="/flaky"), Fault(status=500, match="/flaky"))
    assert obj.get_reader().read_all() == b"ok", "two 5xx replies are retried"

    gcs.put(bucket, "broken", b"never")
    proxy.inject(*[Fault(status=500, match="/broken") for _ in range(4)])
    started = time.monotonic()
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/broken?provider=gcp")
    assert r.status == 500 and b"gcp-error[" in r.body
    assert time.monotonic() - started < 10, "retries are bounded"


def test_cut_metadata_reply_is_retried(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(1_000_000)
    gcs.put(bucket, "cut", data)
    proxy.inject(Fault(cut_after=10, match=f"GET {opath(bucket, 'cut')}"))  # the metadata reply
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/cut?provider=gcp")
    assert r.status == 200 and r.body == data
    assert proxy.count("GET", opath(bucket, "cut")) == 3, "metadata (cut), metadata, media"
    assert work_files(Path(p) for p in server.mountpaths) == []


def test_cut_media_body_commits_nothing(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(1_000_000)
    gcs.put(bucket, "cut2", data)
    b = client.bucket(bucket, provider="gcp")
    b.object("cut2").head()  # (a metadata request of its own)
    proxy.inject(Fault(match=f"GET {opath(bucket, 'cut2')}"))  # the next metadata GET: untouched
    proxy.inject(Fault(cut_after=100_000, match=f"GET {opath(bucket, 'cut2')}"))  # the media
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/cut2?provider=gcp")
        assert r.status == 500, r.body
    except http.client.IncompleteRead as e:
        assert len(e.partial) < len(data)
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert work_files(Path(p) for p in server.mountpaths) == []


def test_gcs_down_is_a_clear_error(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    gcs.put(bucket, "x", b"x")
    client.bucket(bucket, provider="gcp").head()
    proxy.down = True
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/x?provider=gcp")
        assert r.status == 500 and b"gcp-error[" in r.body
    finally:
        proxy.down = False
    assert client.bucket(bucket, provider="gcp").object("x").get_reader().read_all() == b"x"


def test_evict_bucket_and_objects(client: Client, gcs: GcsJson, bucket: str) -> None:
    b = client.bucket(bucket, provider="gcp")
    for key in ("k1", "k2", "k3"):
        gcs.put(bucket, key, key.encode())
        b.object(key).get_reader().read_all()
    client.job(b.objects(obj_names=["k1", "k2"]).evict()).wait(timeout=30)
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == ["k3"]
    assert sorted(e.name for e in b.list_all_objects()) == ["k1", "k2", "k3"], "GCS keeps them"
    b.evict(keep_md=True)
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert bucket in {m.name for m in client.cluster().list_buckets(provider="")}
    b.evict(keep_md=False)
    assert bucket not in {m.name for m in client.cluster().list_buckets(provider="")}
    assert gcs.get(bucket, "k1") == b"k1", "the cloud data stays"


def test_bucket_rules(client: Client, bucket: str, server: LocalServer) -> None:
    client.bucket(bucket, provider="gcp").head()
    r = raw_request(
        server.endpoint,
        "DELETE",
        f"/v1/buckets/{bucket}?provider=gcp",
        body=json.dumps({"action": "destroy-bck"}).encode(),
    )
    assert r.status == 405 and b"cannot destroy cloud bucket gs://" in r.body
    r = raw_request(
        server.endpoint,
        "POST",
        "/v1/buckets/not-in-gcs?provider=gcp",
        body=json.dumps({"action": "create-bck"}).encode(),
    )
    assert r.status == 501 and b'gcp bucket \\"gs://not-in-gcs\\" does not exist' in r.body
    assert bucket in {m.name for m in client.cluster().list_buckets(provider="gcp")}
    assert bucket in {m.name for m in client.cluster().list_buckets(provider="gs")}
    r = raw_request(server.endpoint, "GET", "/v1/cluster?what=backends")
    assert r.status == 200 and "gcp" in json.loads(r.body)
    # A provider we do not serve keeps its clear refusal; azure is served but not configured here.
    r = raw_request(server.endpoint, "GET", f"/v1/buckets/{bucket}?provider=oci")
    assert r.status == 501 and b"not served" in r.body, r.body
    r = raw_request(server.endpoint, "GET", f"/v1/buckets/{bucket}?provider=azure")
    assert r.status == 404 and b"Azure backend is missing" in r.body, r.body


def test_prefetch_fetches_selected_objects(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(12):
        gcs.put(bucket, f"p/{i:02d}", os.urandom(1000 + i))
    gcs.put(bucket, "q/other", b"q")
    b = client.bucket(bucket, provider="gcp")

    def cached() -> list[str]:
        return sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))

    client.job(b.objects(obj_names=["p/00", "p/01"]).prefetch()).wait(timeout=60)
    assert cached() == ["p/00", "p/01"]
    client.job(b.objects(obj_template="p/{00..05}").prefetch(num_workers=2)).wait(timeout=60)
    assert cached() == [f"p/{i:02d}" for i in range(6)]
    assert proxy.count("GET", opath(bucket, "p/00")) == 2, "cached objects are not fetched again"
    client.job(b.objects(obj_template="p/").prefetch()).wait(timeout=60)  # a prefix: listed
    assert cached() == [f"p/{i:02d}" for i in range(12)]
    assert b.object("p/07").get_reader().read_all() == gcs.get(bucket, "p/07")
    assert proxy.count("GET", opath(bucket, "p/07")) == 2, "the GET after prefetch is warm"


def test_prefetch_errors(client: Client, gcs: GcsJson, bucket: str) -> None:
    gcs.put(bucket, "there", b"1")
    b = client.bucket(bucket, provider="gcp")
    result = client.job(b.objects(obj_names=["missing", "there"]).prefetch(num_workers=-1)).wait(
        timeout=60
    )
    assert not result.success
    assert "object doesn't exist" in str(result.error)
    coer = b.objects(obj_names=["missing", "there"]).prefetch(continue_on_error=True)
    result = client.job(coer).wait(timeout=60)
    assert result.end_time is not None and "missing" in str(result.error)
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == ["there"]


def test_blob_download_job_and_get(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    from aistore.sdk.blob_download_config import BlobDownloadConfig

    data = os.urandom(5 * 1024 * 1024 + 5)
    gcs.put(bucket, "blob1", data)
    gcs.put(bucket, "blob2", data[::-1])
    b = client.bucket(bucket, provider="gcp")

    job = b.object("blob1").blob_download(chunk_size=1024 * 1024, num_workers=3)
    assert client.job(job).wait(timeout=60).success
    # One metadata request for the size and generation, then a range of that generation per chunk.
    assert proxy.count("GET", opath(bucket, "blob1")) == 1 + 6
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/blob1?provider=gcp&props=chunked"
    )
    assert r.header("Ais-Chunks-Count") == "6"
    assert b.object("blob1").get_reader().read_all() == data
    assert b.object("blob1").blob_download() == "", "cached: nothing to do"

    cfg = BlobDownloadConfig(chunk_size="2MiB", num_workers="2")
    assert b.object("blob2").get_reader(blob_download_config=cfg).read_all() == data[::-1]

    gcs.put(bucket, "blob3", data)
    proxy.inject(Fault(cut_after=1000, status=0, match=f"GET {opath(bucket, 'blob3')}"))
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob3?provider=gcp",
        headers={"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "1MiB", "Ais-Blob-Workers": "-1"},
    )
    # The cut hit the size's metadata request, which is retried: the download completes whole.
    assert r.status == 200 and r.body == data
    assert "blob3" in [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]

    # A range read of a generation GCS no longer has (404: the object was rewritten meanwhile;
    # the emulator ignores generations, so the proxy says it): the download fails, keeps nothing.
    gcs.put(bucket, "blob4", data)
    proxy.inject(
        Fault(match=f"GET {opath(bucket, 'blob4')}"),
        Fault(status=404, match=f"GET {opath(bucket, 'blob4')}"),
    )
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob4?provider=gcp",
        headers={"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "1MiB", "Ais-Blob-Workers": "-1"},
    )
    assert r.status == 409 and b"changed remotely" in r.body, r.body
    assert "blob4" not in [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    assert work_files(Path(p) for p in server.mountpaths) == []


def test_copy_reads_a_gs_source_and_writes_through(
    client: Client, gcs: GcsJson, bucket: str, server: LocalServer
) -> None:
    from aistore.pytorch import AISMapDataset

    for i in range(4):
        gcs.put(bucket, f"d/{i}", f"sample {i}".encode())
    b = client.bucket(bucket, provider="gcp")
    ds = AISMapDataset(b)  # gs:// buckets as they are: the first read of each sample is cold
    assert sorted(ds[i] for i in range(len(ds))) == [
        (f"d/{i}", f"sample {i}".encode()) for i in range(4)
    ]
    dst = client.bucket(f"{bucket}-copy").create(exist_ok=True)
    assert client.job(b.copy(dst)).wait(timeout=60).success
    assert sorted(e.name for e in dst.list_all_objects()) == [f"d/{i}" for i in range(4)]
    assert dst.object("d/2").get_reader().read_all() == b"sample 2"

    # ais:// -> gs://: a multi-object copy into the gs:// bucket writes each object through.
    src = client.bucket(f"{bucket}-src").create(exist_ok=True)
    for i in range(3):
        src.object(f"up/{i}").get_writer().put_content(f"up {i}".encode())
    for job in src.objects(obj_names=[f"up/{i}" for i in range(3)]).copy(b):
        assert client.job(job).wait(timeout=60).success
    assert [gcs.get(bucket, f"up/{i}") for i in range(3)] == [f"up {i}".encode() for i in range(3)]
    # Single-object copy to gs://.
    src.object("up/0").copy(b.object("single"))
    assert gcs.get(bucket, "single") == b"up 0"


def test_getbatch_fetches_cold_items(client: Client, gcs: GcsJson, bucket: str) -> None:
    data = {f"gb/{i}": os.urandom(1000 * (i + 1)) for i in range(4)}
    for k, v in data.items():
        gcs.put(bucket, k, v)
    b = client.bucket(bucket, provider="gcp")
    got = {info.obj_name: content for info, content in client.batch(list(data), bucket=b).get()}
    assert got == data
    cached = sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))
    assert cached == sorted(data)


def test_transform_reads_a_gs_source(client: Client, gcs: GcsJson, bucket: str) -> None:
    import hashlib

    from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer

    class Md5(HTTPMultiThreadedServer):  # type: ignore[misc]
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return hashlib.md5(data).hexdigest().encode()

    etl = client.etl(f"md5-{bucket}"[:32].rstrip("-"))
    etl.init_class(comm_type="hpush")(Md5)
    try:
        data = {f"t/{i}": os.urandom(2000 + i) for i in range(3)}
        for k, v in data.items():
            gcs.put(bucket, k, v)
        b = client.bucket(bucket, provider="gcp")
        dst = client.bucket(f"{bucket}-etl").create(exist_ok=True)
        # A multi-object transform fetches its cold gs:// sources on the way.
        job = b.objects(obj_names=list(data)).transform(to_bck=dst, etl_name=etl.name)
        assert client.job(job).wait(timeout=120).success
        for k, v in data.items():
            assert dst.object(k).get_reader().read_all() == hashlib.md5(v).hexdigest().encode()
    finally:
        etl.delete()


def test_delete_of_an_object_gcs_no_longer_has(client: Client, gcs: GcsJson, bucket: str) -> None:
    gcs.put(bucket, "stale", b"s")
    b = client.bucket(bucket, provider="gcp")
    assert b.object("stale").get_reader().read_all() == b"s"
    gcs.delete(bucket, "stale")  # out of band: GCS answers 404 to deleting it now
    b.object("stale").delete()  # the cached copy still goes
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    with pytest.raises(ErrObjNotFound):
        b.object("stale").delete()  # neither has it: GCS's 404
    gcs.put(bucket, "j1", b"1")
    b.object("j1").get_reader().read_all()
    gcs.delete(bucket, "j1")
    assert client.job(b.objects(obj_names=["j1"]).delete()).wait(timeout=30).success
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []


def test_inventory_of_a_gs_bucket(
    client: Client, gcs: GcsJson, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(12):
        gcs.put(bucket, f"inv/{i:03d}", b"z" * (i + 1))
    b = client.bucket(bucket, provider="gcp")
    b.object("inv/007").get_reader().read_all()
    assert client.job(b.create_inventory(name="snap")).wait(timeout=60).success
    lists_before = proxy.count("GET", f"/storage/v1/b/{bucket}/o")
    entries = list(b.list_objects_iter(flags=[ListObjectFlag.NBI], page_size=5))
    assert proxy.count("GET", f"/storage/v1/b/{bucket}/o") == lists_before, "never asks GCS"
    assert [e.name for e in entries] == [f"inv/{i:03d}" for i in range(12)]
    assert [e.name for e in entries if e.is_cached()] == ["inv/007"]
    assert entries[5].size == 6
