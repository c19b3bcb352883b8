"""Object metadata parsed from headers."""

from __future__ import annotations

from requests.structures import CaseInsensitiveDict

from aistore.sdk.obj.object_attributes import ChunksInfo, ECInfo, ObjectAttributes
from aistore.sdk.obj.object_props import ObjectProps


def test_all_fields_from_go_canonical_headers() -> None:
    attrs = ObjectAttributes(
        CaseInsensitiveDict(
            {
                "Content-Length": "1024",
                "Ais-Checksum-Type": "xxhash",
                "Ais-Checksum-Value": "0123456789abcdef",
                "Ais-Atime": "1700000000000000000",
                "Ais-Version": "3",
                "Ais-Custom-Md": "k1=v1, k2=a=b,broken,k3=",
                "Ais-Present": "true",
                "Ais-Location": "t[abc]:mp[/data/1]",
                "Ais-Mirror-Paths": "[/a,/b]",
                "Ais-Mirror-Copies": "2",
                "Last-Modified": "Mon, 02 Jan 2006 15:04:05 GMT",
                "ETag": '"v1-abc"',
                "Ais-Chunks-Count": "4",
                "Ais-Chunks-Max-Chunk-Size": "1048576",
            }
        )
    )
    assert attrs.size == 1024
    assert (attrs.checksum_type, attrs.checksum_value) == ("xxhash", "0123456789abcdef")
    assert attrs.access_time == "1700000000000000000"
    assert attrs.obj_version == "3"
    assert attrs.custom_metadata == {"k1": "v1", "k2": "a=b", "k3": ""}
    assert attrs.present is True
    assert attrs.location == "t[abc]:mp[/data/1]"
    assert attrs.mirror_paths == ["/a", "/b"]
    assert attrs.mirror_copies == 2
    assert attrs.last_modified == "Mon, 02 Jan 2006 15:04:05 GMT"
    assert attrs.etag == "v1-abc"
    assert attrs.chunks == ChunksInfo(chunk_count=4, max_chunk_size=1048576)
    assert attrs.ec is None


def test_absent_and_malformed_headers_have_defaults() -> None:
    attrs = ObjectAttributes({"Content-Length": "abc", "ais-mirror-copies": ""})
    assert attrs.size == 0
    assert attrs.mirror_copies == 0
    assert attrs.present is False
    assert attrs.custom_metadata == {}
    assert attrs.mirror_paths == []
    assert attrs.chunks is None
    assert attrs.ec is None
    assert attrs.checksum_type == attrs.etag == attrs.last_modified == ""


def test_present_only_for_exact_true() -> None:
    assert ObjectAttributes({"ais-present": "false"}).present is False
    assert ObjectAttributes({"ais-present": "True"}).present is False


def test_ec_and_partial_chunk_info() -> None:
    attrs = ObjectAttributes(
        {
            "ais-ec-generation": "7",
            "ais-ec-data": "4",
            "ais-ec-parity": "2",
            "ais-ec-replicated": "true",
            "ais-chunks-count": "3",
        }
    )
    assert attrs.ec == ECInfo(generation=7, data_slices=4, parity_slices=2, is_ec_copy=True)
    assert attrs.chunks == ChunksInfo(chunk_count=3, max_chunk_size=0)


def test_object_props_identity() -> None:
    props = ObjectProps({"ais-bucket-name": "b", "ais-bucket-provider": "ais", "ais-name": "o"})
    assert (props.bucket_name, props.bucket_provider, props.name) == ("b", "ais", "o")
    assert ObjectProps({}).name == ""
