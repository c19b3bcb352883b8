"""Remote az:// buckets: the cache tier on Azure Blob (cold and warm GETs, HEAD, listing,
write-through with Put Blob and Put Block / Put Block List, faults of the backend, evict,
prefetch, blob download, copies, inventory), through the SDK with provider="azure". Azurite, the
fault proxy and the aistore-server of the module are conftest.py's.

The SDK classifies a 404 by the `prov://bck/obj` its message names, and knows no `az` (neither
does the official one), so a missing az:// object or bucket is a plain AISError with status 404
(`not_found`).

A read of a cold blob is two Azure requests, as AIS's azure backend makes them: Get Blob
Properties (HEAD), then Get Blob (GET, pinned to that ETag); both go to the blob's path."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from _azure import ACCOUNT, AzureBlobs
from _s3 import Fault, FaultProxy
from _util import ENTRY_IS_CACHED, bucket_action, raw_request, work_files

from aistore.sdk import Client
from aistore.sdk.errors import AISError
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

ENTRY_IS_DIR = 256


def bpath(bucket: str, name: str) -> str:
    """The path of a blob's requests, as the proxy counts them."""
    return f"/{ACCOUNT}/{bucket}/{urllib.parse.quote(name, safe='/')}"


def head_v1(endpoint: str, bucket: str, name: str) -> tuple[dict[str, str], dict[str, str]]:
    """HEAD (v1: every property) of az://bucket/name: (headers, custom metadata)."""
    r = raw_request(endpoint, "HEAD", f"/v1/objects/{bucket}/{name}?provider=azure")
    assert r.status == 200, r.header("Hdr-Error")
    custom = {}
    for line in r.headers.get_all("Ais-Custom-Md") or []:  # one k=v per header line
        k, _, v = line.partition("=")
        custom[k] = v
    return dict(r.headers.items()), custom


@contextlib.contextmanager
def not_found(words: str = "") -> Iterator[None]:
    """The block fails with AIS's 404 (whose message holds `words`)."""
    with pytest.raises(AISError) as e:
        yield
    assert e.value.status_code == 404, e.value
    assert words in str(e.value)


def cached(client: Client, bucket: str) -> list[str]:
    b = client.bucket(bucket, provider="azure")
    return sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))


