"""The S3 front end (/s3) through boto3 and raw HTTP against one real server.

Bucket and object calls, listing V1/V2 with their paginators, ranges and conditional requests,
batch delete, copy, multipart upload, checksums (headers, Content-MD5, aws-chunked trailers),
presigned URLs, S3 XML errors, the root path, and the same objects seen through the AIS SDK.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import socket
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from _s3 import MotoServer
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore.sdk import Client
from aistore.server import LocalServer

MiB = 1 << 20


@pytest.fixture(scope="module")
def moto() -> Iterator[MotoServer]:
    """The backend of the s3:// buckets the server caches (see test_remote_bucket)."""
    backend = MotoServer().start()
    yield backend
    backend.stop()


@pytest.fixture(scope="module")
def server(moto: MotoServer) -> Iterator[LocalServer]:
    env = {"S3_ENDPOINT": moto.endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}  # fmt: skip
    with LocalServer(num_mountpaths=2, env=env) as srv:
        yield srv


def make_s3(endpoint: str, **cfg: Any) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="any",
        aws_secret_access_key="any",
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, **cfg),
    )


@pytest.fixture(scope="module")
def s3(server: LocalServer) -> Any:
    return make_s3(server.endpoint + "/s3")


@pytest.fixture(scope="module")
def ais(server: LocalServer) -> Client:
    return Client(server.endpoint)


@pytest.fixture
def bucket(s3: Any) -> Iterator[str]:
    name = "s3-" + uuid.uuid4().hex[:12]
    s3.create_bucket(Bucket=name)
    yield name
    keys = [
        o["Key"]
        for p in s3.get_paginator("list_objects_v2").paginate(Bucket=name)
        for o in p.get("Contents", [])
    ]
    for i in range(0, len(keys), 1000):
        s3.delete_objects(Bucket=name, Delete={"Objects": [{"Key": k} for k in keys[i : i + 1000]]})
    s3.delete_bucket(Bucket=name)


def code_of(exc: ClientError) -> str:
    return str(exc.response["Error"]["Code"])


def status_of(exc: ClientError) -> int:
    return int(exc.response["ResponseMetadata"]["HTTPStatusCode"])


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


# ---- buckets ------------------------------------------------------------------------------


def test_bucket_lifecycle(s3: Any) -> None:
    name = "s3-life-" + uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=name)
    assert name in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    head = s3.head_bucket(Bucket=name)
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "us-east-1"
    assert s3.get_bucket_location(Bucket=name).get("LocationConstraint") in (None, "")
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=name)
    assert code_of(e.value) == "BucketAlreadyExists" and status_of(e.value) == 409
    s3.put_object(Bucket=name, Key="k", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=name)
    assert code_of(e.value) == "BucketNotEmpty" and status_of(e.value) == 409
    s3.delete_object(Bucket=name, Key="k")
    s3.delete_bucket(Bucket=name)
    with pytest.raises(ClientError) as e:
        s3.head_bucket(Bucket=name)
    assert status_of(e.value) == 404
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket=name)
    assert code_of(e.value) == "NoSuchBucket"


def test_versioning(s3: Any, bucket: str) -> None:
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"


def test_bad_bucket_name(s3: Any) -> None:
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket="Bad..Name")
    assert status_of(e.value) == 400


# ---- objects ------------------------------------------------------------------------------


def test_put_get_head_delete(s3: Any, bucket: str) -> None:
    data = os.urandom(100_000)
    put = s3.put_object(
        Bucket=bucket,
        Key="dir/obj.bin",
        Body=data,
        Metadata={"Color": "red"},
        ContentType="image/png",
    )
    assert put["ETag"] == f'"{md5_hex(data)}"'
    got = s3.get_object(Bucket=bucket, Key="dir/obj.bin")
    assert got["Body"].read() == data
    assert got["ETag"] == put["ETag"] and got["Metadata"] == {"color": "red"}
    assert got["ContentType"] == "image/png" and got["ContentLength"] == len(data)
    head = s3.head_object(Bucket=bucket, Key="dir/obj.bin")
    assert head["ContentLength"] == len(data) and head["ETag"] == put["ETag"]
    s3.delete_object(Bucket=bucket, Key="dir/obj.bin")
    s3.delete_object(Bucket=bucket, Key="dir/obj.bin")  # deleting what is gone succeeds, as S3
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="dir/obj.bin")
    assert code_of(e.value) == "NoSuchKey" and status_of(e.value) == 404
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="dir/obj.bin")
    assert status_of(e.value) == 404


