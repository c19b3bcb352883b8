"""Damaged bytes on disk never reach a client as data: the real server, files damaged by hand.

Objects are PUT (monolithic and chunked), then one of their files on a mountpath is damaged
directly: a byte flipped in place, a chunk cut short, grown or deleted, an object header broken.
Whole GET, range GET and GetBatch must then answer an error (AIS error JSON, 500) or cut the
connection, never the wrong bytes. A flipped byte of the same length is only visible to the
content checksum, so those cases run with `checksum.validate_warm_get`; length and header damage
is caught on every read. The `scrub` job quarantines exactly the damaged objects.
"""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from _util import (
    chunk_dirs,
    content_for,
    create_bucket,
    destroy_bucket,
    list_names,
    obj_path,
    object_files,
    read_object_meta,
    set_bprops,
    wait_job,
)

from aistore.server import LocalServer

KiB = 1 << 10
SIZE = 100 * KiB  # 7 chunks of 16 KiB in the chunked bucket
CHUNK_PROPS = {"chunks": {"objsize_limit": "64KiB", "chunk_size": "16KiB"}}


@dataclass
class Bck:
    ep: str
    mps: list[Path]
    name: str

    def put(self, obj: str) -> bytes:
        data = content_for(obj, SIZE)
        r = requests.put(self.ep + obj_path(self.name, obj), data=data, timeout=30)
        assert r.status_code == 200, r.text
        return data

    def object_file(self, obj: str) -> Path:
        return object_files(self.mps, self.name)[obj]

    def chunk_file(self, obj: str, num: int) -> Path:
        upload = read_object_meta(self.object_file(obj))["u"]
        return chunk_dirs(self.mps, self.name)[upload].files[num]

    def validate(self, on: bool) -> None:
        set_bprops(self.ep, self.name, {"checksum": {"validate_warm_get": on}})


def flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x01]))


def get_outcome(b: Bck, obj: str, rng: str | None = None) -> tuple[int, bytes | None]:
    """(status, body) of a GET; body None when the connection was cut mid-body."""
    headers = {"Range": rng} if rng else None
    try:
        r = requests.get(b.ep + obj_path(b.name, obj), headers=headers, timeout=30)
        return r.status_code, r.content
    except requests.exceptions.RequestException:
        return -1, None


def assert_refused(b: Bck, obj: str, good: bytes, rng: tuple[int, int] | None = None) -> None:
    """An error reply in AIS form, or a cut connection: never 2xx with bytes."""
    status, body = get_outcome(b, obj, f"bytes={rng[0]}-{rng[1]}" if rng else None)
    if status == -1:
        return
    assert status == 500, (status, (body or b"")[:200])
    doc = json.loads(body or b"{}")
    assert doc["status"] == 500 and doc["message"], doc


@pytest.fixture
def chunked(ais_server: LocalServer) -> Iterator[Bck]:
    b = Bck(ais_server.endpoint, ais_server.mountpaths, f"integ-c-{uuid.uuid4().hex[:8]}")
    create_bucket(b.ep, b.name, CHUNK_PROPS)
    yield b
    destroy_bucket(b.ep, b.name)


@pytest.fixture
def mono(ais_server: LocalServer) -> Iterator[Bck]:
    b = Bck(ais_server.endpoint, ais_server.mountpaths, f"integ-m-{uuid.uuid4().hex[:8]}")
    create_bucket(b.ep, b.name)
    yield b
    destroy_bucket(b.ep, b.name)


def test_flipped_chunk_byte_is_an_error_with_validate_warm_get(chunked: Bck) -> None:
    good = chunked.put("o")
    flip(chunked.chunk_file("o", 3), 5)
    chunked.validate(True)
    status, body = get_outcome(chunked, "o")
    assert status == 500, status
    assert "BAD DATA CHECKSUM" in json.loads(body or b"{}")["message"]
    chunked.validate(False)  # the fast path does not read twice: the flip is not seen
    status, body = get_outcome(chunked, "o")
    assert status == 200 and body != good


def test_flipped_monolithic_byte_is_an_error_with_validate_warm_get(mono: Bck) -> None:
    mono.put("o")
    path = mono.object_file("o")
    flip(path, path.stat().st_size - 1)
    mono.validate(True)
    status, body = get_outcome(mono, "o")
    assert status == 500 and "BAD DATA CHECKSUM" in json.loads(body or b"{}")["message"]


