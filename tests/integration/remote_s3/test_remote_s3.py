"""Remote s3:// buckets: the cache tier (cold and warm GETs, HEAD, listing, write-through, faults
of the backend, evict, prefetch, blob download, copies, inventory, GetBatch). The S3 server,
fault proxy and aistore-server of the module are conftest.py's."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _s3 import Fault, FaultProxy
from _util import ENTRY_IS_CACHED, bucket_action, raw_request, work_files

from aistore.sdk import Client
from aistore.sdk.errors import AISError, ErrObjNotFound, ErrRemoteBckNotFound
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.server import LocalServer

ENTRY_IS_DIR = 256


def head_v1(endpoint: str, bucket: str, name: str) -> tuple[dict[str, str], dict[str, str]]:
    """HEAD (v1: every property) of s3://bucket/name: (headers, custom metadata)."""
    r = raw_request(endpoint, "HEAD", f"/v1/objects/{bucket}/{name}?provider=aws")
    assert r.status == 200, r.header("Hdr-Error")
    custom = {}
    for line in r.headers.get_all("Ais-Custom-Md") or []:  # one k=v per header line
        k, _, v = line.partition("=")
        custom[k] = v
    return dict(r.headers.items()), custom


def set_remote_props(endpoint: str, bucket: str, value: dict[str, Any]) -> None:
    bucket_action(endpoint, "PATCH", bucket, "set-bprops", value, provider="aws")


def test_cold_get_fetches_once_then_serves_locally(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(300_000)
    s3.put_object(Bucket=bucket, Key="dir/obj", Body=data)
    obj = client.bucket(bucket, provider="aws").object("dir/obj")
    assert obj.get_reader().read_all() == data
    assert proxy.count("GET", f"/{bucket}/dir/obj") == 1
    for _ in range(3):
        assert obj.get_reader().read_all() == data
    assert proxy.count("GET", f"/{bucket}/dir/obj") == 1, "warm GETs must not reach S3"
    headers, md = head_v1(server.endpoint, bucket, "dir/obj")
    assert headers["Ais-Present"] == "true"
    assert md["source"] == "aws"
    etag = s3.head_object(Bucket=bucket, Key="dir/obj")["ETag"].strip('"')
    assert md["ETag"] == etag and md["md5"] == etag


def test_head_of_uncached_object_asks_s3(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="h", Body=b"12345", Metadata={"color": "blue"})
    headers, md = head_v1(server.endpoint, bucket, "h")
    assert headers["Ais-Present"] == "false"
    assert headers["Content-Length"] == "5"
    assert md["X-Amz-Meta-Color"] == "blue"
    assert client.bucket(bucket, provider="aws").object("h").head().size == 5
    # HEAD does not cache it: presence=2 (present only) answers 404 without asking S3.
    heads = proxy.count("HEAD", f"/{bucket}/h")
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/h?provider=aws&presence=2&props=size"
    )
    assert r.status == 404
    assert proxy.count("HEAD", f"/{bucket}/h") == heads


def test_range_get_cold_and_warm(client: Client, s3: Any, bucket: str) -> None:
    data = os.urandom(100_000)
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    obj = client.bucket(bucket, provider="aws").object("r")
    assert obj.get_reader(byte_range="bytes=1000-1999").read_all() == data[1000:2000]
    assert obj.get_reader(byte_range="bytes=-10").read_all() == data[-10:]


def test_concurrent_cold_gets_fetch_once(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str
) -> None:
    data = os.urandom(2_000_000)
    s3.put_object(Bucket=bucket, Key="hot", Body=data)
    proxy.inject(Fault(delay=0.5, match=f"GET /{bucket}/hot"))  # keep the first fetch in flight
    obj = client.bucket(bucket, provider="aws").object("hot")
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
    assert proxy.count("GET", f"/{bucket}/hot") == 1


def test_large_object_is_stored_chunked(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="aws")
    b.head()  # adds the bucket, so its chunk props can be set before the first GET
    set_remote_props(
        server.endpoint, bucket, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "1MiB"}}
    )
    data = os.urandom(5 * 1024 * 1024 + 17)
    s3.put_object(Bucket=bucket, Key="big", Body=data)
    assert b.object("big").get_reader().read_all() == data
    r = raw_request(server.endpoint, "HEAD", f"/v1/objects/{bucket}/big?provider=aws&props=chunked")
    assert r.status == 200
    assert r.header("Ais-Chunks-Count") == "6"


