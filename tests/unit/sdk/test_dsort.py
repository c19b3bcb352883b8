"""dSort specifications, built in code or read from JSON/YAML files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistore.sdk.dsort import DsortAlgorithm, DsortFramework, DsortShardsGroup, ExternalKeyMap
from aistore.sdk.dsort.types import JobInfo
from aistore.sdk.multiobj import ObjectNames
from aistore.sdk.types import BucketModel

SPEC = {
    "input_bck": {"name": "src", "provider": "ais"},
    "input_format": {"template": "in-{0..9}"},
    "input_extension": ".tar",
    "output_bck": {"name": "dst", "provider": "ais"},
    "output_format": "out-{0..3}",
    "output_extension": ".tgz",
    "output_shard_size": "10MiB",
    "algorithm": {"kind": "shuffle", "seed": "7"},
}


def test_spec_round_trip_through_json(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    spec = DsortFramework.from_file(path).to_spec()
    assert spec["input_bck"]["name"] == "src" and spec["output_bck"]["name"] == "dst"
    assert spec["input_format"] == {"template": "in-{0..9..1}"}
    assert spec["output_format"] == "out-{0..3..1}"
    assert spec["output_extension"] == ".tgz" and spec["output_shard_size"] == "10MiB"
    assert spec["algorithm"] == {"kind": "shuffle", "decreasing": False, "seed": "7"}


def test_spec_from_yaml(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**SPEC, "input_format": {"objnames": ["a.tar", "b.tar"]}}))
    fw = DsortFramework.from_file(path)
    assert fw.to_spec()["input_format"] == {"objnames": ["a.tar", "b.tar"]}


def test_bad_specs(tmp_path: Path) -> None:
    bad = tmp_path / "spec.json"
    bad.write_text(json.dumps({**SPEC, "input_format": "in-{0..9}"}))
    with pytest.raises(ValueError, match="input_format"):
        DsortFramework.from_file(bad)
    with pytest.raises(ValueError, match="JSON or YAML"):
        DsortFramework.from_file(tmp_path / "spec.toml")
    bck = BucketModel(name="b", provider="ais")
    with pytest.raises(ValueError, match="role"):
        DsortShardsGroup(bck, "middle", ObjectNames(["a"]), ".tar")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="output role"):
        DsortShardsGroup(bck, "output", ObjectNames(["a"]), ".tar")
    with pytest.raises(ValueError, match="required"):
        DsortAlgorithm(kind="content", extension=".cls")
    with pytest.raises(ValueError, match="only allowed"):
        DsortAlgorithm(kind="alphanumeric", extension=".cls")


def test_key_map_accepts_only_names() -> None:
    ekm = ExternalKeyMap()
    with pytest.raises(TypeError):
        ekm["x"] = ["a"]  # type: ignore[assignment]
    ekm["x-%d"] = ObjectNames(["a"])
    group = DsortShardsGroup(BucketModel(name="b", provider="ais"), "output", ekm, ".tar")
    assert group.as_dict()["output_format"] == ""


def test_job_info_reads_ais_field_names() -> None:
    phase = {"started_time": "", "end_time": "", "elapsed": 1, "running": False, "finished": True}
    doc = {
        "id": "j",
        "src-bck": {"name": "a", "provider": "ais"},
        "dst-bck": {"name": "b", "provider": "ais"},
        "loc-objs": "3",
        "loc-bytes": "30",
        "aborted": False,
        "archived": True,
        "Metrics": {
            "local_extraction": {
                **phase, "total_count": "1", "extracted_count": "1", "extracted_size": "1",
                "extracted_record_count": "1", "extracted_to_disk_count": "0",
                "extracted_to_disk_size": "0",
            },
            "meta_sorting": phase,
            "shard_creation": {
                **phase, "to_create": "1", "created_count": "1", "moved_shard_count": "0",
            },
        },
    }  # fmt: skip
    info = JobInfo.model_validate(doc)
    assert info.src_bck.name == "a" and info.objects == "3"
    assert info.metrics.shard_creation.finished