def test_cold_get_fetches_once_then_serves_locally(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(300_000)
    props = azure.put(bucket, "dir/obj", data)
    obj = client.bucket(bucket, provider="azure").object("dir/obj")
    assert obj.get_reader().read_all() == data
    assert proxy.count("HEAD", bpath(bucket, "dir/obj")) == 1, "properties"
    assert proxy.count("GET", bpath(bucket, "dir/obj")) == 1, "then the bytes"
    for _ in range(3):
        assert obj.get_reader().read_all() == data
    assert proxy.count("GET", bpath(bucket, "dir/obj")) == 1, "warm GETs must not reach Azure"
    headers, md = head_v1(server.endpoint, bucket, "dir/obj")
    assert headers["Ais-Present"] == "true"
    assert md["source"] == "azure"
    assert md["version"] == props["etag"] and headers["Ais-Version"] == props["etag"]
    assert md["ETag"] == props["etag"]
    assert props["md5"] and md["md5"] == props["md5"]


def test_head_of_uncached_object_asks_azure(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    props = azure.put(bucket, "h", b"12345")
    headers, md = head_v1(server.endpoint, bucket, "h")
    assert headers["Ais-Present"] == "false"
    assert headers["Content-Length"] == "5"
    assert md["version"] == props["etag"] and md["source"] == "azure"
    assert client.bucket(bucket, provider="azure").object("h").head().size == 5
    heads = proxy.count("HEAD", bpath(bucket, "h"))
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/h?provider=azure&presence=2&props=size"
    )
    assert r.status == 404, "HEAD does not cache it"
    assert proxy.count("HEAD", bpath(bucket, "h")) == heads


def test_names_are_encoded_and_signed_as_azure_requires(
    client: Client, azure: AzureBlobs, bucket: str
) -> None:
    names = ["a b/c+d", "ünï/çødé", "q?x=1&y#z", "100%/pct", "semi;colon=eq"]
    for n in names:
        azure.put(bucket, n, n.encode())
    b = client.bucket(bucket, provider="azure")
    for n in names:
        assert b.object(n).get_reader().read_all() == n.encode()
    b.object("w %/ü+").get_writer().put_content(b"up")
    assert azure.get(bucket, "w %/ü+") == b"up"
    assert sorted(e.name for e in b.list_all_objects()) == sorted([*names, "w %/ü+"])
    assert sorted(e.name for e in b.list_all_objects(prefix="ünï/")) == ["ünï/çødé"]


def test_range_get_cold_and_warm(client: Client, azure: AzureBlobs, bucket: str) -> None:
    data = os.urandom(100_000)
    azure.put(bucket, "r", data)
    obj = client.bucket(bucket, provider="azure").object("r")
    assert obj.get_reader(byte_range="bytes=1000-1999").read_all() == data[1000:2000]
    assert obj.get_reader(byte_range="bytes=-10").read_all() == data[-10:]


def test_concurrent_cold_gets_fetch_once(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str
) -> None:
    data = os.urandom(2_000_000)
    azure.put(bucket, "hot", data)
    proxy.inject(Fault(delay=0.5, match=f"HEAD {bpath(bucket, 'hot')}"))  # keeps it in flight
    obj = client.bucket(bucket, provider="azure").object("hot")
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
    assert proxy.count("GET", bpath(bucket, "hot")) == 1, "one fetch"


def test_validate_cold_get_checks_the_md5(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="azure")
    b.head()
    data = os.urandom(50_000)
    azure.put(bucket, "v", data)
    # The bytes damaged on the way: the blob's Content-MD5 catches it, and nothing is cached.
    proxy.inject(Fault(flip=1000, match=f"GET {bpath(bucket, 'v')}"))
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/v?provider=azure")
    assert r.status == 500 and b"BAD DATA CHECKSUM" in r.body, r.body
    assert cached(client, bucket) == []
    assert work_files(Path(p) for p in server.mountpaths) == []
    assert b.object("v").get_reader().read_all() == data, "the next GET fetches it whole"


def test_latest_sees_out_of_band_changes(client: Client, azure: AzureBlobs, bucket: str) -> None:
    azure.put(bucket, "v", b"one")
    obj = client.bucket(bucket, provider="azure").object("v")
    assert obj.get_reader().read_all() == b"one"
    azure.put(bucket, "v", b"two!")
    assert obj.get_reader().read_all() == b"one", "a warm GET is local"
    assert obj.get_reader(latest=True).read_all() == b"two!"
    assert obj.get_reader().read_all() == b"two!", "the new ETag is cached"
    azure.delete(bucket, "v")
    assert obj.get_reader().read_all() == b"two!", "deleted remotely, still served warm"
    with not_found(f"az://{bucket}/v"):
        obj.get_reader(latest=True).read_all()


def test_listing_flags(client: Client, azure: AzureBlobs, bucket: str) -> None:
    for key in ("a/1", "a/2", "b", "c/d/e"):
        azure.put(bucket, key, key.encode())
    b = client.bucket(bucket, provider="azure")
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
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    for i in range(5):
        azure.put(bucket, f"p{i}", b"x")
    b = client.bucket(bucket, provider="azure")
    paged = list(b.list_objects_iter(page_size=2))
    assert [e.name for e in paged] == [f"p{i}" for i in range(5)]
    assert proxy.count("GET", f"/{ACCOUNT}/{bucket}") == 3, "Azure's NextMarker followed"
    # On the wire (the SDK refuses start_after on a remote bucket before sending it). List Blobs
    # has no start-after: the server drops what is not after it.
    value = {"props": "name", "start_after": "p2"}
    page = json.loads(bucket_action(server.endpoint, "GET", bucket, "list", value, "azure"))
    assert [e["name"] for e in page["entries"]] == ["p3", "p4"]


def test_empty_object_round_trip(client: Client, azure: AzureBlobs, bucket: str) -> None:
    azure.put(bucket, "empty-in", b"")
    b = client.bucket(bucket, provider="azure")
    assert b.object("empty-in").get_reader().read_all() == b""
    assert cached(client, bucket) == ["empty-in"]
    b.object("empty-out").get_writer().put_content(b"")
    assert azure.get(bucket, "empty-out") == b""


def test_put_and_delete_write_through(
    client: Client, azure: AzureBlobs, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="azure")
    data = os.urandom(70_000)
    b.object("w/new").get_writer().put_content(data)
    assert azure.get(bucket, "w/new") == data
    assert azure.block_count(bucket, "w/new") == 0, "one Put Blob"
    headers, md = head_v1(server.endpoint, bucket, "w/new")
    assert headers["Ais-Present"] == "true"
    props = azure.props(bucket, "w/new") or {}
    assert md["ETag"] == props["etag"] and md["version"] == props["etag"]
    assert md["source"] == "azure" and "LastModified" in md
    b.object("w/new").delete()
    assert azure.names(bucket) == []
    with not_found(f"azure-error[NotFound: az://{bucket}/w/new]"):
        b.object("w/new").get_reader().read_all()


def test_large_put_is_put_block_and_block_list(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="azure")
    b.head()
    bucket_action(
        server.endpoint,
        "PATCH",
        bucket,
        "set-bprops",
        {"extra": {"aws": {"multipart_size": "5MiB"}}},
        provider="azure",
    )
    data = os.urandom(12 * 2**20 + 12345)
    b.object("big").get_writer().put_content(data)
    assert azure.block_count(bucket, "big") == 3, "three 5 MiB blocks"
    assert azure.get(bucket, "big") == data
    _, md = head_v1(server.endpoint, bucket, "big")
    assert md["ETag"] == (azure.props(bucket, "big") or {})["etag"]
    assert b.object("big").get_reader().read_all() == data  # the cached copy
    assert proxy.count("GET", bpath(bucket, "big")) == 0

    # A block Azure refuses fails the PUT: no blob in Azure, nothing cached.
    proxy.inject(Fault(status=403, match=f"PUT {bpath(bucket, 'refused')}"))
    with pytest.raises(AISError) as e:
        b.object("refused").get_writer().put_content(data)
    assert e.value.status_code == 403
    assert "azure-error[" in str(e.value)
    assert azure.props(bucket, "refused") is None
    assert "refused" not in cached(client, bucket)

    # Native multipart upload through the SDK: parts kept locally, the blob written at completion.
    parts = [os.urandom(100_000), os.urandom(50_000)]
    mpu = b.object("mpu").multipart_upload().create()
    for n, p in enumerate(parts, 1):
        mpu.add_part(n).put_content(p)
    assert azure.props(bucket, "mpu") is None
    mpu.complete()
    assert azure.get(bucket, "mpu") == b"".join(parts)


def test_put_fails_when_azure_refuses_and_nothing_is_cached(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str
) -> None:
    b = client.bucket(bucket, provider="azure")
    b.head()
    proxy.inject(Fault(status=403, match=f"PUT {bpath(bucket, 'denied')}"))
    with pytest.raises(AISError) as e:
        b.object("denied").get_writer().put_content(b"secret")
    assert e.value.status_code == 403
    assert "azure-error[Injected403" in str(e.value)
    assert cached(client, bucket) == []
    assert azure.names(bucket) == []


def test_missing_remote_object_and_bucket(client: Client, bucket: str, server: LocalServer) -> None:
    with not_found(f"azure-error[NotFound: az://{bucket}/nothing]"):
        client.bucket(bucket, provider="azure").object("nothing").get_reader().read_all()
    with not_found(f'azure bucket \\"az://{bucket}-missing\\" does not exist'):
        client.bucket(f"{bucket}-missing", provider="azure").list_all_objects()
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}-gone/x?provider=az")
    assert r.status == 404 and b"does not exist" in r.body


