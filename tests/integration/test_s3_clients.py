"""Third-party S3 clients and data loaders against the S3 front end of one real server.

s3fs and litdata (writing a dataset through S3 and streaming it back) on /s3; the MinIO client
on the root path (it takes no endpoint path: the server runs with --s3-api-via-root);
s3torchconnector on both. Each checks bytes and listings, not just that calls return.
"""

from __future__ import annotations

import io
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
import torch
from botocore.config import Config

from aistore.server import LocalServer

MiB = 1 << 20
CREDS = {
    "AWS_ACCESS_KEY_ID": "any",
    "AWS_SECRET_ACCESS_KEY": "any",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with pytest.MonkeyPatch.context() as mp:
        for k, v in CREDS.items():  # the CRT client (s3torchconnector) and litdata read these
            mp.setenv(k, v)
        with LocalServer(num_mountpaths=2, args=["--s3-api-via-root"]) as srv:
            yield srv


@pytest.fixture(scope="module")
def s3(server: LocalServer) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        region_name="us-east-1",
        aws_access_key_id="any",
        aws_secret_access_key="any",
        config=Config(s3={"addressing_style": "path"}),
    )


@pytest.fixture
def bucket(s3: Any) -> str:
    name = "cl-" + uuid.uuid4().hex[:12]
    s3.create_bucket(Bucket=name)
    return name


def test_s3fs(server: LocalServer, s3: Any) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(
        key="any",
        secret="any",
        endpoint_url=server.endpoint + "/s3",
        client_kwargs={"region_name": "us-east-1"},
        use_listings_cache=False,
    )
    name = "fs-" + uuid.uuid4().hex[:10]
    fs.mkdir(name)
    fs.pipe(f"{name}/dir/a.txt", b"hello")
    fs.pipe(f"{name}/dir/sub/b.txt", b"world")
    assert fs.cat(f"{name}/dir/a.txt") == b"hello"
    assert fs.ls(f"{name}/dir", detail=False) == [f"{name}/dir/a.txt", f"{name}/dir/sub"]
    assert fs.find(name) == [f"{name}/dir/a.txt", f"{name}/dir/sub/b.txt"]
    assert fs.info(f"{name}/dir/a.txt")["size"] == 5 and fs.isdir(f"{name}/dir/sub")
    data = os.urandom(12 * MiB + 5)
    with fs.open(f"{name}/big", "wb", block_size=5 * MiB) as f:  # a multipart upload
        for i in range(0, len(data), MiB):
            f.write(data[i : i + MiB])
    assert s3.head_object(Bucket=name, Key="big")["ETag"].endswith('-3"')
    with fs.open(f"{name}/big", "rb", block_size=MiB) as f:  # ranged reads
        f.seek(7 * MiB + 3)
        assert f.read(100) == data[7 * MiB + 3 : 7 * MiB + 103]
    assert fs.cat(f"{name}/big") == data
    fs.rm(f"{name}/dir", recursive=True)
    assert fs.find(name) == [f"{name}/big"] and not fs.exists(f"{name}/dir/a.txt")


def test_minio(server: LocalServer, tmp_path: Path) -> None:
    from minio import Minio
    from minio.commonconfig import CopySource
    from minio.deleteobjects import DeleteObject

    m = Minio(
        server.endpoint.split("//", 1)[1],
        access_key="any",
        secret_key="any",
        secure=False,
        region="us-east-1",
    )
    name = "mn-" + uuid.uuid4().hex[:10]
    m.make_bucket(name)
    assert m.bucket_exists(name) and name in [b.name for b in m.list_buckets()]
    m.put_object(
        name, "x/y", io.BytesIO(b"minio"), 5, content_type="text/plain", metadata={"k": "v"}
    )
    assert m.get_object(name, "x/y").read() == b"minio"
    stat = m.stat_object(name, "x/y")
    assert (
        stat.size == 5
        and stat.content_type == "text/plain"
        and stat.metadata["x-amz-meta-k"] == "v"
    )
    data = os.urandom(11 * MiB)
    (tmp_path / "src").write_bytes(data)
    m.fput_object(name, "big", str(tmp_path / "src"), part_size=5 * MiB)
    m.fget_object(name, "big", str(tmp_path / "dst"))
    assert (tmp_path / "dst").read_bytes() == data
    assert m.get_object(name, "big", offset=MiB, length=10).read() == data[MiB : MiB + 10]
    assert [o.object_name for o in m.list_objects(name, recursive=True)] == ["big", "x/y"]
    assert [o.object_name for o in m.list_objects(name)] == ["big", "x/"]
    m.copy_object(name, "copy", CopySource(name, "x/y"))
    assert m.get_object(name, "copy").read() == b"minio"
    assert requests.get(m.presigned_get_object(name, "copy"), timeout=10).content == b"minio"
    assert (
        requests.put(m.presigned_put_object(name, "pre"), data=b"put", timeout=10).status_code
        == 200
    )
    errors = list(m.remove_objects(name, [DeleteObject(k) for k in ("copy", "big", "pre", "x/y")]))
    assert errors == [] and list(m.list_objects(name, recursive=True)) == []
    m.remove_bucket(name)
    assert not m.bucket_exists(name)