def test_empty_and_large_objects(s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert s3.get_object(Bucket=bucket, Key="empty")["Body"].read() == b""
    assert s3.head_object(Bucket=bucket, Key="empty")["ETag"] == f'"{md5_hex(b"")}"'
    big = os.urandom(9 * MiB + 7)
    s3.put_object(Bucket=bucket, Key="big", Body=big)
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == big


def test_range_reads(s3: Any, bucket: str) -> None:
    data = bytes(range(256)) * 400
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    part = s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-19")
    assert part["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert part["Body"].read() == data[10:20] and part["ContentRange"] == f"bytes 10-19/{len(data)}"
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=-5")["Body"].read() == data[-5:]
    assert (
        s3.get_object(Bucket=bucket, Key="r", Range=f"bytes={len(data) - 3}-")["Body"].read()
        == data[-3:]
    )
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="r", Range=f"bytes={len(data)}-")
    assert code_of(e.value) == "InvalidRange" and status_of(e.value) == 416
    assert (
        e.value.response["ResponseMetadata"]["HTTPHeaders"]["content-range"]
        == f"bytes */{len(data)}"
    )


def test_conditional_get(s3: Any, bucket: str) -> None:
    etag = s3.put_object(Bucket=bucket, Key="c", Body=b"cond")["ETag"]
    assert s3.get_object(Bucket=bucket, Key="c", IfMatch=etag)["Body"].read() == b"cond"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfMatch='"0000"')
    assert code_of(e.value) == "PreconditionFailed" and status_of(e.value) == 412
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=etag)
    assert status_of(e.value) == 304
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="c", IfNoneMatch=etag)
    assert status_of(e.value) == 304
    modified = s3.head_object(Bucket=bucket, Key="c")["LastModified"]
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=modified)
    assert status_of(e.value) == 304
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfUnmodifiedSince=modified.replace(year=2000))
    assert code_of(e.value) == "PreconditionFailed"
    assert (
        s3.get_object(Bucket=bucket, Key="c", IfUnmodifiedSince=modified)["Body"].read() == b"cond"
    )
    # Conditional writes: If-None-Match: * only creates.
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="c", Body=b"again", IfNoneMatch="*")
    assert code_of(e.value) == "PreconditionFailed"
    s3.put_object(Bucket=bucket, Key="c2", Body=b"new", IfNoneMatch="*")


def test_delete_objects(s3: Any, bucket: str) -> None:
    for k in ("a", "b", "c/d"):
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    res = s3.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": k} for k in ("a", "c/d", "missing", "bad//..")]}
    )
    assert sorted(d["Key"] for d in res.get("Deleted", [])) == ["a", "c/d", "missing"]
    assert [(x["Key"], x["Code"]) for x in res.get("Errors", [])] == [
        ("bad//..", "InvalidArgument")
    ]
    quiet = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b"}], "Quiet": True})
    assert "Deleted" not in quiet
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_copy_object(s3: Any, bucket: str) -> None:
    etag = s3.put_object(
        Bucket=bucket, Key="src", Body=b"copy me", Metadata={"a": "1"}, ContentType="text/plain"
    )["ETag"]
    res = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert res["CopyObjectResult"]["ETag"] == etag
    got = s3.get_object(Bucket=bucket, Key="dst")
    assert (
        got["Body"].read() == b"copy me"
        and got["Metadata"] == {"a": "1"}
        and got["ContentType"] == "text/plain"
    )
    s3.copy_object(
        Bucket=bucket,
        Key="dst2",
        CopySource=f"{bucket}/src",
        Metadata={"b": "2"},
        MetadataDirective="REPLACE",
    )
    head = s3.head_object(Bucket=bucket, Key="dst2")
    assert head["Metadata"] == {"b": "2"} and head["ETag"] == etag
    # Metadata of an object replaced in place.
    s3.copy_object(
        Bucket=bucket,
        Key="src",
        CopySource=f"{bucket}/src",
        Metadata={"c": "3"},
        MetadataDirective="REPLACE",
    )
    assert s3.head_object(Bucket=bucket, Key="src")["Metadata"] == {"c": "3"}
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="src", CopySource=f"{bucket}/src")
    assert code_of(e.value) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.copy_object(
            Bucket=bucket, Key="x", CopySource=f"{bucket}/src", CopySourceIfMatch='"nope"'
        )
    assert code_of(e.value) == "PreconditionFailed"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="x", CopySource=f"{bucket}/missing")
    assert code_of(e.value) == "NoSuchKey"


# ---- listing ------------------------------------------------------------------------------


