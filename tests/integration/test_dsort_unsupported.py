"""dSort against our server, which has none: every call that needs the cluster raises the SDK's
typed error for the server's refusal, never an AttributeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistore import Client
from aistore.sdk import Bucket
from aistore.sdk.dsort import DsortFramework, DsortShardsGroup, ExternalKeyMap
from aistore.sdk.errors import AISError
from aistore.sdk.multiobj import ObjectNames, ObjectRange
from aistore.sdk.types import BucketModel


def _refused(err: AISError, path: str) -> None:
    assert 400 <= err.status_code < 600
    assert path in err.req_url


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
