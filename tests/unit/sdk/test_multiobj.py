"""ObjectGroup selections and brace expansion, without a server."""

from __future__ import annotations

from datetime import timezone
from typing import Any

import pytest

from aistore.sdk.bucket import Bucket
from aistore.sdk.errors import InvalidObjectRangeIndex
from aistore.sdk.job import _parse_time
from aistore.sdk.multiobj import ObjectGroup, ObjectNames, ObjectRange, ObjectTemplate
from aistore.sdk.types import ArchiveMultiObj, BucketModel, CopyBckMsg, TCBckMsg, TCMultiObj
from aistore.sdk.utils import expand_braces


@pytest.mark.parametrize(
    ("template", "want"),
    [
        ("a{1..3}", ["a1", "a2", "a3"]),
        ("{01..03}", ["01", "02", "03"]),
        ("x{0..10..5}y", ["x0y", "x5y", "x10y"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{a,b}-{1,2}", ["a-1", "a-2", "b-1", "b-2"]),
        ("n{a,b{1,2}}", ["na", "nb1", "nb2"]),
        ("{a..c}", ["a", "b", "c"]),
        ("plain", ["plain"]),
        ("lit{x}", ["lit{x}"]),
        (r"esc\{1,2\}", ["esc{1,2}"]),
    ],
)
def test_expand_braces(template: str, want: list[str]) -> None:
    assert list(expand_braces(template)) == want


def test_object_range() -> None:
    r = ObjectRange("img-", 8, 10, pad_width=3, suffix=".jpg")
    assert str(r) == "img-{008..010..1}.jpg"
    assert list(r) == ["img-008.jpg", "img-009.jpg", "img-010.jpg"]
    assert r.get_value() == {"template": "img-{008..010..1}.jpg"}
    assert ObjectRange("prefix/").get_value() == {"template": "prefix/"}
    assert str(ObjectRange.from_string("s-{000..099..3}.tar")) == "s-{000..099..3}.tar"
    with pytest.raises(InvalidObjectRangeIndex):
        ObjectRange("x", 5, 1)
    with pytest.raises(InvalidObjectRangeIndex):
        ObjectRange("x", 1)
    with pytest.raises(InvalidObjectRangeIndex):
        ObjectRange("x", 100, 200, pad_width=2)
    with pytest.raises(ValueError):
        ObjectRange("x", suffix=".y")
    with pytest.raises(RuntimeError):
        list(ObjectRange("x"))
    with pytest.raises(ValueError):
        ObjectRange.from_string("no-range")


def test_collections() -> None:
    assert ObjectNames(["a", "b"]).get_value() == {"objnames": ["a", "b"]}
    assert list(ObjectTemplate("t-{0..1}")) == ["t-0", "t-1"]


def test_object_group_selection_rules() -> None:
    bck = Bucket("b")
    with pytest.raises(ValueError, match="one and only one"):
        ObjectGroup(bck)
    with pytest.raises(ValueError, match="one and only one"):
        ObjectGroup(bck, obj_names=["a"], obj_template="b")
    with pytest.raises(ValueError, match="must not be empty"):
        ObjectGroup(bck, obj_template="")
    with pytest.raises(TypeError):
        ObjectGroup(bck, obj_range="x{0..1}")  # type: ignore[arg-type]
    assert ObjectGroup(bck, obj_template="s{0..2}").list_names() == ["s0", "s1", "s2"]


def test_wire_messages() -> None:
    copy = CopyBckMsg(prepend="p/", dry_run=True, force=False, latest=False, sync=False)
    value: dict[str, Any] = TCMultiObj(
        to_bck=BucketModel(name="d", provider="ais"),
        tc_msg=TCBckMsg(copy_msg=copy),
        object_selection={"template": "a{0..1}"},
        continue_on_err=True,
        num_workers=2,
    ).as_dict()
    assert value == {
        "template": "a{0..1}",
        "prefix": "",
        "prepend": "p/",
        "dry_run": True,
        "force": False,
        "latest-ver": False,
        "synchronize": False,
        "tobck": {"name": "d", "provider": "ais", "namespace": None},
        "coer": True,
        "num-workers": 2,
    }
    arch = ArchiveMultiObj(
        archive_name="s.tgz",
        to_bck=BucketModel(name="b", provider="ais"),
        object_selection={"objnames": ["x"]},
        mime="tgz",
    ).as_dict()
    assert arch["archname"] == "s.tgz" and arch["mime"] == "tgz" and arch["objnames"] == ["x"]
    assert arch["isbn"] is False and arch["aate"] is False and arch["coer"] is False


def test_go_times_parse_with_nanoseconds() -> None:
    t = _parse_time("2026-01-02T03:04:05.123456789Z")
    assert t.tzinfo is not None and t.utcoffset() == timezone.utc.utcoffset(None)
    assert (t.year, t.second, t.microsecond) == (2026, 5, 123456)
    assert _parse_time("2026-01-02T03:04:05Z").microsecond == 0
    assert _parse_time("2026-01-02T03:04:05.5+02:00").utcoffset() is not None