def test_list_v1_v2_paginators(s3: Any, bucket: str) -> None:
    keys = sorted([f"d{i}/f{j}" for i in range(3) for j in range(4)] + ["top1", "top2", "z/deep/x"])
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"")
    v2 = [
        o["Key"]
        for p in s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 4}
        )
        for o in p.get("Contents", [])
    ]
    assert v2 == keys
    v1 = [
        o["Key"]
        for p in s3.get_paginator("list_objects").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 5}
        )
        for o in p.get("Contents", [])
    ]
    assert v1 == keys
    pages = list(
        s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Delimiter="/", PaginationConfig={"PageSize": 2}
        )
    )
    prefixes = [c["Prefix"] for p in pages for c in p.get("CommonPrefixes", [])]
    tops = [o["Key"] for p in pages for o in p.get("Contents", [])]
    assert prefixes == ["d0/", "d1/", "d2/", "z/"] and tops == ["top1", "top2"]
    assert all(p["KeyCount"] <= 2 for p in pages) and pages[0]["IsTruncated"]
    v1d = list(
        s3.get_paginator("list_objects").paginate(
            Bucket=bucket, Delimiter="/", PaginationConfig={"PageSize": 3}
        )
    )
    assert [c["Prefix"] for p in v1d for c in p.get("CommonPrefixes", [])] == [
        "d0/",
        "d1/",
        "d2/",
        "z/",
    ]
    one = s3.list_objects_v2(Bucket=bucket, Prefix="d1/", StartAfter="d1/f1", FetchOwner=True)
    assert [o["Key"] for o in one["Contents"]] == ["d1/f2", "d1/f3"] and "Owner" in one["Contents"][
        0
    ]
    assert s3.list_objects_v2(Bucket=bucket, Prefix="d", Delimiter="/")["CommonPrefixes"] == [
        {"Prefix": "d0/"},
        {"Prefix": "d1/"},
        {"Prefix": "d2/"},
    ]
    first = s3.list_objects_v2(Bucket=bucket, MaxKeys=1)
    assert first["IsTruncated"] and first["KeyCount"] == 1 and first["NextContinuationToken"]
    entry = first["Contents"][0]
    assert entry["ETag"] == f'"{md5_hex(b"")}"' and entry["Size"] == 0
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket=bucket, ContinuationToken="!!!")
    assert code_of(e.value) == "InvalidArgument"


def test_list_encoding_url(server: LocalServer, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="a b/c+d", Body=b"")
    r = requests.get(
        f"{server.endpoint}/s3/{bucket}",
        params={"list-type": "2", "encoding-type": "url"},
        timeout=10,
    )
    assert r.status_code == 200 and "<Key>a%20b/c%2Bd</Key>" in r.text
    # boto3 asks for url encoding and decodes it back
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["a b/c+d"]


# ---- multipart ----------------------------------------------------------------------------


def test_transfer_manager_multipart(s3: Any, bucket: str, tmp_path: Path) -> None:
    data = os.urandom(17 * MiB + 3)
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(data)
    cfg = TransferConfig(
        multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=4
    )
    s3.upload_file(str(src), bucket, "mpu/big", Config=cfg, ExtraArgs={"Metadata": {"k": "v"}})
    head = s3.head_object(Bucket=bucket, Key="mpu/big")
    parts = [data[i : i + 5 * MiB] for i in range(0, len(data), 5 * MiB)]
    expected = (
        hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + f"-{len(parts)}"
    )
    assert (
        head["ETag"] == f'"{expected}"'
        and head["ContentLength"] == len(data)
        and head["Metadata"] == {"k": "v"}
    )
    s3.download_file(bucket, "mpu/big", str(dst), Config=cfg)  # ranged GETs in parallel
    assert dst.read_bytes() == data


def test_multipart_calls(s3: Any, bucket: str) -> None:
    up = s3.create_multipart_upload(Bucket=bucket, Key="m")["UploadId"]
    other = s3.create_multipart_upload(Bucket=bucket, Key="n")["UploadId"]
    p2 = s3.upload_part(Bucket=bucket, Key="m", UploadId=up, PartNumber=2, Body=b"world")
    p1 = s3.upload_part(Bucket=bucket, Key="m", UploadId=up, PartNumber=1, Body=b"hello ")
    assert p1["ETag"] == f'"{md5_hex(b"hello ")}"'
    listed = s3.list_parts(Bucket=bucket, Key="m", UploadId=up)
    assert [(p["PartNumber"], p["Size"]) for p in listed["Parts"]] == [(1, 6), (2, 5)]
    uploads = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert sorted((u["Key"], u["UploadId"]) for u in uploads) == [("m", up), ("n", other)]
    with pytest.raises(ClientError) as e:  # nothing visible before Complete
        s3.head_object(Bucket=bucket, Key="m")
    assert status_of(e.value) == 404
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(
            Bucket=bucket,
            Key="m",
            UploadId=up,
            MultipartUpload={
                "Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": '"bad"'}]
            },
        )
    assert code_of(e.value) == "InvalidPart"
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(
            Bucket=bucket,
            Key="m",
            UploadId=up,
            MultipartUpload={
                "Parts": [
                    {"PartNumber": 2, "ETag": p2["ETag"]},
                    {"PartNumber": 1, "ETag": p1["ETag"]},
                ]
            },
        )
    assert code_of(e.value) == "InvalidPartOrder"
    done = s3.complete_multipart_upload(
        Bucket=bucket,
        Key="m",
        UploadId=up,
        MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["ETag"]}]
        },
    )
    assert done["ETag"].endswith('-2"')
    assert s3.get_object(Bucket=bucket, Key="m")["Body"].read() == b"hello world"
    assert s3.head_object(Bucket=bucket, Key="m")["ETag"] == done["ETag"]
    second = s3.get_object(Bucket=bucket, Key="m", PartNumber=2)
    assert second["Body"].read() == b"world" and second["PartsCount"] == 2
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="m", PartNumber=3)
    assert code_of(e.value) == "InvalidPartNumber" and status_of(e.value) == 416
    s3.abort_multipart_upload(Bucket=bucket, Key="n", UploadId=other)
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)
    for call in (
        lambda: s3.upload_part(Bucket=bucket, Key="n", UploadId=other, PartNumber=1, Body=b"x"),
        lambda: s3.list_parts(Bucket=bucket, Key="n", UploadId=other),
        lambda: s3.abort_multipart_upload(Bucket=bucket, Key="n", UploadId=other),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert code_of(e.value) == "NoSuchUpload" and status_of(e.value) == 404
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="n")  # Abort leaves nothing
    assert status_of(e.value) == 404
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket=bucket, Key="m", UploadId="x", PartNumber=10001, Body=b"x")
    assert status_of(e.value) == 400