def test_latest_sees_out_of_band_changes(client: Client, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="v", Body=b"one")
    obj = client.bucket(bucket, provider="aws").object("v")
    assert obj.get_reader().read_all() == b"one"
    s3.put_object(Bucket=bucket, Key="v", Body=b"two!")
    assert obj.get_reader().read_all() == b"one", "a warm GET is local"
    assert obj.get_reader(latest=True).read_all() == b"two!"
    assert obj.get_reader().read_all() == b"two!", "the new version is cached"
    s3.delete_object(Bucket=bucket, Key="v")
    assert obj.get_reader().read_all() == b"two!", "deleted remotely, still served warm"
    with pytest.raises(ErrObjNotFound):
        obj.get_reader(latest=True).read_all()


def test_synchronize_drops_what_the_remote_deleted(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
    b = client.bucket(bucket, provider="aws")
    assert b.object("gone").get_reader().read_all() == b"x"
    set_remote_props(server.endpoint, bucket, {"versioning": {"synchronize": True}})
    s3.delete_object(Bucket=bucket, Key="gone")
    with pytest.raises(ErrObjNotFound):
        b.object("gone").get_reader().read_all()
    cached = [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    assert "gone" not in cached


def test_listing_flags(client: Client, s3: Any, bucket: str) -> None:
    for key in ("a/1", "a/2", "b", "c/d/e"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    b = client.bucket(bucket, provider="aws")
    b.object("a/1").get_reader().read_all()

    default = {e.name: e for e in b.list_all_objects()}
    assert sorted(default) == ["a/1", "a/2", "b", "c/d/e"]
    assert all(e.flags & ENTRY_IS_CACHED == 0 for e in default.values()), (
        "default props: remote-only"
    )
    assert default["c/d/e"].size == 5

    merged = {e.name: e for e in b.list_all_objects(props="name,size,atime")}
    assert merged["a/1"].is_cached() and not merged["a/2"].is_cached()

    cached = [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    assert cached == ["a/1"]
    not_cached = [
        e.name for e in b.list_all_objects(props="name,size", flags=[ListObjectFlag.NOT_CACHED])
    ]
    assert sorted(not_cached) == ["a/2", "b", "c/d/e"]

    top = {e.name: e.flags for e in b.list_all_objects(flags=[ListObjectFlag.NO_RECURSION])}
    assert top == {"b": 0, "a/": ENTRY_IS_DIR, "c/": ENTRY_IS_DIR}
    paged = list(b.list_objects_iter(page_size=2))
    assert sorted(e.name for e in paged) == ["a/1", "a/2", "b", "c/d/e"]


def test_put_and_delete_write_through(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="aws")
    data = os.urandom(70_000)
    b.object("w/new").get_writer().put_content(data)
    assert s3.get_object(Bucket=bucket, Key="w/new")["Body"].read() == data
    headers, md = head_v1(server.endpoint, bucket, "w/new")
    assert headers["Ais-Present"] == "true"
    assert md["ETag"] == s3.head_object(Bucket=bucket, Key="w/new")["ETag"].strip('"')
    b.object("w/new").delete()
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    with pytest.raises(ErrObjNotFound):
        b.object("w/new").get_reader().read_all()


def test_put_fails_when_s3_refuses_and_nothing_is_cached(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="aws")
    b.head()
    proxy.inject(Fault(status=403, match=f"PUT /{bucket}/denied"))
    with pytest.raises(AISError) as e:
        b.object("denied").get_writer().put_content(b"secret")
    assert e.value.status_code == 403
    assert "aws-error[Injected403" in str(e.value)
    assert "testing" not in str(e.value), "credentials never appear in a message"
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


def test_missing_remote_object_and_bucket(client: Client, bucket: str) -> None:
    with pytest.raises(ErrObjNotFound):
        client.bucket(bucket, provider="aws").object("nothing").get_reader().read_all()
    with pytest.raises(ErrRemoteBckNotFound) as e:
        client.bucket(f"{bucket}-missing", provider="aws").list_all_objects()
    assert e.value.status_code == 404
    assert f"s3://{bucket}-missing" in str(e.value)


def test_s3_errors_are_retried_then_reported(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="flaky", Body=b"ok")
    obj = client.bucket(bucket, provider="aws").object("flaky")
    proxy.inject(Fault(status=503, match="/flaky"), Fault(status=500, match="/flaky"))
    assert obj.get_reader().read_all() == b"ok", "two 5xx replies are retried"

    s3.put_object(Bucket=bucket, Key="broken", Body=b"never")
    proxy.inject(*[Fault(status=500, match="/broken") for _ in range(4)])
    started = time.monotonic()
    r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/broken?provider=aws")
    assert r.status == 500 and b"aws-error[Injected500" in r.body
    assert time.monotonic() - started < 10, "retries are bounded"


def test_cut_body_leaves_nothing(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    data = os.urandom(1_000_000)
    s3.put_object(Bucket=bucket, Key="cut", Body=data)
    proxy.inject(Fault(cut_after=100_000, match=f"GET /{bucket}/cut"))
    # The reply streams while the object is written: the cut is a 500 if it came before the
    # reply started, else a reply cut short (never a whole one).
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/cut?provider=aws")
        assert r.status == 500, r.body
    except http.client.IncompleteRead as e:
        assert len(e.partial) < len(data)
    b = client.bucket(bucket, provider="aws")
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    assert work_files(Path(p) for p in server.mountpaths) == []
    assert b.object("cut").get_reader().read_all() == data, "the next GET fetches it whole"


def test_s3_down_is_a_clear_error(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="x", Body=b"x")
    client.bucket(bucket, provider="aws").head()
    proxy.down = True
    try:
        r = raw_request(server.endpoint, "GET", f"/v1/objects/{bucket}/x?provider=aws")
        assert r.status == 500 and b"aws-error[" in r.body
    finally:
        proxy.down = False
    assert client.bucket(bucket, provider="aws").object("x").get_reader().read_all() == b"x"


def test_evict_bucket_keeps_or_drops_md(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="e", Body=b"e")
    b = client.bucket(bucket, provider="aws")
    b.object("e").get_reader().read_all()
    b.evict(keep_md=True)
    assert [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == []
    present = {m.name for m in client.cluster().list_buckets(provider="")}
    assert bucket in present
    b.evict(keep_md=False)
    present = {m.name for m in client.cluster().list_buckets(provider="")}
    assert bucket not in present
    assert s3.get_object(Bucket=bucket, Key="e")["Body"].read() == b"e", "the cloud data stays"


def test_bucket_rules(client: Client, bucket: str, server: LocalServer) -> None:
    client.bucket(bucket, provider="aws").head()
    r = raw_request(
        server.endpoint,
        "DELETE",
        f"/v1/buckets/{bucket}?provider=aws",
        body=json.dumps({"action": "destroy-bck"}).encode(),
    )
    assert r.status == 405 and b"cannot destroy cloud bucket" in r.body
    r = raw_request(
        server.endpoint,
        "POST",
        "/v1/buckets/not-in-s3?provider=aws",
        body=json.dumps({"action": "create-bck"}).encode(),
    )
    assert r.status == 501 and b'aws bucket \\"s3://not-in-s3\\" does not exist' in r.body
    names = {m.name for m in client.cluster().list_buckets(provider="aws")}
    assert bucket in names


def test_evict_objects_drops_cached_copies_only(client: Client, s3: Any, bucket: str) -> None:
    b = client.bucket(bucket, provider="aws")
    for key in ("k1", "k2", "k3"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
        b.object(key).get_reader().read_all()
    job = b.objects(obj_names=["k1", "k2"]).evict()
    client.job(job).wait(timeout=30)
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == ["k3"]
    assert sorted(e.name for e in b.list_all_objects()) == ["k1", "k2", "k3"], "S3 keeps them"


def test_prefetch_fetches_selected_objects(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(12):
        s3.put_object(Bucket=bucket, Key=f"p/{i:02d}", Body=os.urandom(1000 + i))
    s3.put_object(Bucket=bucket, Key="q/other", Body=b"q")
    b = client.bucket(bucket, provider="aws")

    def cached() -> list[str]:
        return sorted(e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED]))

    client.job(b.objects(obj_names=["p/00", "p/01"]).prefetch()).wait(timeout=60)
    assert cached() == ["p/00", "p/01"]
    client.job(b.objects(obj_template="p/{00..05}").prefetch(num_workers=2)).wait(timeout=60)
    assert cached() == [f"p/{i:02d}" for i in range(6)]
    assert proxy.count("GET", f"/{bucket}/p/00") == 1, "cached objects are not fetched again"
    client.job(b.objects(obj_template="p/").prefetch()).wait(
        timeout=60
    )  # a prefix: listed remotely
    assert cached() == [f"p/{i:02d}" for i in range(12)]
    assert (
        b.object("p/07").get_reader().read_all()
        == s3.get_object(Bucket=bucket, Key="p/07")["Body"].read()
    )
    assert proxy.count("GET", f"/{bucket}/p/07") == 1, "the GET after prefetch is warm"


def test_prefetch_errors(client: Client, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="there", Body=b"1")
    b = client.bucket(bucket, provider="aws")
    failing = b.objects(obj_names=["missing", "there"]).prefetch(num_workers=-1)
    result = client.job(failing).wait(timeout=60)
    assert not result.success
    assert "NoSuchKey" in str(result.error)
    coer = b.objects(obj_names=["missing", "there"]).prefetch(continue_on_error=True)
    result = client.job(coer).wait(timeout=60)  # finishes; its error names what it skipped
    assert result.end_time is not None and "missing" in str(result.error)
    assert [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])] == ["there"]


def test_blob_download_job_and_get(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    from aistore.sdk.blob_download_config import BlobDownloadConfig

    data = os.urandom(5 * 1024 * 1024 + 5)
    s3.put_object(Bucket=bucket, Key="blob1", Body=data)
    s3.put_object(Bucket=bucket, Key="blob2", Body=data[::-1])
    b = client.bucket(bucket, provider="aws")

    job = b.object("blob1").blob_download(chunk_size=1024 * 1024, num_workers=3)
    assert client.job(job).wait(timeout=60).success
    assert proxy.count("GET", f"/{bucket}/blob1") == 6, "one range read per chunk"
    r = raw_request(
        server.endpoint, "HEAD", f"/v1/objects/{bucket}/blob1?provider=aws&props=chunked"
    )
    assert r.header("Ais-Chunks-Count") == "6"
    assert b.object("blob1").get_reader().read_all() == data
    assert b.object("blob1").blob_download() == "", "cached: nothing to do"

    cfg = BlobDownloadConfig(chunk_size="2MiB", num_workers="2")
    assert b.object("blob2").get_reader(blob_download_config=cfg).read_all() == data[::-1]
    assert proxy.count("GET", f"/{bucket}/blob2") == 3

    s3.put_object(Bucket=bucket, Key="blob3", Body=data)
    proxy.inject(Fault(cut_after=1000, match=f"GET /{bucket}/blob3"))
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob3?provider=aws",
        headers={"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "1MiB", "Ais-Blob-Workers": "-1"},
    )
    assert r.status == 500, r.body
    assert "blob3" not in [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob3?provider=aws",
        headers={"Ais-Blob-Workers": "x"},
    )
    assert r.status == 200, "the blob headers count only with Ais-Blob-Download: true"
    r = raw_request(
        server.endpoint,
        "GET",
        f"/v1/objects/{bucket}/blob3?provider=aws",
        headers={"Ais-Blob-Download": "true", "Ais-Blob-Workers": "500"},
    )
    assert r.status == 400 and b"blob-downloader: failed to parse" in r.body


def test_blob_download_get_streams_while_chunks_arrive(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    """A blob-downloaded cold GET sends each chunk as soon as it and those before it are in (not
    after the whole object), keeps the object's last byte until it is committed, and a reader
    that comes meanwhile shares the download; a chunk that fails cuts the reply short."""
    import requests

    mib = 1024 * 1024
    data = os.urandom(4 * mib + 3)  # 5 chunks of 1 MiB, fetched one after the other
    s3.put_object(Bucket=bucket, Key="streamed", Body=data)
    what = f"GET /{bucket}/streamed"
    for _ in range(4):
        proxy.inject(Fault(match=what))  # as they are
    proxy.inject(Fault(delay=4, match=what))  # the last chunk's range GET waits
    url = f"{server.endpoint}/v1/objects/{bucket}/streamed?provider=aws"
    blob = {"Ais-Blob-Download": "true", "Ais-Blob-Chunk": "1MiB", "Ais-Blob-Workers": "-1"}
    b = client.bucket(bucket, provider="aws")

    def cached() -> list[str]:
        return [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]

    other: list[bytes] = []
    with requests.get(url, headers=blob, stream=True, timeout=60) as r:
        assert r.status_code == 200 and r.headers["Content-Length"] == str(len(data))
        first = r.raw.read(4 * mib)  # the chunks before the delayed one
        assert first == data[: 4 * mib]
        assert "streamed" not in cached(), "sent before the last chunk was fetched"
        reader = threading.Thread(
            target=lambda: other.append(b.object("streamed").get_reader().read_all())
        )
        reader.start()
        rest = r.raw.read()
    reader.join(timeout=60)
    assert first + rest == data
    assert other == [data], "the reader that came meanwhile got the object"
    assert proxy.count("GET", f"/{bucket}/streamed") == 5, "one download: a range GET per chunk"
    assert "streamed" in cached()

    s3.put_object(Bucket=bucket, Key="cut", Body=data)
    what = f"GET /{bucket}/cut"
    for _ in range(2):
        proxy.inject(Fault(match=what))
    proxy.inject(Fault(cut_after=1000, match=what))  # the third chunk fails
    with requests.get(
        url.replace("/streamed?", "/cut?"), headers=blob, stream=True, timeout=60
    ) as r:
        assert r.status_code == 200
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            r.content  # noqa: B018 (read to the cut)
    assert "cut" not in cached(), "nothing of a failed download kept"


def test_copy_cached_objects_and_datasets(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    from aistore.pytorch import AISMapDataset

    for i in range(4):
        s3.put_object(Bucket=bucket, Key=f"d/{i}", Body=f"sample {i}".encode())
    b = client.bucket(bucket, provider="aws")
    ds = AISMapDataset(b)  # s3:// buckets as they are: the first read of each sample is cold
    assert sorted(ds[i] for i in range(len(ds))) == [
        (f"d/{i}", f"sample {i}".encode()) for i in range(4)
    ]
    dst = client.bucket(f"{bucket}-copy")
    assert client.job(b.copy(dst)).wait(timeout=60).success  # copies what is cached: all four now
    assert sorted(e.name for e in dst.list_all_objects()) == [f"d/{i}" for i in range(4)]
    assert dst.object("d/2").get_reader().read_all() == b"sample 2"
    r = raw_request(
        server.endpoint,
        "POST",
        f"/v1/buckets/{bucket}?provider=aws",
        body=json.dumps({"action": "move-bck", "value": {"name": "x", "provider": "ais"}}).encode(),
    )
    assert r.status == 405 and b"cannot rename/move remote bucket" in r.body


def test_inventory_of_a_remote_bucket(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str
) -> None:
    for i in range(30):
        s3.put_object(Bucket=bucket, Key=f"inv/{i:03d}", Body=b"z" * i)
    b = client.bucket(bucket, provider="aws")
    b.object("inv/007").get_reader().read_all()
    job = b.create_inventory(name="snap")
    assert client.job(job).wait(timeout=60).success
    lists_before = proxy.count("GET", f"/{bucket}/")
    entries = list(b.list_objects_iter(flags=[ListObjectFlag.NBI], page_size=7))
    assert proxy.count("GET", f"/{bucket}/") == lists_before, "an inventory listing never asks S3"
    assert [e.name for e in entries] == [f"inv/{i:03d}" for i in range(30)]
    assert [e.name for e in entries if e.is_cached()] == ["inv/007"]
    assert entries[12].size == 12


def test_getbatch_and_parallel_read_fetch_cold_items(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str
) -> None:
    data = {f"gb/{i}": os.urandom(1000 * (i + 1)) for i in range(6)}
    for k, v in data.items():
        s3.put_object(Bucket=bucket, Key=k, Body=v)
    b = client.bucket(bucket, provider="aws")
    b.object("gb/0").get_reader().read_all()  # one warm item among cold ones
    for streaming in (True, False):
        names = list(data) + ["gb/missing"]
        got = {
            info.obj_name: content
            for info, content in client.batch(names, bucket=b, streaming_get=streaming).get()
        }
        assert {k: v for k, v in got.items() if k in data} == data
        assert got["gb/missing"] == b"", "a missing item is a placeholder (cont_on_err)"
    assert proxy.count("GET", f"/{bucket}/gb/3") == 1, "a cold item is fetched once, then cached"
    big = os.urandom(3 * 1024 * 1024)
    s3.put_object(Bucket=bucket, Key="gb/big", Body=big)
    with b.object("gb/big").get_reader(num_workers=4).read_all() as buf:
        assert bytes(buf.buf) == big
    assert proxy.count("GET", f"/{bucket}/gb/big") == 1, (
        "parallel range readers share one cold fetch"
    )


def test_blob_thresholds(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    big, small = os.urandom(3 * 1024 * 1024), os.urandom(100_000)
    for k, v in (("t/big", big), ("t/small", small), ("h/big", big), ("h/small", small)):
        s3.put_object(Bucket=bucket, Key=k, Body=v)
    b = client.bucket(bucket, provider="aws")

    def chunks(name: str) -> str | None:
        r = raw_request(
            server.endpoint, "HEAD", f"/v1/objects/{bucket}/{name}?provider=aws&props=chunked"
        )
        return r.header("Ais-Chunks-Count")

    job = b.objects(obj_template="t/").prefetch(
        blob_threshold=1024 * 1024
    )  # raised to 1 MiB anyway
    assert client.job(job).wait(timeout=60).success
    assert chunks("t/big") == "1", "a blob download: 4 MiB chunks by default"
    assert proxy.count("GET", f"/{bucket}/t/big") == 1 and chunks("t/small") is None

    for name in ("h/big", "h/small"):
        r = raw_request(
            server.endpoint,
            "GET",
            f"/v1/objects/{bucket}/{name}?provider=aws",
            headers={"Ais-Blob-Threshold": str(1024 * 1024), "Ais-Blob-Chunk": "1MiB"},
        )
        assert r.status == 200 and r.body == (big if name == "h/big" else small)
    assert chunks("h/big") == "3" and proxy.count("GET", f"/{bucket}/h/big") == 3
    assert chunks("h/small") is None and proxy.count("GET", f"/{bucket}/h/small") == 1


def test_head_latest_compares_with_the_remote(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    s3.put_object(Bucket=bucket, Key="hl", Body=b"v1")
    client.bucket(bucket, provider="aws").object("hl").get_reader().read_all()
    url = f"/v1/objects/{bucket}/hl?provider=aws&props=size&latest-ver=true"
    assert raw_request(server.endpoint, "HEAD", url).status == 200
    s3.put_object(Bucket=bucket, Key="hl", Body=b"v2!")
    r = raw_request(server.endpoint, "HEAD", url)
    assert r.status == 409 and "metadata mismatch" in (r.header("Hdr-Error") or "")
    s3.delete_object(Bucket=bucket, Key="hl")
    assert raw_request(server.endpoint, "HEAD", url).status == 410


def test_cold_get_streams_while_it_writes(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str
) -> None:
    data = os.urandom(2 * 1024 * 1024)
    s3.put_object(Bucket=bucket, Key="slow", Body=data)
    client.bucket(bucket, provider="aws").head()
    proxy.inject(Fault(trickle=0.05, match=f"GET /{bucket}/slow"))  # 32 pieces: S3 takes ~1.6 s
    reader = client.bucket(bucket, provider="aws").object("slow").get_reader()
    started = time.monotonic()
    stream = iter(reader)
    first = next(stream)
    first_byte = time.monotonic() - started
    rest = b"".join(stream)
    total = time.monotonic() - started
    assert first + rest == data
    assert first_byte < total / 2, (
        f"first bytes after {first_byte:.2f}s of {total:.2f}s: not streamed"
    )
    headers = raw_request(
        proxy.endpoint, "HEAD", f"/{bucket}/slow"
    )  # (through the proxy: S3's view)
    assert headers.status in (200, 403)
    assert proxy.count("GET", f"/{bucket}/slow") == 1
    assert (
        client.bucket(bucket, provider="aws").object("slow").get_reader().read_all() == data
    )  # now warm
    assert proxy.count("GET", f"/{bucket}/slow") == 1


def test_large_put_is_a_multipart_upload(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="aws")
    b.head()
    set_remote_props(server.endpoint, bucket, {"extra": {"aws": {"multipart_size": "5MiB"}}})
    assert b.head()  # the prop reads back in AIS's shape
    r = raw_request(server.endpoint, "HEAD", f"/v1/buckets/{bucket}?provider=aws")
    props = json.loads(r.header("Ais-Bucket-Props"))
    assert props["extra"]["aws"]["multipart_size"] == "5MiB"

    data = os.urandom(12 * 2**20 + 12345)
    b.object("big").get_writer().put_content(data)
    head = s3.head_object(Bucket=bucket, Key="big")
    assert head["ETag"].strip('"').endswith("-3"), "three 5 MiB parts"
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == data
    _, md = head_v1(server.endpoint, bucket, "big")
    assert md["ETag"] == head["ETag"].strip('"') and "md5" not in md  # no digest of the bytes
    assert b.object("big").get_reader().read_all() == data  # the cached copy
    assert proxy.count("GET", f"/{bucket}/big") == 0

    # A part S3 refuses fails the PUT: nothing in S3 (the upload is aborted), nothing cached.
    proxy.inject(Fault(status=403, match=f"PUT /{bucket}/refused"))
    with pytest.raises(AISError) as e:
        b.object("refused").get_writer().put_content(data)
    assert e.value.status_code == 403
    assert "refused" not in [
        o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    ]
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert "refused" not in [x.name for x in b.list_all_objects(flags=[ListObjectFlag.CACHED])]

    for bad in ("1MiB", "6GiB", "-2", True):
        r = raw_request(
            server.endpoint,
            "PATCH",
            f"/v1/buckets/{bucket}?provider=aws",
            body=json.dumps(
                {"action": "set-bprops", "value": {"extra": {"aws": {"multipart_size": bad}}}}
            ).encode(),
        )
        assert r.status == 400 and b"multipart_size" in r.body, (bad, r.body)


def test_append_and_multipart_write_through(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    b = client.bucket(bucket, provider="aws")
    writer = b.object("appended").get_writer()
    handle = writer.append_content(b"first,")
    handle = writer.append_content(b"second", handle=handle)
    assert "appended" not in [
        o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    ]
    writer.append_content(b"", handle=handle, flush=True)
    assert s3.get_object(Bucket=bucket, Key="appended")["Body"].read() == b"first,second"

    # Native multipart upload: parts kept locally, the object uploaded at completion.
    parts = [os.urandom(100_000), os.urandom(50_000)]
    mpu = b.object("mpu").multipart_upload().create()
    for n, p in enumerate(parts, 1):
        mpu.add_part(n).put_content(p)
    assert s3.list_objects_v2(Bucket=bucket, Prefix="mpu").get("KeyCount") == 0
    mpu.complete()
    assert s3.get_object(Bucket=bucket, Key="mpu")["Body"].read() == b"".join(parts)
    _, md = head_v1(server.endpoint, bucket, "mpu")
    assert md["ETag"] == s3.head_object(Bucket=bucket, Key="mpu")["ETag"].strip('"')
    aborted = b.object("aborted").multipart_upload().create()
    aborted.add_part(1).put_content(b"never")
    aborted.abort()
    assert s3.list_objects_v2(Bucket=bucket, Prefix="aborted").get("KeyCount") == 0


def start_copy(endpoint: str, src: str, dst: str, value: dict[str, Any], query: str = "") -> str:
    """copy-bck of s3://src into ais://dst (raw: the SDK sends no `presence`); the job id."""
    bck_to = f"&bck_to=ais/@%23/{dst}/{query}"
    return bucket_action(endpoint, "POST", src, "copy-bck", value, "aws", bck_to).decode()


def test_copy_remote_bucket_all_latest_sync(
    client: Client, s3: Any, bucket: str, server: LocalServer
) -> None:
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"c/{i}", Body=f"v1 {i}".encode())
    b = client.bucket(bucket, provider="aws")
    assert b.object("c/0").get_reader().read_all() == b"v1 0"  # one cached object
    dst = client.bucket(f"{bucket}-all")

    # By default only what is cached; presence=0 ("exists") lists the remote and copies it all.
    assert client.job(b.copy(dst)).wait(timeout=60).success
    assert [e.name for e in dst.list_all_objects()] == ["c/0"]
    job = start_copy(server.endpoint, bucket, dst.name, {}, "&presence=0")
    assert client.job(job).wait(timeout=60).success
    assert [e.name for e in dst.list_all_objects()] == [f"c/{i}" for i in range(5)]
    assert dst.object("c/4").get_reader().read_all() == b"v1 4"

    # Out of band: one object rewritten, one deleted. latest refreshes, sync also deletes.
    s3.put_object(Bucket=bucket, Key="c/1", Body=b"v2 1")
    s3.delete_object(Bucket=bucket, Key="c/2")
    assert client.job(b.copy(dst)).wait(timeout=60).success
    assert dst.object("c/1").get_reader().read_all() == b"v1 1", "no latest: the cached copy"
    assert client.job(b.copy(dst, latest=True, sync=True)).wait(timeout=60).success
    assert dst.object("c/1").get_reader().read_all() == b"v2 1"
    assert b.object("c/1").get_reader().read_all() == b"v2 1"
    assert [e.name for e in dst.list_all_objects()] == ["c/0", "c/1", "c/3", "c/4"]
    cached = [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    assert "c/2" not in cached

    # A remote bucket onto itself: a refresh of its cache.
    s3.put_object(Bucket=bucket, Key="c/3", Body=b"v2 3")
    assert b.object("c/3").get_reader().read_all() == b"v1 3", "warm: the cached copy"
    r = raw_request(
        server.endpoint,
        "POST",
        f"/v1/buckets/{bucket}?provider=aws&bck_to=aws/@%23/{bucket}/",
        body=json.dumps({"action": "copy-bck", "value": {"latest-ver": True}}).encode(),
    )
    assert r.status == 200, r.body
    assert client.job(r.body.decode()).wait(timeout=60).success
    assert b.object("c/3").get_reader().read_all() == b"v2 3"

    r = raw_request(
        server.endpoint,
        "POST",
        f"/v1/buckets/{bucket}?provider=aws&bck_to=ais/@%23/{dst.name}/",
        body=json.dumps(
            {"action": "copy-bck", "value": {"prepend": "p/", "synchronize": True}}
        ).encode(),
    )
    assert r.status == 400 and b"incompatible with the request to synchronize" in r.body


def test_no_aws_backend_flag() -> None:
    with LocalServer(num_mountpaths=1, args=["--no-aws-backend"]) as srv:
        c = srv.client()
        with pytest.raises(AISError) as e:
            c.bucket("anything", provider="aws").list_all_objects()
        assert e.value.status_code == 404
        assert "AWS backend is missing in the cluster configuration" in str(e.value)
        assert [b.name for b in c.cluster().list_buckets(provider="aws")] == []
        c.bucket("local").create()  # ais:// buckets as ever
        assert [b.name for b in c.cluster().list_buckets()] == ["local"]


def test_multi_object_copy_and_archive_fetch_cold_objects(
    client: Client, s3: Any, bucket: str
) -> None:
    import io
    import tarfile

    for i in range(4):
        s3.put_object(Bucket=bucket, Key=f"m/{i}", Body=f"obj {i}".encode())
    b = client.bucket(bucket, provider="aws")
    dst = client.bucket(f"{bucket}-mo").create()
    group = b.objects(obj_template="m/{0..3}")
    for job_id in group.copy(dst):  # one job per target
        assert client.job(job_id).wait(timeout=60).success
    assert [e.name for e in dst.list_all_objects()] == [f"m/{i}" for i in range(4)]
    assert dst.object("m/3").get_reader().read_all() == b"obj 3"

    for job_id in b.objects(obj_names=["m/0", "m/2"]).archive("a.tar", to_bck=dst):
        client.job(job_id).wait(timeout=60)
    with tarfile.open(fileobj=io.BytesIO(dst.object("a.tar").get_reader().read_all())) as tar:
        assert sorted(tar.getnames()) == ["m/0", "m/2"]
    cached = [e.name for e in b.list_all_objects(flags=[ListObjectFlag.CACHED])]
    assert cached == [f"m/{i}" for i in range(4)]
