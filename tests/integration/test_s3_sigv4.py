"""SigV4 signatures checked: one real server with ``--s3-credentials`` (an AWS credentials file of
two profiles), and real clients (boto3, the MinIO client, s3torchconnector's CRT client) signing
with those keys, or with wrong ones, or not at all.
"""

from __future__ import annotations

import io
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

from aistore.server import LocalServer

MiB = 1 << 20
KEY_ID, SECRET = "AKIDAISTORETEST", "secret/with+odd=chars"
OTHER_ID, OTHER_SECRET = "AKIDSECONDPROFILE", "another-secret"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    creds = tmp_path_factory.mktemp("s3creds") / "credentials"
    creds.write_text(
        f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n\n"
        f"[other]\naws_access_key_id = {OTHER_ID}\naws_secret_access_key = {OTHER_SECRET}\n"
    )
    args = ["--s3-credentials", str(creds), "--s3-api-via-root"]
    with LocalServer(num_mountpaths=2, args=args) as srv:
        yield srv


def client(
    server: LocalServer,
    key: str = KEY_ID,
    secret: str = SECRET,
    path: str = "/s3",
    signature_version: str | None = None,
) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=server.endpoint + path,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1},
            signature_version=signature_version,
        ),
    )


@pytest.fixture
def bucket(server: LocalServer) -> str:
    name = "sig-" + uuid.uuid4().hex[:10]
    client(server).create_bucket(Bucket=name)
    return name


def _code(err: pytest.ExceptionInfo[ClientError]) -> tuple[str, int]:
    e = err.value.response
    return e["Error"]["Code"], e["ResponseMetadata"]["HTTPStatusCode"]


def test_boto3_signed_calls(server: LocalServer, bucket: str, tmp_path: Path) -> None:
    s3 = client(server)
    odd = "dir/a b+c~ü=&?.txt"  # every character class the canonical path encodes
    s3.put_object(Bucket=bucket, Key=odd, Body=b"odd", Metadata={"k": "v"})
    got = s3.get_object(Bucket=bucket, Key=odd, Range="bytes=1-2")
    assert got["Body"].read() == b"dd"
    assert s3.head_object(Bucket=bucket, Key=odd)["Metadata"] == {"k": "v"}
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"p/{i}", Body=b"x")
    pages = s3.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix="p/", PaginationConfig={"PageSize": 2}
    )
    assert [o["Key"] for page in pages for o in page["Contents"]] == [f"p/{i}" for i in range(5)]
    listed = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["dir/", "p/"]
    # A multipart upload (checksum trailers on every part) and a ranged download.
    data = os.urandom(12 * MiB + 5)
    (tmp_path / "src").write_bytes(data)
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    s3.upload_file(str(tmp_path / "src"), bucket, "big", Config=cfg)
    s3.download_file(bucket, "big", str(tmp_path / "dst"), Config=cfg)
    assert (tmp_path / "dst").read_bytes() == data
    s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": odd})
    assert s3.get_object(Bucket=bucket, Key="copy")["Body"].read() == b"odd"
    # The second profile's key signs as well.
    assert client(server, OTHER_ID, OTHER_SECRET).get_object(Bucket=bucket, Key="copy")[
        "Body"
    ].read() == (b"odd")
    gone = s3.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": k} for k in ("copy", "big", odd)]}
    )
    assert len(gone["Deleted"]) == 3


def test_presigned_urls(server: LocalServer, bucket: str) -> None:
    s3 = client(server, signature_version="s3v4")  # boto3 presigns with SigV2 otherwise
    put = s3.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "pre/a b"}, ExpiresIn=60
    )
    assert requests.put(put, data=b"presigned", timeout=10).status_code == 200
    get = s3.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "pre/a b"}, ExpiresIn=60
    )
    assert requests.get(get, timeout=10).content == b"presigned"
    # Another key in the same URL: the signature no longer covers it.
    s3.put_object(Bucket=bucket, Key="pre/other", Body=b"secret")
    tampered = requests.get(get.replace("pre/a%20b", "pre/other"), timeout=10)
    assert tampered.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in tampered.content
    short = s3.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "pre/a b"}, ExpiresIn=1
    )
    time.sleep(2.1)
    expired = requests.get(short, timeout=10)
    assert expired.status_code == 403 and b"<Code>AccessDenied</Code>" in expired.content
    assert b"expired" in expired.content
    v2 = client(server).generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "pre/a b"}, ExpiresIn=60
    )
    assert "AWSAccessKeyId=" in v2  # boto3's default for presigned URLs
    refused = requests.get(v2, timeout=10)
    assert refused.status_code == 403 and b"sign with SigV4" in refused.content


def test_a_replayed_put_cannot_swap_its_body_through_aws_chunked(
    server: LocalServer, bucket: str
) -> None:
    import hashlib

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = f"{server.endpoint}/s3/{bucket}/replayed"
    body = b"the signed body"
    req = AWSRequest(
        method="PUT",
        url=url,
        data=body,
        headers={"x-amz-content-sha256": hashlib.sha256(body).hexdigest()},
    )
    SigV4Auth(Credentials(KEY_ID, SECRET), "s3", "us-east-1").add_auth(req)
    signed = dict(req.headers.items())
    assert requests.put(url, data=body, headers=signed, timeout=10).status_code == 200
    # The same signed headers, plus an unsigned Content-Encoding and a chunk-framed body of the
    # attacker's: the signed payload hash decides how the body is read, so it must match it.
    evil = b"4\r\nevil\r\n0\r\n\r\n"
    replay = {**signed, "Content-Encoding": "aws-chunked", "Content-Length": str(len(evil))}
    r = requests.put(url, data=evil, headers=replay, timeout=10)
    assert r.status_code == 400 and b"XAmzContentSHA256Mismatch" in r.content, r.content
    assert client(server).get_object(Bucket=bucket, Key="replayed")["Body"].read() == body