def test_azure_errors_are_retried_then_reported(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    azure.put(bucket, "flaky", b"ok")
    obj = client.bucket(bucket, provider="azure").object("flaky")
    proxy.inject(Fault(status=503, match="/flaky"), Fault(status=500, match="/flaky"))
    assert obj.get_reader().read_all() == b"ok", "two 5xx replies are retried"

    azure.put(bucket, "broken", b"never")
    proxy.inject(*[Fault(status=500, match="/broken") for _ in range(4)])
    started = time.monotonic()
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/broken?provider=azure")
    assert r.status == 500 and b"azure-error[" in r.body
    assert time.monotonic() - started < 10, "retries are bounded"
    assert "broken" not in cached(client, bucket)


def test_cut_body_is_retried_or_commits_nothing(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(1_000_000)
    azure.put(bucket, "cut", data)
    b = client.bucket(bucket, provider="azure")
    b.object("cut").head()  # (a properties request of its own)
    # Cut before a byte reached the reply: retried, the GET whole.
    proxy.inject(Fault(cut_after=0, match=f"GET {bpath(bucket, 'cut')}"))
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/cut?provider=azure")
    assert r.status == 200 and r.body == data
    assert proxy.count("GET", bpath(bucket, "cut")) == 2

    azure.put(bucket, "cut2", data)
    proxy.inject(Fault(cut_after=100_000, match=f"GET {bpath(bucket, 'cut2')}"))
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/cut2?provider=azure")
        assert r.status == 500, r.body
    except http.client.IncompleteRead as e:
        assert len(e.partial) < len(data)
    assert cached(client, bucket) == ["cut"]
    assert work_files(Path(p) for p in server.mountpaths) == []


def test_azure_down_is_a_clear_error(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    azure.put(bucket, "x", b"x")
    client.bucket(bucket, provider="azure").head()
    proxy.down = True
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/x?provider=azure")
        assert r.status == 500 and b"azure-error[" in r.body
    finally:
        proxy.down = False
    assert client.bucket(bucket, provider="azure").object("x").get_reader().read_all() == b"x"


def test_evict_bucket_and_objects(client: Client, azure: AzureBlobs, bucket: str) -> None:
    b = client.bucket(bucket, provider="azure")
    for key in ("k1", "k2", "k3"):
        azure.put(bucket, key, key.encode())
        b.object(key).get_reader().read_all()
    client.job(b.objects(obj_names=["k1", "k2"]).evict()).wait(timeout=30)
    assert cached(client, bucket) == ["k3"]
    assert sorted(e.name for e in b.list_all_objects()) == ["k1", "k2", "k3"], "Azure keeps them"
    b.evict(keep_md=True)
    assert cached(client, bucket) == []
    assert bucket in {m.name for m in client.cluster().list_buckets(provider="")}
    b.evict(keep_md=False)
    assert bucket not in {m.name for m in client.cluster().list_buckets(provider="")}
    assert azure.get(bucket, "k1") == b"k1", "the cloud data stays"


def test_bucket_rules(client: Client, bucket: str, server: LocalServer) -> None:
    client.bucket(bucket, provider="azure").head()
    r = raw_request(server.endpoint, "HEAD", f"/v1/buckets/{bucket}?provider=azure")
    props = json.loads(r.header("Ais-Bucket-Props") or "{}")
    assert props["versioning"]["enabled"] is True, "versioned by ETag, as AIS has it"
    r = raw_request(
        server.endpoint,
        "DELETE",
        f"/v1/buckets/{bucket}?provider=azure",
        body=json.dumps({"action": "destroy-bck"}).encode(),
    )
    assert r.status == 405 and b"cannot destroy cloud bucket az://" in r.body
    r = raw_request(
        server.endpoint,
        "POST",
        "/v1/buckets/not-in-azure?provider=azure",
        body=json.dumps({"action": "create-bck"}).encode(),
    )
    assert r.status == 501 and b'azure bucket \\"az://not-in-azure\\" does not exist' in r.body
    assert bucket in {m.name for m in client.cluster().list_buckets(provider="azure")}
    r = raw_request(server.endpoint, "GET", f"/v1/buckets/{bucket}?provider=az")
    assert r.status == 200, r.body
    r = raw_request(server.endpoint, "GET", "/v1/cluster?what=backends")
    assert r.status == 200 and "azure" in json.loads(r.body)
    r = raw_request(server.endpoint, "GET", f"/v1/buckets/{bucket}?provider=oci")
    assert r.status == 501 and b"not served" in r.body, r.body


def test_prefetch_fetches_selected_objects(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(12):
        azure.put(bucket, f"p/{i:02d}", os.urandom(1000 + i))
    azure.put(bucket, "q/other", b"q")
    b = client.bucket(bucket, provider="azure")
    client.job(b.objects(obj_names=["p/00", "p/01"]).prefetch()).wait(timeout=60)
    assert cached(client, bucket) == ["p/00", "p/01"]
    client.job(b.objects(obj_template="p/{00..05}").prefetch(num_workers=2)).wait(timeout=60)
    assert cached(client, bucket) == [f"p/{i:02d}" for i in range(6)]
    assert proxy.count("GET", bpath(bucket, "p/00")) == 1, "cached objects are not fetched again"
    client.job(b.objects(obj_template="p/").prefetch()).wait(timeout=60)  # a prefix: listed
    assert cached(client, bucket) == [f"p/{i:02d}" for i in range(12)]
    assert b.object("p/07").get_reader().read_all() == azure.get(bucket, "p/07")
    assert proxy.count("GET", bpath(bucket, "p/07")) == 1, "the GET after prefetch is warm"

    result = client.job(b.objects(obj_names=["missing", "q/other"]).prefetch()).wait(timeout=60)
    assert not result.success and "missing" in str(result.error)


def test_blob_download_job_and_get(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(5 * 1024 * 1024 + 5)
    azure.put(bucket, "blob1", data)
    b = client.bucket(bucket, provider="azure")
    job = b.object("blob1").blob_download(chunk_size=1024 * 1024, num_workers=3)
    assert client.job(job).wait(timeout=60).success
    # One properties request for the size and ETag, then a range of that ETag per chunk.
    assert proxy.count("HEAD", bpath(bucket, "blob1")) == 1
    assert proxy.count("GET", bpath(bucket, "blob1")) == 6
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/blob1?provider=azure&props=chunked"
    )
    assert r.header("Ais-Chunks-Count") == "6"
    assert b.object("blob1").get_reader().read_all() == data

    # A range read of an ETag Azure no longer has (412: rewritten meanwhile; said by the
    # proxy): the download fails and keeps nothing.
    azure.put(bucket, "blob2", data)
    proxy.inject(Fault(status=412, match=f"GET {bpath(bucket, 'blob2')}"))
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob2?provider=azure",
        headers={"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "1MiB", "Ais-Blob-Workers": "-1"},
    )
    assert r.status == 409 and b"changed remotely" in r.body, r.body
    assert "blob2" not in cached(client, bucket)
    assert work_files(Path(p) for p in server.mountpaths) == []


def test_a_blob_rewritten_between_properties_and_read_is_not_mixed(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    azure.put(bucket, "race", b"old")
    b = client.bucket(bucket, provider="azure")
    # Properties (of "old") answered, then "new" lands before the bytes are read: If-Match
    # makes Azure refuse the read rather than serve new bytes under the old ETag.
    proxy.inject(Fault(delay=1.5, match=f"GET {bpath(bucket, 'race')}"))

    def rewrite() -> None:
        time.sleep(0.3)  # (the properties request comes at once; the read waits 1.5 s)
        azure.put(bucket, "race", b"new bytes")

    writer = threading.Thread(target=rewrite)
    writer.start()
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/race?provider=azure")
    writer.join()
    assert r.status == 409 and b"changed remotely" in r.body, r.body
    assert b.object("race").get_reader().read_all() == b"new bytes"


def test_copy_reads_an_az_source_and_writes_through(
    client: Client, azure: AzureBlobs, bucket: str
) -> None:
    from aistore.pytorch import AISMapDataset

    for i in range(4):
        azure.put(bucket, f"d/{i}", f"sample {i}".encode())
    b = client.bucket(bucket, provider="azure")
    ds = AISMapDataset(b)  # az:// buckets as they are: the first read of each sample is cold
    assert sorted(ds[i] for i in range(len(ds))) == [
        (f"d/{i}", f"sample {i}".encode()) for i in range(4)
    ]
    dst = client.bucket(f"{bucket}-copy").create(exist_ok=True)  # copy-bck: the cached ones
    assert client.job(b.copy(dst)).wait(timeout=60).success
    assert sorted(e.name for e in dst.list_all_objects()) == [f"d/{i}" for i in range(4)]
    assert dst.object("d/2").get_reader().read_all() == b"sample 2"

    # ais:// -> az://: a multi-object copy into the az:// bucket writes each object through.
    src = client.bucket(f"{bucket}-src").create(exist_ok=True)
    for i in range(3):
        src.object(f"up/{i}").get_writer().put_content(f"up {i}".encode())
    for job in src.objects(obj_names=[f"up/{i}" for i in range(3)]).copy(b):
        assert client.job(job).wait(timeout=60).success
    assert [azure.get(bucket, f"up/{i}") for i in range(3)] == [
        f"up {i}".encode() for i in range(3)
    ]
    src.object("up/0").copy(b.object("single"))
    assert azure.get(bucket, "single") == b"up 0"


def test_delete_of_a_blob_azure_no_longer_has(
    client: Client, azure: AzureBlobs, bucket: str
) -> None:
    azure.put(bucket, "stale", b"s")
    b = client.bucket(bucket, provider="azure")
    assert b.object("stale").get_reader().read_all() == b"s"
    azure.delete(bucket, "stale")  # out of band: Azure answers 404 to deleting it now
    b.object("stale").delete()  # the cached copy still goes
    assert cached(client, bucket) == []
    with not_found(f"azure-error[NotFound: az://{bucket}/stale]"):
        b.object("stale").delete()  # neither has it: Azure's 404


def test_inventory_of_an_az_bucket(
    client: Client, azure: AzureBlobs, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(12):
        azure.put(bucket, f"inv/{i:03d}", b"z" * (i + 1))
    b = client.bucket(bucket, provider="azure")
    b.object("inv/007").get_reader().read_all()
    assert client.job(b.create_inventory(name="snap")).wait(timeout=60).success
    lists_before = proxy.count("GET", f"/{ACCOUNT}/{bucket}")
    entries = list(b.list_objects_iter(flags=[ListObjectFlag.NBI], page_size=5))
    assert proxy.count("GET", f"/{ACCOUNT}/{bucket}") == lists_before, "never asks Azure"
    assert [e.name for e in entries] == [f"inv/{i:03d}" for i in range(12)]
    assert [e.name for e in entries if e.is_cached()] == ["inv/007"]
    assert entries[5].size == 6


def test_getbatch_fetches_cold_items(client: Client, azure: AzureBlobs, bucket: str) -> None:
    data = {f"gb/{i}": os.urandom(1000 * (i + 1)) for i in range(4)}
    for k, v in data.items():
        azure.put(bucket, k, v)
    b = client.bucket(bucket, provider="azure")
    got = {info.obj_name: content for info, content in client.batch(list(data), bucket=b).get()}
    assert got == data
    assert cached(client, bucket) == sorted(data)