def test_multipart_completes_with_a_subset_of_parts(s3: Any, bucket: str) -> None:
    """S3 completes an upload with any ascending subset of its parts, numbers with gaps too; the
    others are dropped."""
    up = s3.create_multipart_upload(Bucket=bucket, Key="subset")["UploadId"]
    bodies = {n: os.urandom(1000 + n) for n in (2, 5, 9, 12)}
    etags = {
        n: s3.upload_part(Bucket=bucket, Key="subset", UploadId=up, PartNumber=n, Body=b)["ETag"]
        for n, b in bodies.items()
    }
    chosen = [2, 9, 12]
    done = s3.complete_multipart_upload(
        Bucket=bucket,
        Key="subset",
        UploadId=up,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etags[n]} for n in chosen]},
    )
    digests = b"".join(hashlib.md5(bodies[n]).digest() for n in chosen)
    assert done["ETag"] == f'"{hashlib.md5(digests).hexdigest()}-3"'
    whole = b"".join(bodies[n] for n in chosen)
    assert s3.get_object(Bucket=bucket, Key="subset")["Body"].read() == whole
    second = s3.get_object(Bucket=bucket, Key="subset", PartNumber=2)
    assert second["Body"].read() == bodies[9] and second["PartsCount"] == 3
    with pytest.raises(ClientError) as e:
        s3.list_parts(Bucket=bucket, Key="subset", UploadId=up)
    assert code_of(e.value) == "NoSuchUpload"


