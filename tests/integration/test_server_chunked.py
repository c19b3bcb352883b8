"""Chunked storage and checksums against the real server, checked on the wire and on disk.

A bucket with `chunks.objsize_limit` = 1 MiB and `chunk_size` = 256 KiB stores every object of at
least 1 MiB as 256 KiB chunk files spread over all mountpaths; HEAD `props=chunked` and the list
flag 8192 report it; reads (whole and any range) are byte-exact; overwrites, rechunk jobs and
multipart uploads leave no orphan chunks. PUT checksums are the bucket's type, computed here
independently; a wrong client checksum stores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from _util import (
    ENTRY_IS_CACHED,
    ENTRY_IS_CHUNKED,
    assert_bucket_consistent,
    chunk_dirs,
    content_for,
    create_bucket,
    destroy_bucket,
    error_doc,
    list_entries,
    obj_path,
    object_files,
    read_object_meta,
    set_bprops,
    wait_job,
    wait_until,
    work_files,
    xxh64_hex,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore.sdk.client import Client
from aistore.server import LocalServer

KiB, MiB = 1 << 10, 1 << 20
CHUNK = 256 * KiB
LIMIT = 1 * MiB
CHUNK_PROPS = {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}}
# Sizes around the threshold and the chunk boundaries.
SIZES = {
    "empty": 0,
    "one": 1,
    "below-limit": LIMIT - 1,
    "at-limit": LIMIT,
    "limit-plus-1": LIMIT + 1,
    "exact-7-chunks": 7 * CHUNK,
    "odd": 3 * MiB + 12345,
    "thirteen": 12 * CHUNK + 77,
}

Hasher = Callable[[bytes], str]


def expected_chunks(size: int, chunk: int = CHUNK, limit: int = LIMIT) -> int | None:
    """Chunk count the bucket policy implies, None for monolithic objects."""
    if limit == 0 or size < limit:
        return None
    return -(-size // chunk)


@dataclass
class Bck:
    ep: str
    mps: list[Path]
    name: str

    def put(
        self, obj: str, data: bytes, headers: dict[str, str] | None = None
    ) -> requests.Response:
        return requests.put(
            self.ep + obj_path(self.name, obj), data=data, headers=headers, timeout=60
        )

    def get(self, obj: str, rng: str | None = None) -> requests.Response:
        headers = {"Range": rng} if rng else None
        return requests.get(self.ep + obj_path(self.name, obj), headers=headers, timeout=60)

    def head(self, obj: str, props: str = "chunked") -> requests.Response:
        return requests.head(self.ep + obj_path(self.name, obj) + "?props=" + props, timeout=10)

    def chunk_info(self, obj: str) -> tuple[int, int] | None:
        r = self.head(obj)
        assert r.status_code == 200, r.headers
        count = r.headers.get("Ais-Chunks-Count")
        size = r.headers.get("Ais-Chunks-Max-Chunk-Size")
        assert (count is None) == (size is None), r.headers
        return None if count is None else (int(count), int(size))  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        # Work files of other tests' in-flight uploads may exist; ours must come and go.
        self.work_before = set(work_files(self.mps))

    def new_work(self) -> set[str]:
        return set(work_files(self.mps)) - self.work_before

    def consistent(self) -> set[str]:
        wait_until(lambda: not self.new_work(), 5, "no new work files")
        return assert_bucket_consistent(self.ep, self.mps, self.name)


def new_bucket(srv: LocalServer, props: dict | None = None) -> Bck:
    name = f"chk-{uuid.uuid4().hex[:10]}"
    create_bucket(srv.endpoint, name, props)
    return Bck(srv.endpoint, srv.mountpaths, name)


@pytest.fixture
def bck(ais_server: LocalServer) -> Iterator[Bck]:
    b = new_bucket(ais_server, CHUNK_PROPS)
    yield b
    b.consistent()
    destroy_bucket(b.ep, b.name)


@pytest.fixture(scope="module")
def filled(ais_server: LocalServer) -> Iterator[Bck]:
    """A chunked bucket holding one object of every size in SIZES (read-only for the tests)."""
    b = new_bucket(ais_server, CHUNK_PROPS)
    for name, size in SIZES.items():
        assert b.put(name, content_for(name, size)).status_code == 200
    yield b
    destroy_bucket(b.ep, b.name)


# ---- layout -------------------------------------------------------------------------------------


def test_create_bck_stores_chunk_props(filled: Bck) -> None:
    r = requests.head(f"{filled.ep}/v1/buckets/{filled.name}", timeout=10)
    chunks = json.loads(r.headers["Ais-Bucket-Props"])["chunks"]
    assert chunks["objsize_limit"] == "1MiB" and chunks["chunk_size"] == "256KiB"


@pytest.mark.parametrize("name", SIZES)
def test_head_reports_chunks_exactly(filled: Bck, name: str) -> None:
    size = SIZES[name]
    n = expected_chunks(size)
    assert filled.chunk_info(name) == (None if n is None else (n, CHUNK))
    r = filled.head(name, "size")
    assert r.headers["Content-Length"] == str(size)


def test_chunk_files_on_disk(filled: Bck) -> None:
    """Chunk k is a file NNNN of exactly its size; 4+ chunks cover all 4 mountpaths."""
    files = object_files(filled.mps, filled.name)
    dirs = chunk_dirs(filled.mps, filled.name)
    chunked = {n for n, s in SIZES.items() if expected_chunks(s)}
    assert len(dirs) == len(chunked)
    for name in chunked:
        size, n = SIZES[name], expected_chunks(SIZES[name])
        uid = read_object_meta(files[name])["u"]
        cd = dirs[uid]
        assert sorted(cd.files) == list(range(1, n + 1))  # type: ignore[arg-type]
        sizes = [cd.files[i].stat().st_size for i in sorted(cd.files)]
        assert sizes == [CHUNK] * (n - 1) + [size - CHUNK * (n - 1)]  # type: ignore[operator]
        mps_used = {p.parents[4] for p in cd.files.values()}  # <mp>/ais/<bck>/%ch/<uid>/NNNN
        assert mps_used == set(filled.mps), f"{name}: chunks on {mps_used}"
        # The object file holds only metadata: no inline copy of the data.
        assert files[name].stat().st_size < 4 * KiB
    for name in set(SIZES) - chunked:
        assert files[name].stat().st_size >= SIZES[name]
    assert_bucket_consistent(filled.ep, filled.mps, filled.name)


def test_list_flags(filled: Bck) -> None:
    entries = {e["name"]: e for e in list_entries(filled.ep, filled.name, props="name,size")}
    assert set(entries) == set(SIZES)
    for name, size in SIZES.items():
        flags = entries[name]["flags"]
        assert flags & ENTRY_IS_CACHED
        assert bool(flags & ENTRY_IS_CHUNKED) == bool(expected_chunks(size)), name
        assert int(entries[name].get("size", "0")) == size


def test_list_flags_via_sdk(client: Client, filled: Bck) -> None:
    got = {e.name: e for e in client.bucket(filled.name).list_all_objects()}
    for name, size in SIZES.items():
        assert bool(got[name].flags & ENTRY_IS_CHUNKED) == bool(expected_chunks(size)), name


# ---- reads -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SIZES)
def test_get_whole(filled: Bck, name: str) -> None:
    r = filled.get(name)
    assert r.status_code == 200 and r.content == content_for(name, SIZES[name])
    assert r.headers["Ais-Checksum-Value"] == xxh64_hex(r.content)


def boundary_offsets(size: int) -> list[int]:
    out = {0, size - 1}
    for b in range(CHUNK, size, CHUNK):
        out.update({b - 1, b, b + 1})
    return sorted(o for o in out if 0 <= o < size)


@st.composite
def ranges(draw: st.DrawFn) -> tuple[str, int, int, str]:
    """(object, first, last, header): biased to start/end at or next to chunk boundaries."""
    name = draw(st.sampled_from([n for n, s in SIZES.items() if s > 0]))
    size = SIZES[name]
    pos = st.one_of(st.sampled_from(boundary_offsets(size)), st.integers(0, size - 1))
    a, b = sorted((draw(pos), draw(pos)))
    kind = draw(st.sampled_from(["closed", "open", "suffix", "past-end"]))
    if kind == "closed":
        return name, a, b, f"bytes={a}-{b}"
    if kind == "open":
        return name, a, size - 1, f"bytes={a}-"
    if kind == "suffix":
        n = size - a
        return name, a, size - 1, f"bytes=-{n}"
    return name, a, size - 1, f"bytes={a}-{size + draw(st.integers(0, 10 * MiB))}"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rng=ranges())
def test_range_reads_match_slices(filled: Bck, rng: tuple[str, int, int, str]) -> None:
    name, first, last, header = rng
    size = SIZES[name]
    r = filled.get(name, header)
    assert r.status_code == 206, r.text
    assert r.content == content_for(name, size)[first : last + 1]
    assert r.headers["Content-Range"] == f"bytes {first}-{last}/{size}"
    assert r.headers["Content-Length"] == str(last - first + 1)


# ---- overwrites ---------------------------------------------------------------------------------


def test_overwrite_between_layouts_leaves_no_orphans(bck: Bck) -> None:
    sizes = [3 * MiB, 10, 2 * MiB + 5, LIMIT - 1, LIMIT, 0, 5 * MiB]
    for version, size in enumerate(sizes, start=1):
        data = content_for(f"ow{version}", size)
        r = bck.put("obj", data)
        assert r.status_code == 200 and r.headers["Ais-Version"] == str(version)
        n = expected_chunks(size)
        assert bck.chunk_info("obj") == (None if n is None else (n, CHUNK))
        assert bck.get("obj").content == data
        # Exactly the live upload's chunk dir (or none) remains after each overwrite.
        assert len(chunk_dirs(bck.mps, bck.name)) == (1 if n else 0)
        assert bck.consistent() == {"obj"}
    assert requests.delete(bck.ep + obj_path(bck.name, "obj"), timeout=10).status_code == 200
    assert not chunk_dirs(bck.mps, bck.name)
    assert bck.consistent() == set()


def test_set_bprops_changes_layout_of_new_puts_only(ais_server: LocalServer) -> None:
    b = new_bucket(ais_server)  # default props: nothing is chunked
    try:
        data = content_for("x", 2 * MiB)
        b.put("before", data)
        assert b.chunk_info("before") is None
        set_bprops(b.ep, b.name, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "512KiB"}})
        b.put("after", data)
        assert b.chunk_info("after") == (4, 512 * KiB)
        assert b.chunk_info("before") is None
        assert b.get("before").content == data and b.get("after").content == data
        b.consistent()
    finally:
        destroy_bucket(b.ep, b.name)


def test_destroy_bucket_removes_chunks(ais_server: LocalServer) -> None:
    b = new_bucket(ais_server, CHUNK_PROPS)
    b.put("big", content_for("big", 2 * MiB))
    assert chunk_dirs(b.mps, b.name)
    destroy_bucket(b.ep, b.name)
    wait_until(lambda: not b.new_work(), 5, "work dirs empty after destroy")
    assert not any((mp / "ais" / b.name).exists() for mp in b.mps)


# ---- rechunk ------------------------------------------------------------------------------------


def rechunk(b: Bck, limit: object, chunk: object) -> requests.Response:
    msg = {"action": "rechunk", "name": "", "value": {"objsize-limit": limit, "chunk-size": chunk}}
    return requests.post(f"{b.ep}/v1/buckets/{b.name}?provider=ais", json=msg, timeout=10)


def run_rechunk(b: Bck, limit: object, chunk: object) -> None:
    r = rechunk(b, limit, chunk)
    assert r.status_code == 200, r.text
    job_id = r.text
    assert job_id and "," not in job_id and not job_id.startswith('"')
    status = wait_job(b.ep, job_id)
    assert status["kind"] == "rechunk" and not status["err"], status


def test_rechunk_both_ways(ais_server: LocalServer) -> None:
    b = new_bucket(ais_server)  # no chunk props: rechunk gets everything from its arguments
    try:
        objs = {name: content_for(name, size) for name, size in SIZES.items()}
        objs["dir/nested"] = content_for("dir/nested", 2 * MiB)
        for name, data in objs.items():
            assert b.put(name, data).status_code == 200
        before = {n: b.head(n, "checksum,version").headers for n in objs}
        assert not chunk_dirs(b.mps, b.name)

        def check(chunk: int, limit: int) -> None:
            for name, data in objs.items():
                n = expected_chunks(len(data), chunk, limit)
                assert b.chunk_info(name) == (None if n is None else (n, chunk)), name
                assert b.get(name).content == data, name
                h = b.head(name, "checksum,version").headers
                assert h["Ais-Version"] == before[name]["Ais-Version"], (
                    "rechunk is not a new version"
                )
                assert h["Ais-Checksum-Value"] == before[name]["Ais-Checksum-Value"]
            b.consistent()

        run_rechunk(b, "1MiB", "256KiB")  # monolithic -> chunked
        check(CHUNK, LIMIT)
        run_rechunk(b, 2 * MiB, 512 * KiB)  # re-chunk: another size; 1..2 MiB back to monolithic
        check(512 * KiB, 2 * MiB)
        run_rechunk(b, 0, "256KiB")  # limit 0: everything monolithic again
        check(CHUNK, 0)
        assert not chunk_dirs(b.mps, b.name)
    finally:
        destroy_bucket(b.ep, b.name)


@pytest.mark.parametrize(
    "limit,chunk,needle",
    [
        ("1MiB", 0, "chunk size"),
        ("1MiB", 100, "chunk-size"),
        ("1MiB", "6GiB", "chunk-size"),
        ("lots", "1MiB", "objsize-limit"),
    ],
)
def test_rechunk_bad_args(bck: Bck, limit: object, chunk: object, needle: str) -> None:
    bck.put("x", content_for("x", 10))
    r = rechunk(bck, limit, chunk)
    assert r.status_code == 400
    assert needle in error_doc(400, r.headers, r.content, "POST")["message"]
    assert bck.chunk_info("x") is None


def test_rechunk_missing_bucket(ais_server: LocalServer) -> None:
    b = Bck(ais_server.endpoint, ais_server.mountpaths, f"nob-{uuid.uuid4().hex[:8]}")
    r = rechunk(b, "1MiB", "256KiB")
    assert r.status_code == 404 and f"ais://{b.name}" in r.text


# ---- multipart upload ---------------------------------------------------------------------------


def test_multipart_upload_out_of_order(client: Client, bck: Bck) -> None:
    parts = {1: content_for("p1", 300 * KiB), 2: content_for("p2", 700 * KiB), 3: b"tail" * 31}
    obj = client.bucket(bck.name).object("mpu/obj.bin")
    mpu = obj.multipart_upload().create()
    assert mpu.upload_id
    for num in (3, 1, 2):
        mpu.add_part(num).put_content(parts[num])
    # In flight: parts sit in the upload's chunk dir, the object does not exist yet.
    assert bck.head("mpu/obj.bin").status_code == 404
    mpu.complete()
    whole = parts[1] + parts[2] + parts[3]
    assert obj.get_reader().read_all() == whole
    assert bck.chunk_info("mpu/obj.bin") == (3, 700 * KiB)
    h = bck.head("mpu/obj.bin", "checksum").headers
    # Upstream may report crc32c for parts that arrived out of order; ours hashes in order.
    assert h["Ais-Checksum-Type"] in ("xxhash2", "crc32c")
    if h["Ais-Checksum-Type"] == "xxhash2":
        assert h["Ais-Checksum-Value"] == xxh64_hex(whole)
    (cd,) = chunk_dirs(bck.mps, bck.name).values()
    assert [cd.files[i].stat().st_size for i in (1, 2, 3)] == [len(parts[i]) for i in (1, 2, 3)]
    for first in (0, 300 * KiB - 1, 1000 * KiB - 2, 1000 * KiB - 1):  # across part boundaries
        r = bck.get("mpu/obj.bin", f"bytes={first}-{first + 2}")
        assert r.status_code == 206 and r.content == whole[first : first + 3]
    entry = {e["name"]: e for e in list_entries(bck.ep, bck.name)}["mpu/obj.bin"]
    assert entry["flags"] & ENTRY_IS_CHUNKED


def test_multipart_abort_and_resent_part(client: Client, bck: Bck) -> None:
    obj = client.bucket(bck.name).object("mpu2")
    mpu = obj.multipart_upload().create()
    mpu.add_part(1).put_content(b"first version of part one")
    mpu.add_part(1).put_content(b"v2")  # a re-sent number replaces the part
    mpu.parts = [1]
    mpu.complete()
    assert obj.get_reader().read_all() == b"v2"
    aborted = client.bucket(bck.name).object("mpu3").multipart_upload().create()
    aborted.add_part(1).put_content(content_for("a", 100 * KiB))
    aborted.add_part(2).put_content(content_for("b", 100 * KiB))
    assert len(chunk_dirs(bck.mps, bck.name)) == 2
    aborted.abort()
    assert bck.head("mpu3").status_code == 404
    assert len(chunk_dirs(bck.mps, bck.name)) == 1  # only mpu2's
    assert bck.consistent() == {"mpu2"}


# ---- checksums ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 1000, LIMIT - 1, LIMIT, 3 * MiB + 7])
def test_put_returns_xxhash_of_content(bck: Bck, size: int) -> None:
    data = content_for("ck", size)
    r = bck.put("ck", data)
    assert r.status_code == 200
    assert r.headers["Ais-Checksum-Type"] == "xxhash2"
    assert r.headers["Ais-Checksum-Value"] == xxh64_hex(data)
    h = bck.head("ck", "checksum").headers
    assert h["Ais-Checksum-Value"] == xxh64_hex(data)
    assert bck.get("ck").headers["Ais-Checksum-Value"] == xxh64_hex(data)
    (entry,) = list_entries(bck.ep, bck.name, props="name,checksum")
    assert entry.get("checksum", "") == xxh64_hex(data)


@pytest.mark.parametrize("size", [100, 3 * MiB])
@pytest.mark.parametrize("overwrite", [False, True])
def test_bad_client_checksum_stores_nothing(bck: Bck, size: int, overwrite: bool) -> None:
    old = content_for("old", 2 * MiB)
    if overwrite:
        assert bck.put("obj", old).status_code == 200
    data = content_for("new", size)
    wrong = xxh64_hex(data + b"!")
    r = bck.put("obj", data, {"Ais-Checksum-Type": "xxhash", "Ais-Checksum-Value": wrong})
    assert r.status_code == 400
    assert "BAD DATA CHECKSUM" in error_doc(400, r.headers, r.content, "PUT")["message"]
    if overwrite:
        assert bck.get("obj").content == old
        assert bck.head("obj", "version").headers["Ais-Version"] == "1"
        assert bck.consistent() == {"obj"}
    else:
        assert bck.head("obj").status_code == 404
        assert bck.consistent() == set()
        assert not chunk_dirs(bck.mps, bck.name)


@pytest.mark.parametrize(
    "ctype,fn",
    [
        ("xxhash2", xxh64_hex),
        ("xxhash", xxh64_hex),  # the older name of the same digest
        ("md5", lambda d: hashlib.md5(d).hexdigest()),
        ("sha256", lambda d: hashlib.sha256(d).hexdigest()),
    ],
)
def test_good_client_checksum_of_any_type(bck: Bck, ctype: str, fn: Hasher) -> None:
    data = content_for("c", 2 * MiB + 3)
    r = bck.put("c", data, {"Ais-Checksum-Type": ctype, "Ais-Checksum-Value": fn(data)})
    assert r.status_code == 200, r.text
    assert r.headers["Ais-Checksum-Type"] == "xxhash2"  # stored as the bucket's type
    assert r.headers["Ais-Checksum-Value"] == xxh64_hex(data)
    r = bck.put("c2", data, {"Ais-Checksum-Type": ctype, "Ais-Checksum-Value": fn(b"other")})
    assert r.status_code == 400 and "BAD DATA CHECKSUM" in r.text
    assert bck.consistent() == {"c"}


def test_same_checksum_put_keeps_version(bck: Bck) -> None:
    data = content_for("same", 1234)
    assert bck.put("same", data).headers["Ais-Version"] == "1"
    # Stored as xxhash2; xxhash names the same digest, so the content is the same.
    r = bck.put(
        "same", data, {"Ais-Checksum-Type": "xxhash", "Ais-Checksum-Value": xxh64_hex(data)}
    )
    assert r.status_code == 200 and r.headers["Ais-Version"] == "1"
    assert bck.put("same", data).headers["Ais-Version"] == "2"


@pytest.mark.parametrize(
    "ctype,fn",
    [
        ("md5", lambda d: hashlib.md5(d).hexdigest()),
        ("sha256", lambda d: hashlib.sha256(d).hexdigest()),
        ("sha512", lambda d: hashlib.sha512(d).hexdigest()),
    ],
)
@pytest.mark.parametrize("size", [5, 3 * MiB])
def test_bucket_checksum_type(ais_server: LocalServer, ctype: str, fn: Hasher, size: int) -> None:
    b = new_bucket(ais_server, {"checksum": {"type": ctype}, **CHUNK_PROPS})
    try:
        data = content_for("t", size)
        r = b.put("t", data)
        assert r.headers["Ais-Checksum-Type"] == ctype
        assert r.headers["Ais-Checksum-Value"] == fn(data)
        h = b.head("t", "checksum").headers
        assert (h["Ais-Checksum-Type"], h["Ais-Checksum-Value"]) == (ctype, fn(data))
        r = b.put("t2", data, {"Ais-Checksum-Type": ctype, "Ais-Checksum-Value": fn(data[1:])})
        assert r.status_code == 400 and "BAD DATA CHECKSUM" in r.text
        props = json.loads(
            requests.head(f"{b.ep}/v1/buckets/{b.name}", timeout=10).headers["Ais-Bucket-Props"]
        )
        assert props["checksum"]["type"] == ctype
        assert b.consistent() == {"t"}
    finally:
        destroy_bucket(b.ep, b.name)


def test_bucket_checksum_none(ais_server: LocalServer) -> None:
    b = new_bucket(ais_server, {"checksum": {"type": "none"}})
    try:
        r = b.put("n", b"data", {"Ais-Checksum-Type": "xxhash", "Ais-Checksum-Value": "0" * 16})
        assert r.status_code == 200  # client checksum ignored when the bucket keeps none
        assert "Ais-Checksum-Type" not in r.headers
        assert "Ais-Checksum-Value" not in b.head("n", "checksum").headers
        assert b.get("n").content == b"data"
    finally:
        destroy_bucket(b.ep, b.name)


# ---- concurrency --------------------------------------------------------------------------------


def versioned(version: int) -> bytes:
    """Content of version `version` of the object "hot" (sizes alternate between layouts)."""
    size = [3 * MiB + 1, 200 * KiB, 2 * MiB, LIMIT - 1][version % 4]
    return content_for(f"hot:{version}", size)


def test_reads_during_overwrites_see_whole_versions(bck: Bck) -> None:
    """Readers racing an overwriting writer get one complete version, never a mix or a 5xx."""
    assert bck.put("hot", versioned(1)).headers["Ais-Version"] == "1"
    stop = threading.Event()
    errors: list[str] = []
    reads = [0]

    def reader(ranged: bool) -> None:
        s = requests.Session()
        while not stop.is_set():
            headers = {"Range": "bytes=100000-"} if ranged else None
            r = s.get(bck.ep + obj_path(bck.name, "hot"), headers=headers, timeout=30)
            if r.status_code not in (200, 206):
                errors.append(f"{r.status_code}: {r.text[:200]}")
                return
            want = versioned(int(r.headers["Ais-Version"]))
            if r.content != (want[100000:] if ranged else want):
                errors.append(f"version {r.headers['Ais-Version']}: wrong bytes")
                return
            reads[0] += 1

    threads = [threading.Thread(target=reader, args=(i % 2 == 1,)) for i in range(4)]
    for t in threads:
        t.start()
    try:
        s = requests.Session()
        version = 1
        deadline = time.monotonic() + 60
        # At least 23 overwrites, and on until the readers have read during them a few times.
        while version < 24 or reads[0] <= 10:
            version += 1
            r = s.put(bck.ep + obj_path(bck.name, "hot"), data=versioned(version), timeout=30)
            assert r.status_code == 200 and r.headers["Ais-Version"] == str(version)
            if errors:
                break
            assert time.monotonic() < deadline, f"only {reads[0]} reads in {version - 1} PUTs"
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[:3]
    assert reads[0] > 10
    assert bck.get("hot").content == versioned(version)
    assert bck.consistent() == {"hot"}


def test_concurrent_puts_to_one_name(bck: Bck) -> None:
    """Eight writers of one name: the result is exactly one of their objects; no chunks leak."""
    sizes = [0, 10, 300 * KiB, LIMIT, LIMIT + 1, 2 * MiB, 3 * MiB + 3, 5 * MiB]
    barrier = threading.Barrier(len(sizes))
    status: list[int] = []

    def put(size: int) -> None:
        data = content_for("same", size)
        barrier.wait()
        status.append(bck.put("same", data).status_code)

    threads = [threading.Thread(target=put, args=(sz,)) for sz in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert status == [200] * len(sizes)
    r = bck.get("same")
    assert len(r.content) in sizes and r.content == content_for("same", len(r.content))
    assert bck.head("same", "version").headers["Ais-Version"] == str(len(sizes))
    assert bck.consistent() == {"same"}
    assert len(chunk_dirs(bck.mps, bck.name)) == (1 if expected_chunks(len(r.content)) else 0)


def test_rechunk_racing_overwrites_keeps_new_data(ais_server: LocalServer) -> None:
    """A rechunk job must never put an old version back over a concurrent overwrite."""
    b = new_bucket(ais_server)
    try:
        names = [f"r/{i:03d}" for i in range(24)]
        for n in names:
            assert b.put(n, content_for(n + ":1", 3 * MiB // 2)).status_code == 200
        r = rechunk(b, "1MiB", "128KiB")
        assert r.status_code == 200, r.text
        s = requests.Session()
        for n in names:  # overwrite while the job walks the bucket
            assert s.put(b.ep + obj_path(b.name, n), data=content_for(n + ":2", MiB + 7)).ok
        wait_job(b.ep, r.text)
        for n in names:
            assert b.get(n).content == content_for(n + ":2", MiB + 7), n
            assert b.head(n, "version").headers["Ais-Version"] == "2"
        b.consistent()
    finally:
        destroy_bucket(b.ep, b.name)


def test_multipart_part_disconnect_leaves_no_temp(client: Client, bck: Bck) -> None:
    mpu = client.bucket(bck.name).object("mp").multipart_upload().create()
    mpu.add_part(1).put_content(b"one")
    u = urlsplit(bck.ep)
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    path = obj_path(bck.name, "mp") + f"?uploadId={mpu.upload_id}&partNumber=2"
    s.sendall(f"PUT {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {4 * MiB}\r\n\r\n".encode())
    s.sendall(b"2" * MiB)

    def part_temp() -> list[Path]:
        return [p for cd in chunk_dirs(bck.mps, bck.name).values() for p in cd.stray]

    wait_until(part_temp, 5, "the part's temp file")
    s.close()
    wait_until(lambda: not part_temp(), 5, "the part's temp file removed")
    mpu.parts = [1]
    mpu.complete()
    assert client.bucket(bck.name).object("mp").get_reader().read_all() == b"one"
    assert bck.consistent() == {"mp"}


@pytest.mark.parametrize("props", [None, CHUNK_PROPS], ids=["monolithic", "chunked"])
def test_destroy_bucket_during_put(ais_server: LocalServer, props: dict | None) -> None:
    """A PUT racing the destroy of its bucket fails with 404 and leaves nothing on disk."""
    b = new_bucket(ais_server, props)
    u = urlsplit(b.ep)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        head = (
            f"PUT {obj_path(b.name, 'x')} HTTP/1.1\r\nHost: x\r\nContent-Length: {4 * MiB}\r\n\r\n"
        )
        s.sendall(head.encode())
        s.sendall(b"x" * (2 * MiB))
        wait_until(lambda: b.new_work(), 5, "the PUT's work file")
        if props:
            wait_until(lambda: chunk_dirs(b.mps, b.name), 5, "the PUT's first chunks")
        destroy_bucket(b.ep, b.name)
        # The remaining chunks are written after the destroy. The server may answer and close
        # before reading all of them (the client then sees EPIPE); its reply is still readable.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(b"x" * (2 * MiB))
        f = s.makefile("rb")
        assert f.readline().startswith(b"HTTP/1.1 404")
    wait_until(lambda: not b.new_work(), 5, "work files removed")
    assert not [mp for mp in b.mps if (mp / "ais" / b.name).exists()], "destroyed bucket reappeared"
    create_bucket(b.ep, b.name, props)  # a new bucket of the same name starts empty
    try:
        assert b.consistent() == set()
    finally:
        destroy_bucket(b.ep, b.name)


def test_multipart_bad_input(bck: Bck) -> None:
    """Bad part numbers, bodies, ids and part lists are 4xx/501, store nothing, and the upload
    still completes afterwards."""
    url = bck.ep + obj_path(bck.name, "m")
    s = requests.Session()
    upload_id = s.post(url, json={"action": "mpt-upload", "name": "", "value": None}).text

    def part(num: object, data: object, uid: str = upload_id) -> requests.Response:
        return s.put(url, params={"uploadId": uid, "partNumber": num}, data=data, timeout=10)

    def complete(parts: object, uid: str = upload_id) -> requests.Response:
        if isinstance(parts, list):
            parts = [{"part-number": n, "etag": ""} for n in parts]
        msg = {"action": "mpt-complete", "name": "", "value": parts}
        return s.post(url, params={"uploadId": uid}, json=msg, timeout=10)

    def check(r: requests.Response, status: int, needle: str) -> None:
        assert r.status_code == status, r.text
        assert needle in error_doc(status, r.headers, r.content, r.request.method or "")["message"]

    for num in ("0", "10000", "x", "-1", "1.5", ""):
        check(part(num, b"abc"), 400, "part number")
    check(part(1, b""), 400, "put-part invalid size (0)")  # AIS wording
    check(part(1, iter([b"ab", b"c"])), 400, "Content-Length")  # chunked transfer encoding
    check(part(1, b"abc", "no-such-id"), 404, "no-such-id")
    assert part(1, b"111").status_code == 200
    assert part(2, b"222").status_code == 200
    check(complete([1]), 501, "partial completion")
    for bad in ([1, 3], [2, 3], [1, 1]):
        check(complete(bad), 400, "parts must be exactly 1..2")  # AIS wording (ais/tgtmpt.go)
    check(complete([1, 1]), 400, "duplicate part 1")
    check(complete([]), 501, "partial completion is not allowed: requested 0 parts, have 2")
    check(complete("zzz"), 400, "list of parts")
    check(complete([1, 2], "no-such-id"), 404, "no-such-id")
    assert bck.head("m").status_code == 404  # none of that made an object
    assert complete([2, 1]).status_code == 200
    assert bck.get("m").content == b"111222"
    check(complete([1, 2]), 404, upload_id)  # the upload is gone once completed
    assert bck.consistent() == {"m"}
