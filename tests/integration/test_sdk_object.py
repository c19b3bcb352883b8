"""Object calls of the SDK against the real server: reads, ranges, writers, errors."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore import Client
from aistore.sdk import Bucket
from aistore.sdk.errors import AISError, ErrObjNotFound

DATA = np.random.default_rng(7).integers(0, 256, 3 * (1 << 20) + 12345, dtype=np.uint8).tobytes()


@pytest.fixture
def big(bucket: Bucket):  # type: ignore[no-untyped-def]
    obj = bucket.object("data/big.bin")
    obj.get_writer().put_content(DATA)
    return obj


@pytest.mark.parametrize("name", ["plain", "dir/sub/x.bin", "with space & é #?%.txt", ".hidden"])
def test_round_trip_names(bucket: Bucket, name: str) -> None:
    obj = bucket.object(name)
    obj.get_writer().put_content(name.encode() * 3)
    assert obj.get_reader().read_all() == name.encode() * 3
    assert [e.name for e in bucket.list_all_objects()] == [name]
    assert obj.head().name == name


def test_head_props(big) -> None:  # type: ignore[no-untyped-def]
    props = big.head()
    assert props.size == len(DATA) and props.present
    assert big.props_cached is props
    # the default asks for name,size only, as the official SDK's and as a cluster answers it
    assert props.obj_version == "" and props.checksum_value == ""
    asked = big.head("version,checksum")
    assert asked.obj_version == "1" and len(asked.checksum_value) == 16
    full = big.props
    assert full.checksum_type == "xxhash2" and len(full.checksum_value) == 16
    assert full.obj_version == "1" and full.access_time.isdigit()
    assert full.bucket_name == big.bucket_name and full.name == big.name
    assert big.head("chunked").chunks is None


def test_read_modes(big) -> None:  # type: ignore[no-untyped-def]
    reader = big.get_reader()
    assert reader.read_all() == DATA
    assert reader.attributes.size == len(DATA)
    assert reader.head().checksum_type == "xxhash2"
    chunks = list(big.get_reader(chunk_size=1 << 20))
    assert b"".join(chunks) == DATA and max(map(len, chunks)) == 1 << 20
    raw = big.get_reader().raw()
    assert raw.read() == DATA
    sink = io.BytesIO()
    big.get_reader(writer=sink)
    assert sink.getvalue() == DATA


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise KeyError("VmRSS")


def test_large_read_all_is_exact_and_freed(bucket: Bucket) -> None:
    # 48 MiB: past the size from which the native client faults the destination's pages in on
    # a second thread while the body arrives; each result must be exact and freed once dropped.
    size = 48 << 20
    data = np.random.default_rng(11).integers(0, 256, size, dtype=np.uint8).tobytes()
    obj = bucket.object("large")
    obj.get_writer().put_content(data)
    assert obj.get_reader().read_all() == data
    before = _rss()
    for _ in range(10):
        got = obj.get_reader().read_all()
        assert type(got) is bytes and got == data
        del got
    assert _rss() - before < 2 * size  # a result kept alive would add 48 MiB per read


def test_file_reader(big) -> None:  # type: ignore[no-untyped-def]
    with big.get_reader().as_file() as f:
        assert f.read(10) == DATA[:10]
        buf = np.empty(1 << 20, dtype=np.uint8)
        assert f.readinto(buf) == 1 << 20
        assert buf.tobytes() == DATA[10 : 10 + (1 << 20)]
        assert f.read() == DATA[10 + (1 << 20) :]
        assert f.read() == b""


_SIZE = len(DATA)


@st.composite
def _ranges(draw: st.DrawFn) -> tuple[str, slice]:
    kind = draw(st.sampled_from(["closed", "open", "suffix"]))
    if kind == "suffix":
        n = draw(st.integers(min_value=1, max_value=_SIZE + 100))
        return f"bytes=-{n}", slice(max(_SIZE - n, 0), _SIZE)
    start = draw(st.integers(min_value=0, max_value=_SIZE - 1))
    if kind == "open":
        return f"bytes={start}-", slice(start, _SIZE)
    end = draw(st.integers(min_value=start, max_value=_SIZE + 100))
    return f"bytes={start}-{end}", slice(start, min(end, _SIZE - 1) + 1)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rng=_ranges())
def test_any_valid_byte_range_is_the_slice(big, rng: tuple[str, slice]) -> None:  # type: ignore[no-untyped-def]
    header, expected = rng
    reader = big.get_reader(byte_range=header)
    assert reader.read_all() == DATA[expected]
    with reader.as_file() as f:
        assert f.read() == DATA[expected]


def test_unsatisfiable_range(big) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AISError) as info:
        big.get_reader(byte_range=f"bytes={len(DATA)}-").read_all()
    assert info.value.status_code == 416


def test_missing_object(bucket: Bucket) -> None:
    obj = bucket.object("nope")
    with pytest.raises(ErrObjNotFound):
        obj.get_reader().read_all()
    with pytest.raises(ErrObjNotFound):
        obj.delete()
    with pytest.raises(AISError) as info:
        obj.head()
    assert info.value.status_code == 404
    with pytest.raises(ErrObjNotFound):
        obj.get_reader().as_file().read()


def test_overwrite_delete(bucket: Bucket) -> None:
    obj = bucket.object("v")
    obj.get_writer().put_content(b"one")
    obj.get_writer().put_content(b"two!")
    assert obj.props.obj_version == "2"
    assert obj.get_reader().read_all() == b"two!"
    obj.delete()
    assert bucket.list_all_objects() == []


def test_put_file_and_empty_object(bucket: Bucket, tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(DATA[:100_000])
    obj = bucket.object("from-file")
    obj.get_writer().put_file(path)
    assert obj.get_reader().read_all() == DATA[:100_000]
    empty = bucket.object("empty")
    empty.get_writer().put_content(b"")
    assert empty.head().size == 0
    assert empty.get_reader().read_all() == b""
    assert list(empty.get_reader()) == []
    assert empty.get_reader().as_file().read() == b""


def test_multipart_upload(bucket: Bucket) -> None:
    obj = bucket.object("mpu.bin")
    mpu = obj.multipart_upload().create()
    assert mpu.upload_id
    parts = [DATA[i : i + (1 << 20)] for i in range(0, len(DATA), 1 << 20)]
    for number, part in enumerate(parts, start=1):
        mpu.add_part(number).put_content(part)
    mpu.complete()
    assert obj.get_reader().read_all() == DATA
    chunks = obj.head("chunked").chunks
    assert chunks is not None and chunks.chunk_count == len(parts)
    aborted = bucket.object("aborted").multipart_upload().create()
    aborted.add_part(1).put_content(b"x")
    aborted.abort()
    assert [e.name for e in bucket.list_all_objects()] == ["mpu.bin"]


def test_urls(client: Client, bucket: Bucket) -> None:
    obj = bucket.object("u/x y.txt")
    obj.get_writer().put_content(b"via url")
    assert requests.get(obj.get_url(), timeout=10).content == b"via url"
    same = client.get_object_from_url(obj.get_semantic_url())
    assert same.get_reader().read_all() == b"via url"
    assert obj.uname == f"ais/@#/{bucket.name}/u/x y.txt"


def test_copy(client: Client, bucket: Bucket) -> None:
    src = bucket.object("src")
    src.get_writer().put_content(b"copied")
    dst = bucket.object("dst/copy")
    src.copy(dst)
    assert dst.get_reader().read_all() == b"copied"


def test_append_and_file_writer(bucket: Bucket) -> None:
    obj = bucket.object("appended")
    writer = obj.get_writer()
    handle = writer.append_content(b"ab")
    handle = writer.append_content(b"cd", handle=handle)
    writer.append_content(b"", handle=handle, flush=True)
    assert obj.get_reader().read_all() == b"abcd"
    with writer.as_file("w") as f:
        f.write(b"new ")
        f.write(b"content")
    assert obj.get_reader().read_all() == b"new content"
    with writer.as_file("a") as f:
        f.write(b", appended")
    assert obj.get_reader().read_all() == b"new content, appended"


def test_append_keeps_existing_content(bucket: Bucket) -> None:
    """As on AIS, an append to an existing object starts from its content (nothing is lost), and
    the object changes only at the flush; custom metadata stays."""
    obj = bucket.object("append-existing")
    obj.get_writer().put_content(b"old|")
    obj.get_writer().set_custom_props({"k": "v"})
    writer = obj.get_writer()
    handle = writer.append_content(b"new")
    handle = writer.append_content(b"er", handle=handle)
    assert obj.get_reader().read_all() == b"old|"
    writer.append_content(b"", handle=handle, flush=True)
    assert obj.get_reader().read_all() == b"old|newer"
    assert obj.props.size == len(b"old|newer") and obj.props.custom_metadata == {"k": "v"}


def test_custom_metadata(bucket: Bucket) -> None:
    obj = bucket.object("md")
    obj.get_writer().put_content(b"x")
    obj.get_writer().set_custom_props({"a": "1", "b": "2"})
    obj.get_writer().set_custom_props({"c": "3"})
    assert obj.props.custom_metadata == {"a": "1", "b": "2", "c": "3"}
    obj.get_writer().set_custom_props({"d": "4"}, replace_existing=True)
    assert obj.props.custom_metadata == {"d": "4"}