def test_upload_part_copy(s3: Any, bucket: str) -> None:
    data = os.urandom(3 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=data)
    up = s3.create_multipart_upload(Bucket=bucket, Key="pc")["UploadId"]
    a = s3.upload_part_copy(
        Bucket=bucket,
        Key="pc",
        UploadId=up,
        PartNumber=1,
        CopySource=f"{bucket}/src",
        CopySourceRange="bytes=0-1048575",
    )
    b = s3.upload_part_copy(
        Bucket=bucket,
        Key="pc",
        UploadId=up,
        PartNumber=2,
        CopySource=f"{bucket}/src",
        CopySourceRange=f"bytes=1048576-{len(data) - 1}",
    )
    assert a["CopyPartResult"]["ETag"] == f'"{md5_hex(data[:MiB])}"'
    parts = [
        {"PartNumber": 1, "ETag": a["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": b["CopyPartResult"]["ETag"]},
    ]
    s3.complete_multipart_upload(
        Bucket=bucket, Key="pc", UploadId=up, MultipartUpload={"Parts": parts}
    )
    assert s3.get_object(Bucket=bucket, Key="pc")["Body"].read() == data
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(
            Bucket=bucket, Key="pc", UploadId=up, PartNumber=1, CopySource=f"{bucket}/src"
        )
    assert code_of(e.value) == "NoSuchUpload"


# ---- checksums and bodies -----------------------------------------------------------------


@pytest.mark.parametrize("algo", ["CRC32", "SHA1", "SHA256"])
def test_checksum_algorithms(s3: Any, bucket: str, algo: str) -> None:
    data = os.urandom(70_000)
    put = s3.put_object(Bucket=bucket, Key=f"ck-{algo}", Body=data, ChecksumAlgorithm=algo)
    got = s3.get_object(Bucket=bucket, Key=f"ck-{algo}", ChecksumMode="ENABLED")
    assert got["Body"].read() == data  # botocore validates the returned checksum
    assert got[f"Checksum{algo}"] == put[f"Checksum{algo}"]


def reflected_crc(data: bytes, poly: int, bits: int) -> int:
    """A bitwise reflected CRC with all-ones init and xorout (CRC-32C, CRC-64/NVME)."""
    mask = (1 << bits) - 1
    crc = mask
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc ^ mask


# botocore computes these two only with awscrt installed; the header is what it would send.
@pytest.mark.parametrize(
    ("algo", "poly", "bits"), [("crc32c", 0x82F63B78, 32), ("crc64nvme", 0x9A6C9329AC4BC9B5, 64)]
)
def test_crt_checksums(
    server: LocalServer, s3: Any, bucket: str, algo: str, poly: int, bits: int
) -> None:
    assert reflected_crc(b"123456789", poly, bits) == {32: 0xE3069283, 64: 0xAE8B14860A799888}[bits]
    data = os.urandom(3000)
    value = base64.b64encode(reflected_crc(data, poly, bits).to_bytes(bits // 8, "big")).decode()
    url = f"{server.endpoint}/s3/{bucket}/{algo}"
    r = requests.put(url, data=data, headers={f"x-amz-checksum-{algo}": value}, timeout=10)
    assert r.status_code == 200 and r.headers[f"x-amz-checksum-{algo}"] == value
    got = requests.get(url, headers={"x-amz-checksum-mode": "ENABLED"}, timeout=10)
    assert got.content == data and got.headers[f"x-amz-checksum-{algo}"] == value
    wrong = base64.b64encode(bytes(bits // 8)).decode()
    assert (
        requests.put(
            url, data=data, headers={f"x-amz-checksum-{algo}": wrong}, timeout=10
        ).status_code
        == 400
    )


def test_bad_digests_commit_nothing(server: LocalServer, s3: Any, bucket: str) -> None:
    url = f"{server.endpoint}/s3/{bucket}/bad"
    wrong_md5 = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    r = requests.put(url, data=b"payload", headers={"Content-MD5": wrong_md5}, timeout=10)
    assert r.status_code == 400 and "<Code>BadDigest</Code>" in r.text
    r = requests.put(url, data=b"payload", headers={"Content-MD5": "not base64!"}, timeout=10)
    assert r.status_code == 400 and "<Code>InvalidDigest</Code>" in r.text
    r = requests.put(url, data=b"payload", headers={"x-amz-checksum-crc32": "AAAAAA=="}, timeout=10)
    assert r.status_code == 400 and "<Code>BadDigest</Code>" in r.text
    r = requests.put(url, data=b"payload", headers={"x-amz-content-sha256": "0" * 64}, timeout=10)
    assert r.status_code == 400 and "<Code>XAmzContentSHA256Mismatch</Code>" in r.text
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="bad")


def aws_chunked(data: bytes, piece: int, trailer: str | None, signed: bool) -> bytes:
    out = b""
    ext = ";chunk-signature=" + "0" * 64 if signed else ""
    for i in range(0, len(data), piece):
        chunk = data[i : i + piece]
        out += f"{len(chunk):x}{ext}\r\n".encode() + chunk + b"\r\n"
    out += f"0{ext}\r\n".encode()
    if trailer:
        out += trailer.encode() + b"\r\n"
    return out + b"\r\n"


def test_aws_chunked_bodies(server: LocalServer, s3: Any, bucket: str) -> None:
    data = os.urandom(200_000)
    crc = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    url = f"{server.endpoint}/s3/{bucket}/chunked"
    common = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data))}
    unsigned = {
        **common,
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-trailer": "x-amz-checksum-crc32",
    }
    r = requests.put(
        url,
        data=aws_chunked(data, 65536, f"x-amz-checksum-crc32:{crc}", False),
        headers=unsigned,
        timeout=10,
    )
    assert r.status_code == 200, r.text
    assert r.headers["ETag"] == f'"{md5_hex(data)}"' and r.headers["x-amz-checksum-crc32"] == crc
    assert s3.get_object(Bucket=bucket, Key="chunked")["Body"].read() == data
    signed = {**common, "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}
    r = requests.put(
        url + "2", data=aws_chunked(data, 8192, None, True), headers=signed, timeout=10
    )
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="chunked2")["Body"].read() == data
    # A wrong trailer checksum, a truncated body, a wrong decoded length: 400, nothing stored.
    r = requests.put(
        url + "3",
        data=aws_chunked(data, 65536, "x-amz-checksum-crc32:AAAAAA==", False),
        headers=unsigned,
        timeout=10,
    )
    assert r.status_code == 400 and "<Code>BadDigest</Code>" in r.text
    r = requests.put(
        url + "3", data=aws_chunked(data, 65536, None, False)[:-20], headers=signed, timeout=10
    )
    assert r.status_code == 400 and "<Code>IncompleteBody</Code>" in r.text
    r = requests.put(url + "3", data=b"zz\r\n", headers=signed, timeout=10)
    assert r.status_code == 400 and "<Code>IncompleteBody</Code>" in r.text
    wrong_len = {**signed, "x-amz-decoded-content-length": str(len(data) + 1)}
    r = requests.put(
        url + "3", data=aws_chunked(data, 65536, None, True), headers=wrong_len, timeout=10
    )
    assert r.status_code == 400
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="chunked3")


# ---- presigned URLs, errors, the root path, the botocore patch -----------------------------


@pytest.mark.parametrize("signature", ["s3v4", "s3"])
def test_presigned_get_put(server: LocalServer, bucket: str, signature: str) -> None:
    s3 = make_s3(server.endpoint + "/s3", signature_version=signature)
    put_url = s3.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "pre"}, ExpiresIn=600
    )
    assert ("X-Amz-Signature=" if signature == "s3v4" else "Signature=") in put_url
    assert requests.put(put_url, data=b"presigned", timeout=10).status_code == 200
    get_url = s3.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "pre"}, ExpiresIn=600
    )
    r = requests.get(get_url, timeout=10)
    assert r.status_code == 200 and r.content == b"presigned"