def test_refusals(server: LocalServer, bucket: str) -> None:
    with pytest.raises(ClientError) as err:
        client(server, secret="wrong").get_object(Bucket=bucket, Key="x")
    assert _code(err) == ("SignatureDoesNotMatch", 403)
    with pytest.raises(ClientError) as err:
        client(server, key="AKIDNOBODY").list_objects_v2(Bucket=bucket)
    assert _code(err) == ("InvalidAccessKeyId", 403)
    with pytest.raises(ClientError) as err:
        client(server, secret="wrong").put_object(Bucket=bucket, Key="x", Body=b"no")
    assert _code(err) == ("SignatureDoesNotMatch", 403)
    assert client(server).list_objects_v2(Bucket=bucket).get("KeyCount") == 0  # nothing stored
    unsigned = requests.get(f"{server.endpoint}/s3/{bucket}", timeout=10)
    assert unsigned.status_code == 403 and b"<Code>AccessDenied</Code>" in unsigned.content
    garbled = requests.get(
        f"{server.endpoint}/s3/{bucket}",
        headers={"Authorization": "AWS4-HMAC-SHA256 Credential=garbage"},
        timeout=10,
    )
    assert garbled.status_code == 400
    assert b"<Code>AuthorizationHeaderMalformed</Code>" in garbled.content
    # The AIS API is not the S3 front end: the SDK needs no signature.
    assert server.client().cluster().is_ready()


def test_signed_at_the_root_path_and_by_minio(server: LocalServer, tmp_path: Path) -> None:
    from minio import Minio
    from minio.error import S3Error

    root = client(server, path="")
    name = "mn-" + uuid.uuid4().hex[:10]
    root.create_bucket(Bucket=name)
    m = Minio(
        server.endpoint.split("//", 1)[1],
        access_key=OTHER_ID,
        secret_key=OTHER_SECRET,
        secure=False,
        region="us-east-1",
    )
    m.put_object(name, "x/y", io.BytesIO(b"minio"), 5)
    assert m.get_object(name, "x/y").read() == b"minio"
    data = os.urandom(11 * MiB)
    (tmp_path / "src").write_bytes(data)
    m.fput_object(name, "big", str(tmp_path / "src"), part_size=5 * MiB)
    assert root.get_object(Bucket=name, Key="big")["Body"].read() == data
    assert requests.get(m.presigned_get_object(name, "x/y"), timeout=10).content == b"minio"
    wrong = Minio(
        server.endpoint.split("//", 1)[1],
        access_key=OTHER_ID,
        secret_key="wrong",
        secure=False,
        region="us-east-1",
    )
    with pytest.raises(S3Error) as err:
        wrong.put_object(name, "z", io.BytesIO(b"no"), 2)
    assert err.value.code == "SignatureDoesNotMatch"


def test_s3torchconnector_signs_with_the_environment_keys(
    server: LocalServer, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch
    from s3torchconnector import S3Checkpoint, S3ClientConfig, S3MapDataset

    for k, v in {
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    s3 = client(server)
    samples = {f"train/{i:02d}.bin": os.urandom(100 + i) for i in range(10)}
    for k, v in samples.items():
        s3.put_object(Bucket=bucket, Key=k, Body=v)
    cfg = S3ClientConfig(force_path_style=True)
    mapped = S3MapDataset.from_prefix(
        f"s3://{bucket}/train/",
        region="us-east-1",
        endpoint=server.endpoint + "/s3",
        s3client_config=cfg,
        transform=lambda o: (o.key, o.read()),
    )
    assert dict(mapped[i] for i in range(len(mapped))) == samples
    checkpoint = S3Checkpoint(
        region="us-east-1", endpoint=server.endpoint + "/s3", s3client_config=cfg
    )
    state = {"w": torch.arange(3 * MiB, dtype=torch.float32)}  # a multipart upload
    with checkpoint.writer(f"s3://{bucket}/ckpt.pt") as w:
        torch.save(state, w)
    with checkpoint.reader(f"s3://{bucket}/ckpt.pt") as r:
        assert torch.equal(torch.load(r, weights_only=True)["w"], state["w"])


def test_with_tokens_required_a_token_stands_in_for_a_signature(tmp_path: Path) -> None:
    """--s3-credentials and --auth-required together: a signature by a configured key needs no
    token; a client signing with any other key (as AIS token users do) passes on its token."""
    import jwt

    secret = "hs256-secret-" + "0123456789abcdef" * 4
    now = int(time.time())
    token = jwt.encode({"sub": "alice", "iat": now, "exp": now + 600, "admin": True}, secret)
    creds = tmp_path / "credentials"
    creds.write_text(f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n")
    args = ["--s3-credentials", str(creds), "--auth-required"]
    with LocalServer(num_mountpaths=1, args=args, env={"AIS_AUTHN_SECRET_KEY": secret}) as srv:
        signed = client(srv)
        signed.create_bucket(Bucket="both")
        signed.put_object(Bucket="both", Key="k", Body=b"v")
        with_token = boto3.client(
            "s3",
            endpoint_url=srv.endpoint + "/s3",
            region_name="us-east-1",
            aws_access_key_id="any",
            aws_secret_access_key="any",
            aws_session_token=token,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )
        assert with_token.get_object(Bucket="both", Key="k")["Body"].read() == b"v"
        with pytest.raises(ClientError) as err:
            client(srv, key="any", secret="any").get_object(Bucket="both", Key="k")
        assert _code(err) == ("InvalidAccessKeyId", 403)
        assert requests.get(f"{srv.endpoint}/s3/both/k", timeout=10).status_code in (401, 403)
