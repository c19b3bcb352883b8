"""Wire types: msgpack list pages, flags, bucket paths, cluster map placement."""

from __future__ import annotations

import msgspec
import pytest
import requests

from aistore._internal.codec import decode_response
from aistore._internal.hrw import xoshiro256_hash, xxh64
from aistore.sdk.errors import NoTargetError
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.sdk.types import (
    BucketEntry,
    BucketList,
    BucketModel,
    JobArgs,
    ListObjectsMsg,
    NetInfo,
    Smap,
    Snode,
)


def _response(body: bytes, content_type: str) -> requests.Response:
    resp = requests.Response()
    resp.status_code = 200
    resp._content = body
    resp.headers["Content-Type"] = content_type
    return resp


def test_msgpack_page_decodes_with_exact_field_names_and_ignores_unknown_keys() -> None:
    page = {
        "UUID": "lso-1",
        "ContinuationToken": "b.txt",
        "Flags": 0,
        "Entries": [
            {"n": "a.txt", "cs": "abc", "a": "02 Jan 06 15:04 UTC", "v": "1", "s": 5, "f": 64},
            {"n": "b.txt", "s": 7, "c": 1, "f": 64 | 8192, "m": "k=v", "t": "t[x]"},
        ],
    }
    resp = _response(msgspec.msgpack.encode(page), "application/msgpack")
    result = decode_response(BucketList, resp)
    assert isinstance(result, BucketList)
    assert (result.uuid, result.continuation_token, result.flags) == ("lso-1", "b.txt", 0)
    a, b = result.entries
    assert (a.name, a.checksum, a.atime, a.version, a.size) == (
        "a.txt",
        "abc",
        "02 Jan 06 15:04 UTC",
        "1",
        5,
    )
    assert (b.name, b.size, b.copies, b.location) == ("b.txt", 7, 1, "t[x]")
    assert a.is_cached() and b.is_cached() and a.is_ok()
    assert a.object is None


def test_page_without_entries_and_missing_required_key() -> None:
    page = msgspec.msgpack.encode({"UUID": "u", "ContinuationToken": "", "Flags": 0})
    assert decode_response(BucketList, _response(page, "application/msgpack")).entries == []
    bad = msgspec.msgpack.encode({"UUID": "u", "Flags": 0})
    with pytest.raises(msgspec.ValidationError):
        decode_response(BucketList, _response(bad, "application/msgpack"))


def test_json_goes_through_pydantic() -> None:
    body = b'[{"name":"b","provider":"ais","namespace":{"uuid":"","name":""}}]'
    buckets = decode_response(list[BucketModel], _response(body, "application/json"))
    assert buckets[0].name == "b" and buckets[0].get_path() == "ais/@#/b/"


def test_entry_flags_and_props() -> None:
    entry = BucketEntry(n="x", cs="ff", a="t", v="2", t="loc", s=9, c=2, f=1)
    assert not entry.is_cached()
    assert not entry.is_ok()
    props = entry.generate_object_props()
    assert (props.name, props.size, props.checksum_value, props.obj_version) == ("x", 9, "ff", "2")
    assert (props.location, props.mirror_copies, props.access_time) == ("loc", 2, "t")


def test_list_objects_msg_wire_form() -> None:
    msg = ListObjectsMsg(
        prefix="p/",
        page_size=10,
        uuid="",
        props="name,size",
        continuation_token="",
        flags=[ListObjectFlag.NAME_ONLY, ListObjectFlag.NO_DIRS],
        target="",
    )
    assert msg.as_dict() == {
        "prefix": "p/",
        "pagesize": 10,
        "uuid": "",
        "props": "name,size",
        "continuation_token": "",
        "flags": str((1 << 4) | (1 << 13)),
        "target": "",
    }
    msg.start_after = "p/m"
    assert msg.as_dict()["start_after"] == "p/m"


def test_flags_are_bit_positions() -> None:
    assert ListObjectFlag.join_flags([]) == 0
    assert ListObjectFlag.join_flags([ListObjectFlag.NOT_CACHED, ListObjectFlag.NAME_ONLY]) == 528
    assert ListObjectFlag.NBI.value == 15
    assert [f.value for f in ListObjectFlag] == list(range(16))


def test_bucket_paths() -> None:
    assert BucketModel(name="b", provider="ais").get_path() == "ais/@#/b/"
    ns = Namespace(uuid="u1", name="ns1")
    assert BucketModel(name="b", provider="aws", namespace=ns).get_path() == "aws/@u1#ns1/b/"
    assert BucketModel(name="b", provider="ais").as_dict() == {"name": "b", "provider": "ais"}


def test_job_args_wire_form() -> None:
    args = JobArgs(id="j1", kind="copy-bck", bucket=BucketModel(name="b", provider="ais"))
    wire = args.as_dict()
    assert wire["ID"] == "j1" and wire["Kind"] == "copy-bck" and wire["Buckets"] is None
    assert wire["Bck"]["name"] == "b"


def test_xxh64_known_vectors() -> None:
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"abc") == 0x44BC2CF5AD770999
    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1
    # Cross-checked with the reference C implementation (python-xxhash).
    assert xxh64(b"ais/@#/b/o", 1103515245) == 12646261857258225564


def test_xoshiro_matches_cluster_hash() -> None:
    # Values of the official SDK's implementation of the cluster's mixing function.
    assert xoshiro256_hash(0) == 1905207664160064169
    assert xoshiro256_hash(12345) == 3238892367291484634
    assert xoshiro256_hash(2**64 - 1) == 10227601306713020730


def _node(tid: str, digest: int, flags: int = 0) -> Snode:
    return Snode(
        daemon_id=tid,
        daemon_type="target",
        public_net=NetInfo(direct_url=f"http://{tid}:1"),
        id_digest=digest,
        flags=flags,
    )


def test_hrw_picks_max_weight_and_skips_maintenance() -> None:
    proxy = Snode(daemon_id="p", daemon_type="proxy")
    nodes = {f"t{i}": _node(f"t{i}", xxh64(f"t{i}".encode())) for i in range(5)}
    smap = Smap(tmap=nodes, pmap={}, proxy_si=proxy, version="3")  # type: ignore[arg-type]
    assert smap.version == 3
    uname = "ais/@#/b/obj"
    digest = xxh64(uname.encode(), 1103515245)
    best = max(nodes.values(), key=lambda n: xoshiro256_hash(n.id_digest ^ digest))
    assert smap.get_target_for_object(uname) is best
    maint = dict(nodes)
    maint[best.daemon_id] = _node(best.daemon_id, best.id_digest, flags=1 << 2)
    other = Smap(tmap=maint, pmap={}, proxy_si=proxy)
    assert other.get_target_for_object(uname).daemon_id != best.daemon_id
    with pytest.raises(NoTargetError):
        Smap(tmap={}, pmap={}, proxy_si=proxy).get_target_for_object(uname)