def test_xml_errors(server: LocalServer, bucket: str) -> None:
    base = f"{server.endpoint}/s3/{bucket}"
    r = requests.post(base + "?delete", data=b"<Delete><Object>", timeout=10)
    assert r.status_code == 400 and r.headers["Content-Type"] == "application/xml"
    assert "<Code>MalformedXML</Code>" in r.text and "<RequestId>" in r.text
    r = requests.post(base + "/k?uploadId=nope", data=b"\x00\xff garbage", timeout=10)
    assert r.status_code == 400 and "<Code>MalformedXML</Code>" in r.text
    r = requests.get(base + "?acl", timeout=10)
    assert r.status_code == 501 and "<Code>NotImplemented</Code>" in r.text
    r = requests.head(base + "/missing", timeout=10)
    assert r.status_code == 404 and r.content == b""
    r = requests.get(f"{server.endpoint}/s3/no-such-bucket-here/k", timeout=10)
    assert r.status_code == 404 and "<Code>NoSuchBucket</Code>" in r.text
    r = requests.post(base + "/k", timeout=10)
    assert r.status_code == 400 and "<Code>InvalidRequest</Code>" in r.text
    r = requests.delete(base + "/%2E%2E", timeout=10)  # "b/..": never the bucket itself
    assert r.status_code == 400 and "<Code>InvalidArgument</Code>" in r.text
    r = requests.patch(base + "/k", timeout=10)
    assert r.status_code == 405 and "<Code>MethodNotAllowed</Code>" in r.text
    r = requests.put(base + "/k", data=b"x", headers={"x-amz-meta-big": "v" * 3000}, timeout=10)
    assert r.status_code == 400 and "<Code>MetadataTooLarge</Code>" in r.text
    r = requests.post(
        base + "?delete",
        data=b"<Delete>" + b"<Object><Key>k</Key></Object>" * 40000 + b"</Delete>",
        timeout=10,
    )
    assert r.status_code == 400  # over the body limit


def test_root_path_feature(server: LocalServer, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="root", Body=b"via root")
    assert (
        requests.get(f"{server.endpoint}/{bucket}/root", timeout=10).status_code == 404
    )  # off: not S3
    r = requests.put(
        f"{server.endpoint}/v1/cluster/setconfig",
        params={"features": "S3-API-via-Root"},
        timeout=10,
    )
    assert r.status_code == 200
    try:
        cfg = requests.get(
            f"{server.endpoint}/v1/cluster", params={"what": "cluster_config"}, timeout=10
        ).json()
        assert cfg["features"] == "8"
        root = make_s3(server.endpoint)
        assert root.get_object(Bucket=bucket, Key="root")["Body"].read() == b"via root"
        assert bucket in [b["Name"] for b in root.list_buckets()["Buckets"]]
        assert (
            requests.get(f"{server.endpoint}/v1/health", timeout=10).status_code == 200
        )  # /v1 unaffected
    finally:
        off = {"action": "set-config", "value": {"features": "none"}}
        assert (
            requests.put(f"{server.endpoint}/v1/cluster", json=off, timeout=10).status_code == 200
        )
    assert requests.get(f"{server.endpoint}/{bucket}/root", timeout=10).status_code == 404
    bad = requests.put(
        f"{server.endpoint}/v1/cluster/setconfig",
        params={"features": "No-Such-Feature"},
        timeout=10,
    )
    assert bad.status_code == 400


def test_botocore_patch_is_a_no_op(server: LocalServer, bucket: str) -> None:
    from aistore.botocore_patch import botocore  # noqa: F401  (patches botocore's redirector)

    patched = make_s3(server.endpoint + "/s3")
    patched.upload_fileobj(io.BytesIO(b"patched"), bucket, "p")
    out = io.BytesIO()
    patched.download_fileobj(bucket, "p", out)
    assert out.getvalue() == b"patched"
    assert [o["Key"] for o in patched.list_objects(Bucket=bucket)["Contents"]] == ["p"]


# ---- s3:// buckets the server knows --------------------------------------------------------


