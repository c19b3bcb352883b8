"""Core data-path calls of the official SDK against our server; run by test_official_sdk.py in the
official SDK's venv (see official_sdk.run_script).

argv: endpoint, run tag (unique per run), name of a bucket that already exists with chunk props
(objsize_limit/chunk_size given as argv[4]/argv[5], in bytes).

Every check runs on its own; the JSON printed last maps each check's name to "ok" or the error,
so one failure does not hide the others.
"""

import hashlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable

import xxhash

import aistore
from aistore import Client
from aistore.sdk import ListObjectFlag
from aistore.sdk.errors import (
    AISError,
    ErrBckAlreadyExists,
    ErrBckNotFound,
    ErrObjNotFound,
)
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer

ENDPOINT, TAG, CHUNKED_BUCKET = sys.argv[1], sys.argv[2], sys.argv[3]
CHUNK_LIMIT, CHUNK_SIZE = int(sys.argv[4]), int(sys.argv[5])

results: dict[str, str] = {}


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=6)
    return fn


def expect_raises(exc: type[BaseException], fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except exc as e:
        return e
    raise AssertionError(f"expected {exc.__name__}")


def xxh64(data: bytes) -> str:
    """AIS "xxhash" object checksum: XXH64, seed 0, 16 hex digits (OneOfOne xxhash.New64)."""
    return xxhash.xxh64(data).hexdigest()


def payload(size: int, seed: int) -> bytes:
    out = bytearray()
    block = hashlib.sha256(seed.to_bytes(8, "little")).digest()
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


client = Client(ENDPOINT)
bck_name = f"compat-{TAG}"
bucket = client.bucket(bck_name)
chunked = client.bucket(CHUNKED_BUCKET)
small = {f"dir/a{i:02d}": payload(100 + i, i) for i in range(7)} | {"other/z": b"zzz"}
big = payload(CHUNK_LIMIT * 4 + 123, 99)  # stored as chunks: CHUNK_LIMIT <= size
file_data = payload(300_000, 7)


@check
def cluster_info() -> None:
    smap = client.cluster().get_info()
    assert smap.tmap and smap.pmap, smap
    assert smap.uuid, "smap has no uuid"
    assert smap.proxy_si.public_net.direct_url, "primary has no direct_url"
    assert client.cluster().get_primary_url() == smap.proxy_si.public_net.direct_url


@check
def cluster_is_ready() -> None:
    assert client.cluster().is_ready() is True


@check
def bucket_create() -> None:
    assert bucket.create() is bucket
    bucket.create(exist_ok=True)
    expect_raises(ErrBckAlreadyExists, bucket.create)


@check
def bucket_head() -> None:
    headers = bucket.head()
    assert "Ais-Bucket-Props" in headers, dict(headers)


@check
def list_buckets() -> None:
    names = {b.name for b in client.cluster().list_buckets()}
    assert {bck_name, CHUNKED_BUCKET} <= names, names


@check
def put_content() -> None:
    for name, data in small.items():
        resp = bucket.object(name).get_writer().put_content(data)
        assert resp.status_code == 200, resp.status_code


@check
def put_file() -> None:
    with tempfile.NamedTemporaryFile() as f:
        f.write(file_data)
        f.flush()
        bucket.object("file.bin").get_writer().put_file(f.name)
    assert bucket.object("file.bin").get_reader().read_all() == file_data


@check
def put_chunked() -> None:
    chunked.object("big").get_writer().put_content(big)


@check
def list_objects_paging() -> None:
    expected = sorted([*small, "file.bin"])
    names, token, uuid, sizes = [], "", "", []
    while True:
        page = bucket.list_objects(page_size=4, uuid=uuid, continuation_token=token)
        assert page.uuid, "list-objects reply has an empty UUID"
        names += [e.name for e in page.entries]
        sizes.append(len(page.entries))
        uuid, token = page.uuid, page.continuation_token
        if not token:
            break
        assert len(sizes) < 20, "paging does not end"
    assert names == expected, names
    assert sizes == [4, 4, 1], sizes


@check
def list_objects_prefix_props() -> None:
    page = bucket.list_objects(prefix="dir/", props="name,size,checksum,version,atime")
    assert [e.name for e in page.entries] == sorted(n for n in small if n.startswith("dir/"))
    assert page.continuation_token == ""
    for e in page.entries:
        assert e.size == len(small[e.name]), (e.name, e.size)
        assert e.checksum == xxh64(small[e.name]), e.name
        assert e.version, e.name
        assert e.is_ok() and e.is_cached(), (e.name, e.flags)


@check
def list_objects_iter() -> None:
    names = [e.name for e in bucket.list_objects_iter(prefix="dir/", page_size=2)]
    assert names == sorted(n for n in small if n.startswith("dir/")), names


@check
def list_all_objects() -> None:
    entries = bucket.list_all_objects(page_size=2, props="name,size")
    assert [e.name for e in entries] == sorted([*small, "file.bin"])
    sizes = {e.name: e.size for e in entries}
    assert sizes["file.bin"] == len(file_data) and sizes["other/z"] == 3, sizes
    objs = list(bucket.list_all_objects_iter(prefix="other/"))
    assert [o.name for o in objs] == ["other/z"]


@check
def list_no_recursion() -> None:
    # one level: objects there and one entry per virtual directory (flag EntryIsDir, 256)
    nr = [ListObjectFlag.NO_RECURSION]
    top = bucket.list_all_objects(flags=nr)
    assert [(e.name, e.flags & 256) for e in top] == [
        ("dir/", 256),
        ("file.bin", 0),
        ("other/", 256),
    ], [(e.name, e.flags) for e in top]
    assert [e.name for e in bucket.list_objects_iter(flags=nr, page_size=1)] == [
        "dir/",
        "file.bin",
        "other/",
    ]
    inside = [e.name for e in bucket.list_all_objects(prefix="dir/", flags=nr, page_size=3)]
    assert inside == sorted(n for n in small if n.startswith("dir/")), inside
    no_dirs = bucket.list_all_objects(flags=[*nr, ListObjectFlag.NO_DIRS])
    assert [e.name for e in no_dirs] == ["file.bin"]


@check
def list_name_only() -> None:
    flags = [ListObjectFlag.NAME_ONLY, ListObjectFlag.CACHED]
    entries = bucket.list_all_objects(prefix="dir/", props="name,size", flags=flags)
    assert [e.name for e in entries] == sorted(n for n in small if n.startswith("dir/"))
    assert all(e.size == 0 and e.is_cached() for e in entries), [(e.size, e.flags) for e in entries]


@check
def object_head_props() -> None:
    obj = bucket.object("dir/a03")
    props = obj.head()
    assert props.size == len(small["dir/a03"]), props.size
    assert props.present, "Ais-Present missing"
    full = obj.props
    assert full.checksum_type == "xxhash2", full.checksum_type
    assert full.checksum_value == xxh64(small["dir/a03"])
    assert full.obj_version, "no version"
    assert full.access_time, "no atime"
    assert full.chunks is None, "a monolithic object reports chunks"
    bucket.object("dir/a03").get_writer().put_content(small["dir/a03"] + b"!")
    assert obj.props.obj_version != full.obj_version, "version did not change on overwrite"
    bucket.object("dir/a03").get_writer().put_content(small["dir/a03"])


@check
def chunked_head() -> None:
    props = chunked.object("big").head("chunked")
    assert props.size == len(big), props.size
    assert props.chunks is not None, "no chunk headers for a chunked object"
    want = -(-len(big) // CHUNK_SIZE)
    assert props.chunks.chunk_count == want, (props.chunks.chunk_count, want)
    assert props.chunks.max_chunk_size == CHUNK_SIZE, props.chunks.max_chunk_size
    entries = chunked.list_objects(props="name,size").entries
    assert [e.name for e in entries] == ["big"] and entries[0].flags & 8192, entries


@check
def get_read_all() -> None:
    for name, data in small.items():
        assert bucket.object(name).get_reader().read_all() == data, name
    reader = chunked.object("big").get_reader()
    assert reader.read_all() == big
    assert reader.attributes.size == len(big)


@check
def get_byte_range() -> None:
    obj = chunked.object("big")
    n = len(big)
    cases = {
        "bytes=0-499": big[:500],
        f"bytes={CHUNK_SIZE - 10}-{CHUNK_SIZE + 9}": big[CHUNK_SIZE - 10 : CHUNK_SIZE + 10],
        f"bytes={n - 1000}-": big[-1000:],
        "bytes=-777": big[-777:],
    }
    for rng, want in cases.items():
        assert obj.get_reader(byte_range=rng).read_all() == want, rng


@check
def get_iteration() -> None:
    chunks = list(chunked.object("big").get_reader(chunk_size=10_000))
    assert b"".join(chunks) == big
    assert max(len(c) for c in chunks) <= 10_000
    assert b"".join(bucket.object("file.bin").get_reader()) == file_data


@check
def get_raw() -> None:
    assert bucket.object("other/z").get_reader().raw().read() == b"zzz"


@check
def get_as_file() -> None:
    with chunked.object("big").get_reader().as_file() as f:
        head = f.read(1000)
        rest = f.read()
    assert head + rest == big


@check
def get_parallel_read_all() -> None:
    result = chunked.object("big").get_reader(num_workers=4).read_all()
    assert isinstance(result, ParallelBuffer), type(result)
    shm_path = f"/dev/shm/{result.name.lstrip('/')}"
    try:
        assert len(result) == len(big)
        assert result.buf == big
    finally:
        result.close()
    assert not os.path.exists(shm_path), "shm not unlinked"


@check
def get_parallel_iter() -> None:
    got = b"".join(chunked.object("big").get_reader(num_workers=4))
    assert got == big


@check
def multipart_upload() -> None:
    parts = [payload(150_000, 50), payload(150_000, 51), payload(1234, 52)]
    mpu = bucket.object("mpu/obj").multipart_upload().create()
    assert mpu.upload_id, "no upload id"
    for i, data in enumerate(parts, 1):
        mpu.add_part(i).put_content(data)
    mpu.complete()
    obj = bucket.object("mpu/obj")
    assert obj.get_reader().read_all() == b"".join(parts)
    props = obj.head("chunked")
    assert props.chunks is not None and props.chunks.chunk_count == 3, props.chunks
    assert props.chunks.max_chunk_size == 150_000, props.chunks
    aborted = bucket.object("mpu/aborted").multipart_upload().create()
    aborted.add_part(1).put_content(b"x" * 100)
    aborted.abort()
    expect_raises(ErrObjNotFound, bucket.object("mpu/aborted").get_reader().read_all)


@check
def delete_object() -> None:
    obj = bucket.object("other/z")
    obj.delete()
    expect_raises(ErrObjNotFound, obj.get_reader().read_all)
    expect_raises(ErrObjNotFound, obj.delete)
    assert "other/z" not in [e.name for e in bucket.list_all_objects()]


@check
def typed_errors() -> None:
    expect_raises(ErrObjNotFound, bucket.object("no/such/object").get_reader().read_all)
    err = expect_raises(AISError, bucket.object("no/such/object").head)
    assert getattr(err, "status_code", None) == 404, err
    missing = client.bucket(f"missing-{TAG}")
    expect_raises(ErrBckNotFound, missing.list_objects)
    expect_raises(ErrBckNotFound, missing.delete)
    missing.delete(missing_ok=True)
    expect_raises(ErrBckNotFound, missing.object("x").get_reader().read_all)
    expect_raises(ErrBckNotFound, lambda: missing.object("x").get_writer().put_content(b"x"))


@check
def bucket_delete() -> None:
    bucket.delete()
    assert bck_name not in {b.name for b in client.cluster().list_buckets()}
    expect_raises(ErrBckNotFound, bucket.list_objects)


print(json.dumps({"version": aistore.__version__, "checks": results}))