def test_s3torchconnector(server: LocalServer, s3: Any, bucket: str) -> None:
    from s3torchconnector import S3Checkpoint, S3ClientConfig, S3IterableDataset, S3MapDataset

    samples = {f"train/{i:04d}.bin": os.urandom(1000 + i) for i in range(40)}
    for k, v in samples.items():
        s3.put_object(Bucket=bucket, Key=k, Body=v)
    cfg = S3ClientConfig(force_path_style=True)
    uri = f"s3://{bucket}/train/"
    mapped = S3MapDataset.from_prefix(
        uri,
        region="us-east-1",
        endpoint=server.endpoint + "/s3",  # the CRT client keeps the endpoint's path
        s3client_config=cfg,
        transform=lambda o: (o.key, o.read()),
    )
    assert len(mapped) == len(samples)
    assert dict(mapped[i] for i in range(len(mapped))) == samples
    iterable = S3IterableDataset.from_prefix(
        uri,
        region="us-east-1",
        endpoint=server.endpoint,
        s3client_config=cfg,
        transform=lambda o: (o.key, len(o.read())),
    )
    loader = torch.utils.data.DataLoader(iterable, batch_size=8, num_workers=0)
    seen = {k: n for keys, sizes in loader for k, n in zip(keys, sizes.tolist(), strict=True)}
    assert seen == {k: len(v) for k, v in samples.items()}
    checkpoint = S3Checkpoint(region="us-east-1", endpoint=server.endpoint, s3client_config=cfg)
    state = {
        "w": torch.arange(3 * MiB, dtype=torch.float32)
    }  # 12 MiB: written as a multipart upload
    with checkpoint.writer(f"s3://{bucket}/ckpt/model.pt") as w:
        torch.save(state, w)
    with checkpoint.reader(f"s3://{bucket}/ckpt/model.pt") as r:
        loaded = torch.load(r, weights_only=True)
    assert torch.equal(loaded["w"], state["w"])


def test_litdata_dataset_written_through_s3(
    server: LocalServer, s3: Any, bucket: str, tmp_path: Path
) -> None:
    import litdata as ld

    options = {"endpoint_url": server.endpoint + "/s3"}
    # Workers are spawned processes: the sample function must import by name there (a builtin);
    # sample k is bytes(k), k zero bytes. optimize() installs a SIGINT handler that ends the
    # process with exit code 0 and never restores it: put pytest's back, or a later Ctrl-C test
    # (tests/unit/sdk/test_native_http.py) ends the whole run "successfully".
    sigint = signal.getsignal(signal.SIGINT)
    try:
        ld.optimize(
            fn=bytes,
            inputs=list(range(1, 61)),
            output_dir=f"s3://{bucket}/ds",
            chunk_bytes="4KB",
            num_workers=1,
            storage_options=options,
            mode="overwrite",
        )
    finally:
        signal.signal(signal.SIGINT, sigint)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="ds/")["Contents"]]
    assert "ds/index.json" in keys and any(k.endswith(".bin") for k in keys)
    ds = ld.StreamingDataset(
        f"s3://{bucket}/ds", storage_options=options, cache_dir=str(tmp_path / "cache")
    )
    assert len(ds) == 60
    # Random access makes litdata build a boto3 client per read (~0.2 s each): a few samples.
    assert [ds[i] for i in (0, 29, 59)] == [bytes(1), bytes(30), bytes(60)]
    assert sorted(len(item) for item in ds) == list(range(1, 61))