def test_remote_bucket(moto: MotoServer, s3: Any, ais: Client) -> None:
    backend = make_s3(moto.endpoint)
    name = "remote-" + uuid.uuid4().hex[:8]
    backend.create_bucket(Bucket=name)
    backend.put_object(Bucket=name, Key="d/in-s3", Body=b"from s3", Metadata={"m": "1"})
    with pytest.raises(ClientError) as e:  # not in the BMD yet: the S3 API adds no bucket
        s3.head_bucket(Bucket=name)
    assert status_of(e.value) == 404
    ais.bucket(name, provider="aws").head()  # the AIS API adds it on first use
    got = s3.get_object(Bucket=name, Key="d/in-s3")  # a cold GET through the cache tier
    assert got["Body"].read() == b"from s3" and got["Metadata"] == {"m": "1"}
    assert s3.head_object(Bucket=name, Key="d/in-s3")["ContentLength"] == 7
    s3.put_object(Bucket=name, Key="d/ours", Body=b"written through")
    assert backend.get_object(Bucket=name, Key="d/ours")["Body"].read() == b"written through"
    pages = s3.get_paginator("list_objects_v2").paginate(
        Bucket=name, PaginationConfig={"PageSize": 1}
    )
    assert [o["Key"] for p in pages for o in p.get("Contents", [])] == ["d/in-s3", "d/ours"]
    listed = s3.list_objects_v2(Bucket=name, Delimiter="/")
    assert [c["Prefix"] for c in listed["CommonPrefixes"]] == ["d/"]
    s3.delete_object(Bucket=name, Key="d/ours")
    assert "Contents" not in backend.list_objects_v2(Bucket=name, Prefix="d/ours")
    s3.put_object(Bucket=name, Key="d/batch", Body=b"x")
    res = s3.delete_objects(Bucket=name, Delete={"Objects": [{"Key": "d/batch"}]})
    assert [d["Key"] for d in res["Deleted"]] == ["d/batch"]
    assert "Contents" not in backend.list_objects_v2(Bucket=name, Prefix="d/batch")
    # A multipart upload: parts kept here, the object written through to S3 at completion.
    parts = [os.urandom(5 * 2**20), os.urandom(1000)]
    up = s3.create_multipart_upload(Bucket=name, Key="d/mpu")["UploadId"]
    etags = [
        s3.upload_part(Bucket=name, Key="d/mpu", UploadId=up, PartNumber=n, Body=p)["ETag"]
        for n, p in enumerate(parts, 1)
    ]
    assert "Contents" not in backend.list_objects_v2(Bucket=name, Prefix="d/mpu")
    done = s3.complete_multipart_upload(
        Bucket=name,
        Key="d/mpu",
        UploadId=up,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]},
    )
    assert backend.get_object(Bucket=name, Key="d/mpu")["Body"].read() == b"".join(parts)
    assert done["ETag"] == backend.head_object(Bucket=name, Key="d/mpu")["ETag"]
    # The same name as an ais:// bucket: which one is meant cannot be told by name.
    ais.bucket(name).create()
    try:
        with pytest.raises(ClientError) as e:
            s3.get_object(Bucket=name, Key="d/in-s3")
        assert code_of(e.value) == "AmbiguousBucketName"
    finally:
        ais.bucket(name).delete()


# ---- the same objects through the AIS API -------------------------------------------------


def test_cross_api_s3_to_ais(s3: Any, ais: Client, bucket: str) -> None:
    data = os.urandom(50_000)
    s3.put_object(
        Bucket=bucket,
        Key="x/s3put",
        Body=data,
        Metadata={"owner": "s3"},
        ContentType="text/plain; charset=utf-8",
    )
    obj = ais.bucket(bucket).object("x/s3put")
    assert obj.get_reader().read_all() == data
    custom = obj.head("custom").custom_metadata
    assert custom["owner"] == "s3" and custom["ETag"] == md5_hex(data)
    assert (
        s3.head_object(Bucket=bucket, Key="x/s3put")["ContentType"] == "text/plain; charset=utf-8"
    )
    assert [e.name for e in ais.bucket(bucket).list_all_objects()] == ["x/s3put"]


def test_cross_api_ais_to_s3(s3: Any, ais: Client, bucket: str) -> None:
    data = os.urandom(30_000)
    obj = ais.bucket(bucket).object("aisput")
    obj.get_writer().put_content(data)
    obj.get_writer().set_custom_props({"team": "ais"})
    got = s3.get_object(Bucket=bucket, Key="aisput")
    assert got["Body"].read() == data and got["Metadata"] == {"team": "ais"}
    assert got["ETag"].startswith('"') and len(got["ETag"]) > 2
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["aisput"]
    s3.delete_object(Bucket=bucket, Key="aisput")
    assert not list(ais.bucket(bucket).list_all_objects())


# ---- hypothesis: names, ranges, listing parameters ------------------------------------------

SEGMENT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"], exclude_characters="/"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
NAME = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=NAME, data=st.binary(max_size=2000))
def test_hypothesis_names(s3: Any, bucket: str, name: str, data: bytes) -> None:
    s3.put_object(Bucket=bucket, Key=name, Body=data)
    assert s3.get_object(Bucket=bucket, Key=name)["Body"].read() == data
    assert name in [
        o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=name).get("Contents", [])
    ]
    s3.delete_object(Bucket=bucket, Key=name)


RANGE_DATA = bytes(range(256)) * 13


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.integers(0, len(RANGE_DATA) + 5),
    length=st.integers(1, len(RANGE_DATA) + 5),
    suffix=st.booleans(),
)
def test_hypothesis_ranges(s3: Any, bucket: str, start: int, length: int, suffix: bool) -> None:
    s3.put_object(Bucket=bucket, Key="rng", Body=RANGE_DATA)
    spec = f"bytes=-{length}" if suffix else f"bytes={start}-{start + length - 1}"
    if not suffix and start >= len(RANGE_DATA):
        with pytest.raises(ClientError) as e:
            s3.get_object(Bucket=bucket, Key="rng", Range=spec)
        assert status_of(e.value) == 416
        return
    want = RANGE_DATA[-length:] if suffix else RANGE_DATA[start : start + length]
    assert s3.get_object(Bucket=bucket, Key="rng", Range=spec)["Body"].read() == want


