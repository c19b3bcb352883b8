"""ETL and dSort against our server, which has neither: every call that needs the cluster
raises the SDK's typed error for the server's refusal, never an AttributeError."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from aistore import Client
from aistore.sdk import Bucket
from aistore.sdk.dsort import DsortFramework, DsortShardsGroup, ExternalKeyMap
from aistore.sdk.errors import AISError, ErrETLNotFound
from aistore.sdk.etl import ETLConfig
from aistore.sdk.etl.etl import Etl
from aistore.sdk.multiobj import ObjectNames, ObjectRange
from aistore.sdk.types import BucketModel


def _refused(err: AISError, path: str) -> None:
    assert 400 <= err.status_code < 600
    assert path in err.req_url


def test_etl_calls_are_refused(client: Client) -> None:
    etl = client.etl("md5-etl")
    calls = [
        lambda: etl.init(image="aistorage/transformer_md5:latest", comm_type="hpull", K="v"),
        lambda: etl.view(),
        lambda: etl.start(),
        lambda: etl.stop(),
        lambda: etl.delete(),
        lambda: etl.logs(),
        lambda: etl.logs(target_id="t1"),
    ]
    for call in calls:
        with pytest.raises(AISError) as info:
            call()
        _refused(info.value, "/v1/etl")


def test_transforming_get_is_refused(client: Client, bucket: Bucket) -> None:
    """A GET naming an ETL fails as on a cluster where that ETL does not run (404 naming the
    "etl job", which the SDK raises as ErrETLNotFound); it never returns the bytes untransformed."""
    obj = bucket.object("img")
    obj.get_writer().put_content(b"raw")
    etl = ETLConfig(name="md5-etl", args={"k": "v"})
    with pytest.raises(ErrETLNotFound) as info:
        obj.get_reader(etl=etl).read_all()
    assert info.value.status_code == 404 and "etl job md5-etl" in info.value.message
    with pytest.raises(ErrETLNotFound):
        obj.get_reader(etl=etl, byte_range="bytes=0-1").read_all()
    url = obj.get_url(etl=etl)
    assert "etl_name=md5-etl" in url
    assert requests.get(url, timeout=10).status_code == 404
    assert obj.get_reader().read_all() == b"raw"


def test_etl_context_manager_swallows_the_refusal(client: Client) -> None:
    with Etl(client._request_client, "md5-etl") as etl:
        assert etl.name == "md5-etl"


def test_etl_input_is_checked_before_sending(client: Client) -> None:
    with pytest.raises(ValueError, match="too short"):
        Etl(client._request_client, "md5")
    with pytest.raises(ValueError, match="communication_type"):
        Etl(client._request_client, "md5-etl").init(image="x", comm_type="grpc")


def _framework(src: Bucket, output: ObjectRange | ExternalKeyMap) -> DsortFramework:
    in_bck = BucketModel(name=src.name, provider="ais")
    return DsortFramework(
        DsortShardsGroup(in_bck, "input", ObjectNames(["a.tar"]), ".tar"),
        DsortShardsGroup(in_bck, "output", output, ".tar"),
    )


def test_dsort_calls_are_refused(client: Client, bucket: Bucket) -> None:
    dsort = client.dsort("job-1")
    for call in (
        lambda: dsort.start(_framework(bucket, ObjectRange("out-", 0, 3))),
        dsort.get_job_info,
        dsort.abort,
        lambda: dsort.wait(timeout=5),
    ):
        with pytest.raises(AISError) as info:
            call()
        _refused(info.value, "/v1/sort")
    assert dsort.dsort_id == "job-1"


def test_dsort_key_map_is_stored_before_the_refusal(client: Client, bucket: Bucket) -> None:
    ekm = ExternalKeyMap()
    ekm["shard-%d.tar"] = ObjectNames(["a", "b"])
    with pytest.raises(AISError):
        client.dsort().start(_framework(bucket, ekm))
    assert bucket.object("ekm-file.json").get_reader().read_all() == b'{"shard-%d.tar": ["a", "b"]}'


def test_dsort_spec_file_is_sent_as_is(client: Client, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"input_bck": {"name": "x"}, "dry_run": true}')
    with pytest.raises(AISError) as info:
        client.dsort().start(spec)
    _refused(info.value, "/v1/sort")
    other = tmp_path / "spec.txt"
    other.write_text("{}")
    with pytest.raises(ValueError, match="JSON or YAML"):
        client.dsort().start(other)


def test_list_etls_is_refused(client: Client) -> None:
    with pytest.raises(AISError) as info:
        client.cluster().list_etls()
    _refused(info.value, "/v1/etl")


def test_bucket_and_group_transforms_are_refused(client: Client, bucket: Bucket) -> None:
    bucket.object("a").get_writer().put_content(b"x")
    dst = client.bucket(bucket.name + "-dst")
    calls = [
        lambda: bucket.transform("md5-etl", dst, prefix_filter="a", etl_pipeline=["to-jpeg"]),
        lambda: bucket.inspect("md5-etl"),
        lambda: bucket.objects(obj_names=["a"]).transform(dst, "md5-etl"),
        lambda: bucket.objects(obj_names=["a"]).inspect("md5-etl"),
    ]
    for call in calls:
        with pytest.raises(AISError) as info:
            call()
        assert 400 <= info.value.status_code < 600, info.value
    assert bucket.object("a").get_reader().read_all() == b"x"