@pytest.mark.parametrize("damage", ["cut", "grown", "missing"])
def test_chunk_of_the_wrong_length_is_always_an_error(chunked: Bck, damage: str) -> None:
    good = chunked.put("o")
    chunk = chunked.chunk_file("o", 4)  # bytes [48 KiB, 64 KiB)
    if damage == "cut":
        with open(chunk, "r+b") as f:
            f.truncate(10)
    elif damage == "grown":
        with open(chunk, "ab") as f:
            f.write(b"x")
    else:
        chunk.unlink()
    assert_refused(chunked, "o", good)
    assert_refused(chunked, "o", good, (40 * KiB, 60 * KiB))
    # A range that does not touch the damaged chunk is still served, exactly.
    status, body = get_outcome(chunked, "o", "bytes=0-1023")
    assert status == 206 and body == good[:1024]


@pytest.mark.parametrize("damage", ["cut", "magic", "name"])
def test_damaged_monolithic_file_is_always_an_error(mono: Bck, damage: str) -> None:
    good = mono.put("obj-name")
    path = mono.object_file("obj-name")
    if damage == "cut":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size - 1)
    elif damage == "magic":
        flip(path, 2)
    else:
        flip(path, path.read_bytes()[:4096].index(b"obj-name") + 1)
    assert_refused(mono, "obj-name", good)
    assert_refused(mono, "obj-name", good, (0, 99))


def _batch(b: Bck, names: list[str]) -> tuple[int, list[tuple[str, bytes]] | None]:
    body = {"in": [{"objname": n, "bucket": b.name} for n in names], "mime": ".tar", "strm": True}
    try:
        r = requests.get(f"{b.ep}/v1/ml/moss", json=body, timeout=30)
        data = r.content
    except requests.exceptions.RequestException:
        return -1, None
    if r.status_code != 200:
        return r.status_code, None
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            return 200, [(m.name, t.extractfile(m).read()) for m in t.getmembers()]  # type: ignore[union-attr]
    except (tarfile.TarError, EOFError):
        return 200, None  # a cut stream: not a complete archive


def test_getbatch_never_returns_damaged_bytes(chunked: Bck) -> None:
    good = chunked.put("good")
    bad = chunked.put("bad")
    cut = chunked.put("cut")
    flip(chunked.chunk_file("bad", 2), 0)
    with open(chunked.chunk_file("cut", 7), "r+b") as f:
        f.truncate(1)
    chunked.validate(True)
    originals = {f"{chunked.name}/{n}": d for n, d in (("good", good), ("bad", bad), ("cut", cut))}
    for names in (["good", "bad"], ["good", "cut"]):
        status, entries = _batch(chunked, names)
        if entries is None:
            continue  # an error status or a cut stream
        assert all(data == originals[name] for name, data in entries), [n for n, _ in entries]
        assert len(entries) < 2, "the damaged object was served"
    status, entries = _batch(chunked, ["good"])
    assert status == 200 and entries == [(f"{chunked.name}/good", good)]


def test_scrub_quarantines_exactly_the_damaged(ais_server: LocalServer, chunked: Bck) -> None:
    for n in ("good-1", "good-2", "flipped", "cut", "header"):
        chunked.put(n)
    flip(chunked.chunk_file("flipped", 1), 100)
    with open(chunked.chunk_file("cut", 2), "r+b") as f:
        f.truncate(5)
    flip(chunked.object_file("header"), 0)

    client = ais_server.client()
    job_id = client.job(job_kind="scrub").start(buckets=[client.bucket(chunked.name)])
    st = wait_job(chunked.ep, job_id)
    assert not st.get("aborted"), st
    assert "quarantined" in st.get("err", ""), st
    assert "and 2 more errors" in st.get("err", ""), st

    assert list_names(chunked.ep, chunked.name) == {"good-1", "good-2"}
    for n in ("flipped", "cut", "header"):
        assert get_outcome(chunked, n)[0] == 404
    for n in ("good-1", "good-2"):
        assert get_outcome(chunked, n) == (200, content_for(n, SIZE))
    infos = [
        json.loads(p.read_text())
        for mp in chunked.mps
        for p in (mp / ".ais.work" / "quarantine").glob("*/info.json")
        if json.loads(p.read_text())["bucket"] == chunked.name
    ]
    assert sorted(i["name"] for i in infos) == ["cut", "flipped", "header"]
