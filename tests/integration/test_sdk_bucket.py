"""Bucket calls of the SDK against the real server, paging included."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore import Client
from aistore.sdk import Bucket, ListObjectFlag
from aistore.sdk.errors import AISError, ErrBckAlreadyExists, ErrBckNotFound


def _put(bucket: Bucket, names: list[str]) -> None:
    for name in names:
        bucket.object(name).get_writer().put_content(name.encode())


def test_create_delete_head(client: Client) -> None:
    bck = client.bucket(f"life-{uuid.uuid4().hex[:8]}")
    assert bck.create() is bck
    with pytest.raises(ErrBckAlreadyExists):
        bck.create()
    bck.create(exist_ok=True)
    props = json.loads(bck.head()["Ais-Bucket-Props"])
    assert props["provider"] == "ais"
    bck.delete()
    with pytest.raises(ErrBckNotFound):
        bck.delete()
    bck.delete(missing_ok=True)
    with pytest.raises(AISError) as info:
        bck.head()
    assert info.value.status_code == 404


def test_missing_bucket_errors(client: Client) -> None:
    missing = client.bucket(f"missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(ErrBckNotFound):
        missing.list_objects()
    with pytest.raises(ErrBckNotFound):
        missing.object("o").get_writer().put_content(b"x")


def test_list_page_fields(bucket: Bucket) -> None:
    _put(bucket, ["a/1", "a/2", "b/1"])
    page = bucket.list_objects(page_size=2)
    assert page.uuid != ""
    assert [e.name for e in page.entries] == ["a/1", "a/2"]
    assert page.continuation_token != ""
    rest = bucket.list_objects(
        page_size=2, uuid=page.uuid, continuation_token=page.continuation_token
    )
    assert [e.name for e in rest.entries] == ["b/1"]
    assert rest.continuation_token == ""
    entry = page.entries[0]
    assert entry.size == 3 and entry.is_cached() and entry.is_ok()
    assert entry.object.name == "a/1"
    assert entry.object.get_reader().read_all() == b"a/1"


def test_list_prefix_props_start_after_flags(bucket: Bucket) -> None:
    names = ["x/1", "x/2", "x/3", "y/1"]
    _put(bucket, names)
    assert [e.name for e in bucket.list_all_objects(prefix="x/")] == ["x/1", "x/2", "x/3"]
    assert [e.name for e in bucket.list_all_objects(start_after="x/2")] == ["x/3", "y/1"]
    full = bucket.list_all_objects(props="name,size,version,checksum,atime")
    assert all(e.version == "1" and e.checksum and e.atime for e in full)
    names_only = bucket.list_all_objects(flags=[ListObjectFlag.NAME_ONLY])
    assert [e.name for e in names_only] == names
    objs = list(bucket.list_all_objects_iter(prefix="y/"))
    assert [o.name for o in objs] == ["y/1"]
    assert objs[0].props_cached is not None and objs[0].props_cached.size == 3
    assert [e.name for e in bucket.list_objects_iter(prefix="x/", page_size=1)] == names[:3]


_NAME = st.text(alphabet=st.sampled_from("abcXYZ019-_./ é"), min_size=1, max_size=12).filter(
    lambda n: (
        not n.endswith("/")
        and not n.startswith("/")
        and ".." not in n.split("/")
        and "." not in n.split("/")
        and "//" not in n
    )
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(names=st.sets(_NAME, max_size=30), page_size=st.integers(min_value=1, max_value=12))
def test_paging_returns_every_object_once_in_order(
    client: Client, names: set[str], page_size: int
) -> None:
    bck = client.bucket(f"page-{uuid.uuid4().hex[:10]}").create()
    try:
        _put(bck, sorted(names))
        listed = [e.name for e in bck.list_objects_iter(page_size=page_size)]
        assert listed == sorted(names)
        assert [e.name for e in bck.list_all_objects(page_size=page_size)] == listed
    finally:
        bck.delete(missing_ok=True)