LIST_KEYS = sorted(
    [
        "a",
        "a/b",
        "a/b/c",
        "a/bc",
        "ab",
        "ab/c/d",
        "b.txt",
        "b/x",
        "b/y/z",
        "c",
        "c-d/e",
        "cc/dd/ee",
        "é/ü",
    ]
)


def model_listing(prefix: str, delimiter: str, after: str) -> list[str]:
    out: list[str] = []
    for k in LIST_KEYS:
        if not k.startswith(prefix):
            continue
        at = k.find(delimiter, len(prefix)) if delimiter else -1
        entry = k[: at + len(delimiter)] if at >= 0 else k
        if entry > after and (not out or out[-1] != entry):
            out.append(entry)
    return out


@pytest.fixture(scope="module")
def listing_bucket(s3: Any) -> str:
    name = "s3-list-" + uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=name)
    for k in LIST_KEYS:
        s3.put_object(Bucket=name, Key=k, Body=b"")
    return name


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from(["", "a", "a/", "a/b", "b", "c", "é", "zz"]),
    delimiter=st.sampled_from(["", "/", "b", "/c"]),
    page=st.integers(1, 6),
    start_after=st.sampled_from(["", "a", "a/b", "ab/", "b", "c-d/e"]),
    v1=st.booleans(),
)
def test_hypothesis_listing(
    s3: Any, listing_bucket: str, prefix: str, delimiter: str, page: int, start_after: str, v1: bool
) -> None:
    args: dict[str, Any] = {
        "Bucket": listing_bucket,
        "Prefix": prefix,
        "Delimiter": delimiter,
        "PaginationConfig": {"PageSize": page},
    }
    if v1:
        pages = list(s3.get_paginator("list_objects").paginate(**args, Marker=start_after))
    else:
        pages = list(s3.get_paginator("list_objects_v2").paginate(**args, StartAfter=start_after))
    got = sorted(
        [o["Key"] for p in pages for o in p.get("Contents", [])]
        + [c["Prefix"] for p in pages for c in p.get("CommonPrefixes", [])]
    )
    assert got == model_listing(prefix, delimiter, start_after)
    assert all(len(p.get("Contents", [])) + len(p.get("CommonPrefixes", [])) <= page for p in pages)


# ---- bad input: a 4xx naming it, nothing partial visible, the server unharmed ---------------


def raw_send(server: LocalServer, head: str, body: bytes = b"", read: bool = True) -> bytes:
    host, port = server.endpoint.split("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        if not read:
            return b""
        sock.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_truncated_and_abandoned_requests(server: LocalServer, s3: Any, bucket: str) -> None:
    # A PUT whose client goes away mid-body leaves nothing.
    raw_send(
        server,
        f"PUT /s3/{bucket}/cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n",
        b"x" * 10,
        read=False,
    )
    up = s3.create_multipart_upload(Bucket=bucket, Key="cutpart")["UploadId"]
    raw_send(server, f"PUT /s3/{bucket}/cutpart?partNumber=1&uploadId={up} HTTP/1.1\r\nHost: x\r\n"
             "Content-Length: 100000\r\n", b"x" * 10, read=False)  # fmt: skip
    # A GET whose client reads a few bytes and leaves.
    s3.put_object(Bucket=bucket, Key="big", Body=os.urandom(8 * MiB))
    host, port = server.endpoint.split("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET /s3/{bucket}/big HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
    # An aws-chunked frame larger than any part, and a chunk-size line that never ends.
    chunked = (
        "Content-Encoding: aws-chunked\r\n"
        "x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\n"
    )
    for body in (b"fffffffff\r\n", b"1" * 5000):
        reply = raw_send(server, f"PUT /s3/{bucket}/frame HTTP/1.1\r\nHost: x\r\n{chunked}"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n", body)  # fmt: skip
        assert reply.startswith(b"HTTP/1.1 400") and b"<Code>IncompleteBody</Code>" in reply, reply[
            :300
        ]
    # 10 000 parts listed in a Complete: over the store's 9999, a 400 before any work.
    parts = "".join(
        f"<Part><PartNumber>{i}</PartNumber><ETag>e</ETag></Part>" for i in range(1, 10001)
    )
    body = f"<CompleteMultipartUpload>{parts}</CompleteMultipartUpload>".encode()
    r = requests.post(f"{server.endpoint}/s3/{bucket}/cutpart?uploadId={up}", data=body, timeout=30)
    assert r.status_code == 400 and "<Code>MalformedXML</Code>" in r.text
    assert "Parts" not in s3.list_parts(Bucket=bucket, Key="cutpart", UploadId=up)
    s3.abort_multipart_upload(Bucket=bucket, Key="cutpart", UploadId=up)
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert listed == ["big"]
    assert s3.get_object(Bucket=bucket, Key="big")["ContentLength"] == 8 * MiB
