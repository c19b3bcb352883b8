"""GetBatch end to end: our client and raw HTTP against the real server.

Random batches (hypothesis) over two buckets of objects and shards of every archive format,
with duplicates, byte ranges, archived files and missing items, must come back in request order
with the same bytes as one GET per item. Every output format round-trips through the standard
library's readers; bad requests get 4xx AIS error JSON; archived-file GETs; soft-error limit;
cut-short streams; a client hanging up mid-stream.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import io
import json
import os
import shutil
import socket
import subprocess
import tarfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from _util import error_doc, raw_request, tar_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore.sdk.archive_config import ArchiveConfig
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import ErrBckNotFound, ErrObjNotFound
from aistore.server import LocalServer

HAVE_LZ4_CLI = shutil.which("lz4") is not None
SIZES = [0, 1, 100, 4096, 70_000, 300_000]  # 70 KB and up travel as file segments
MEMBERS = {
    "a.txt": b"alpha " * 3,
    "dir/b.bin": bytes(range(256)) * 400,
    "long/" + "x" * 150 + ".dat": b"long name",
    "empty": b"",
}


def _payload(name: str, size: int) -> bytes:
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


_tar = tar_bytes


def _zip(members: dict[str, bytes], method: int) -> bytes:
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return bio.getvalue()


def _lz4(data: bytes) -> bytes:
    return subprocess.run(["lz4", "-c", "-q"], input=data, capture_output=True, check=True).stdout


def _unlz4(data: bytes) -> bytes:
    return subprocess.run(
        ["lz4", "-d", "-c", "-q"], input=data, capture_output=True, check=True
    ).stdout


def _shards() -> dict[str, bytes]:
    out = {
        "s-gnu.tar": _tar(MEMBERS, tarfile.GNU_FORMAT),
        "s-pax.tar": _tar(MEMBERS, tarfile.PAX_FORMAT),
        "s.tgz": _tar(MEMBERS, mode="w:gz"),
        "s.tar.gz": _tar(MEMBERS, mode="w:gz"),
        "s-deflate.zip": _zip(MEMBERS, zipfile.ZIP_DEFLATED),
        "s-stored.zip": _zip(MEMBERS, zipfile.ZIP_STORED),
        "nosuffix-shard": _tar(MEMBERS),  # recognized by its magic
    }
    if HAVE_LZ4_CLI:
        out["s.tar.lz4"] = _lz4(_tar(MEMBERS))
    return out


@dataclass(repr=False)
class Dataset:
    client: Client
    buckets: list[Bucket]
    objects: dict[tuple[int, str], bytes]  # (bucket index, name) -> bytes
    shards: dict[str, bytes]  # in bucket 0


@pytest.fixture(scope="module")
def ds(ais_server: LocalServer) -> Iterator[Dataset]:
    client = ais_server.client()
    tag = uuid.uuid4().hex[:8]
    buckets = [client.bucket(f"gb-{i}-{tag}").create() for i in range(2)]
    objects: dict[tuple[int, str], bytes] = {}
    for bi, bck in enumerate(buckets):
        for size in SIZES:
            name = f"obj/{size}"
            data = _payload(f"{bi}{name}", size)
            bck.object(name).get_writer().put_content(data)
            objects[(bi, name)] = data
    shards = _shards()
    for name, data in shards.items():
        buckets[0].object(name).get_writer().put_content(data)
    yield Dataset(client, buckets, objects, shards)
    for bck in buckets:
        bck.delete(missing_ok=True)


# --- random batches --------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    bucket: int
    name: str
    archpath: str = ""
    start: int = 0
    length: int = 0
    missing: str = ""  # "", "object", "shard", "member"


def _range(draw: st.DrawFn, size: int) -> tuple[int, int]:
    if size == 0 or not draw(st.booleans()):
        return 0, 0
    start = draw(st.integers(0, size - 1))
    length = draw(st.one_of(st.just(-1), st.integers(1, size - start)))
    return start, length


@st.composite
def items(draw: st.DrawFn) -> Item:
    kind = draw(st.sampled_from(["obj", "obj", "obj", "arch", "arch", "missing"]))
    if kind == "obj":
        bucket = draw(st.integers(0, 1))
        size = draw(st.sampled_from(SIZES))
        start, length = _range(draw, size)
        return Item(bucket, f"obj/{size}", start=start, length=length)
    shard = draw(st.sampled_from(sorted(_shards())))
    if kind == "arch":
        member = draw(st.sampled_from(sorted(MEMBERS)))
        start, length = _range(draw, len(MEMBERS[member]))
        lead = draw(st.sampled_from(["", "/"]))
        return Item(0, shard, archpath=lead + member, start=start, length=length)
    what = draw(st.sampled_from(["object", "shard", "member"]))
    if what == "object":
        return Item(draw(st.integers(0, 1)), "nope/obj", missing="object")
    if what == "shard":
        return Item(0, "nope.tar", archpath="a.txt", missing="shard")
    return Item(0, shard, archpath="no/such/member", missing="member")


def _expected(d: Dataset, it: Item) -> bytes:
    if it.missing:
        return b""
    data = MEMBERS[it.archpath.lstrip("/")] if it.archpath else d.objects[(it.bucket, it.name)]
    if it.length == 0:
        return data
    end = len(data) if it.length == -1 else it.start + it.length
    return data[it.start : end]


def _entry_name(d: Dataset, it: Item, onob: bool) -> str:
    name = it.name if onob else f"{d.buckets[it.bucket].name}/{it.name}"
    if it.missing == "shard" or not it.archpath:
        return f"__404__/{name}" if it.missing else name
    sep = "" if it.archpath.startswith("/") else "/"
    return ("__404__/" if it.missing else "") + name + sep + it.archpath


def _single_get(d: Dataset, it: Item) -> bytes:
    obj = d.buckets[it.bucket].object(it.name)
    if it.archpath:
        whole = obj.get_reader(archive_config=ArchiveConfig(archpath=it.archpath)).read_all()
        assert isinstance(whole, bytes)
        if it.length == 0:
            return whole
        end = len(whole) if it.length == -1 else it.start + it.length
        return whole[it.start : end]
    if it.length == 0:
        data = obj.get_reader().read_all()
    else:
        end = "" if it.length == -1 else str(it.start + it.length - 1)
        data = obj.get_reader(byte_range=f"bytes={it.start}-{end}").read_all()
    assert isinstance(data, bytes)
    return data


FORMATS = [".tar", ".tgz", ".tar.gz", ".zip", ".tar.lz4"]  # the client reads each (libarchive)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batch_items=st.lists(items(), min_size=1, max_size=30).filter(
        lambda xs: sum(1 for x in xs if x.missing) <= 8
    ),
    fmt=st.sampled_from(FORMATS),
    streaming=st.booleans(),
    onob=st.booleans(),
)
def test_random_batches_equal_single_gets(
    ds: Dataset, batch_items: list[Item], fmt: str, streaming: bool, onob: bool
) -> None:
    batch = ds.client.batch(output_format=fmt, streaming_get=streaming, only_obj_name=onob)
    for k, it in enumerate(batch_items):
        b = ds.buckets[it.bucket]
        batch.add(
            it.name,
            archpath=it.archpath or None,
            start=it.start or None,
            length=it.length or None,
            opaque=f"#{k}".encode(),
            bck=b.name,
            provider="ais",
        )
    got = list(batch.get())
    assert len(got) == len(batch_items)
    for k, (it, (out, data)) in enumerate(zip(batch_items, got, strict=True)):
        assert data == _expected(ds, it), (k, it)
        assert out.obj_name == it.name
        assert out.bucket == ds.buckets[it.bucket].name
        assert out.provider == "ais"
        assert out.opaque == f"#{k}".encode()
        assert out.size == len(data)
        assert bool(out.err_msg) == bool(it.missing), (it, out)
        if it.missing and not streaming:
            assert "does not exist" in (out.err_msg or "")
        if not it.missing:
            assert data == _single_get(ds, it), (k, it)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batch_items=st.lists(items(), min_size=1, max_size=20).filter(
        lambda xs: sum(1 for x in xs if x.missing) <= 8
    ),
    onob=st.booleans(),
)
def test_entry_names_per_spec(ds: Dataset, batch_items: list[Item], onob: bool) -> None:
    body = {
        "in": [
            {
                "objname": it.name,
                "bucket": ds.buckets[it.bucket].name,
                **({"archpath": it.archpath} if it.archpath else {}),
                **({"start": it.start} if it.start else {}),
                **({"length": it.length} if it.length else {}),
            }
            for it in batch_items
        ],
        "coer": True,
        "onob": onob,
        "strm": True,
    }
    r = _moss(ds, body)
    assert r.status == 200, r.body
    with tarfile.open(fileobj=io.BytesIO(r.body)) as t:
        members = t.getmembers()
        names = [m.name for m in members]
        datas = [t.extractfile(m).read() for m in members]  # type: ignore[union-attr]
    assert names == [_entry_name(ds, it, onob) for it in batch_items]
    assert datas == [_expected(ds, it) for it in batch_items]
    for m, it in zip(members, batch_items, strict=True):
        assert m.isreg() and m.mode == 0o644 and m.uid == 0 and m.gid == 0
        assert m.uname == "" and m.gname == ""
        whole_object = not it.archpath and not it.length and not it.missing
        assert (m.mtime > 0) == whole_object


# --- every output format ---------------------------------------------------------------


def _moss(
    ds: Dataset,
    body: object,
    path: str = "/v1/ml/moss",
    raw_body: bytes | None = None,
    method: str = "GET",
) -> object:
    return raw_request(
        ds.client._request_client.base_url.rsplit("/v1", 1)[0],
        method,
        path,
        headers={"Content-Type": "application/json"},
        body=raw_body if raw_body is not None else json.dumps(body).encode(),
        timeout=120,
    )


def _entries(fmt: str, data: bytes) -> list[tuple[str, bytes]]:
    if fmt == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return [(i.filename, z.read(i)) for i in z.infolist()]
    if fmt == ".tar.lz4":
        data = _unlz4(data)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as t:
        return [(m.name, t.extractfile(m).read()) for m in t.getmembers()]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "fmt", [".tar", ".tgz", ".tar.gz", ".zip", ".tar.lz4", "application/x-tar", "tgz"]
)
def test_every_output_format_roundtrips(ds: Dataset, fmt: str) -> None:
    if fmt == ".tar.lz4" and not HAVE_LZ4_CLI:
        pytest.skip("no lz4 command to check the LZ4 frame")
    b0 = ds.buckets[0].name
    names = [f"obj/{s}" for s in SIZES]
    body = {
        "mime": fmt,
        "strm": True,
        "in": [{"objname": n, "bucket": b0} for n in names]
        + [
            {"objname": "s.tgz", "bucket": b0, "archpath": "dir/b.bin"},
            {"objname": "obj/100", "bucket": b0},
        ],
    }
    r = _moss(ds, body)
    assert r.status == 200, r.body
    canonical = {"application/x-tar": ".tar", "tgz": ".tgz"}.get(fmt, fmt)
    content_type = {
        ".tar": "application/x-tar",
        ".tgz": "application/gzip",
        ".tar.gz": "application/gzip",
        ".zip": "application/zip",
        ".tar.lz4": "application/x-lz4",
    }[canonical]
    assert r.header("Content-Type") == content_type
    assert r.header("Content-Encoding") is None
    assert r.header("Transfer-Encoding") == "chunked"
    got = _entries(canonical, r.body)
    want = [(f"{b0}/{n}", ds.objects[(0, n)]) for n in names]
    want += [
        (f"{b0}/s.tgz/dir/b.bin", MEMBERS["dir/b.bin"]),
        (f"{b0}/obj/100", ds.objects[(0, "obj/100")]),
    ]
    assert got == want
    if canonical in (".tgz", ".tar.gz"):
        assert gzip.decompress(r.body)  # one plain gzip stream
    if canonical == ".tar.lz4":
        flg, bd = r.body[4], r.body[5]
        assert flg & 0x04 == 0 and flg & 0x10 == 0  # no content checksum, no block checksums
        assert bd >> 4 == 5  # 256 KiB blocks


@pytest.mark.parametrize("fmt", FORMATS)
def test_client_reads_every_format_multipart_too(ds: Dataset, fmt: str) -> None:
    for streaming in (True, False):
        batch = ds.client.batch(
            [f"obj/{s}" for s in SIZES],
            bucket=ds.buckets[1],
            output_format=fmt,
            streaming_get=streaming,
        )
        got = [d for _, d in batch.get(decode_as_stream=True)]
        assert got == [ds.objects[(1, f"obj/{s}")] for s in SIZES]


# --- multipart metadata ----------------------------------------------------------------


def _split_multipart(ctype: str, body: bytes) -> tuple[dict[str, object], bytes]:
    boundary = ctype.split("boundary=")[1].encode()
    assert len(boundary) == 60 and all(c in b"0123456789abcdef" for c in boundary)
    parts = body.split(b"--" + boundary)
    assert parts[0] == b"" and parts[-1] == b"--\r\n"
    head, _, meta = parts[1].partition(b"\r\n\r\n")
    assert b'name="metadata"' in head
    ahead, _, archive = parts[2].partition(b"\r\n\r\n")
    assert b'name="archive"' in ahead and b"application/octet-stream" in ahead
    assert archive.endswith(b"\r\n")
    return json.loads(meta), archive[:-2]


def test_multipart_metadata_fields(ds: Dataset) -> None:
    b0 = ds.buckets[0].name
    body = {
        "strm": False,
        "coer": True,
        "in": [
            {"objname": "obj/100", "bucket": b0, "opaque": "aGk="},
            {"objname": "s-gnu.tar", "bucket": b0, "archpath": "a.txt"},
            {"objname": "nope", "bucket": b0},
            {"objname": "obj/4096", "bucket": b0, "start": 10, "length": 20},
        ],
    }
    r = _moss(ds, body)
    assert r.status == 200, r.body
    meta, archive = _split_multipart(r.header("Content-Type") or "", r.body)
    assert meta["uuid"]
    out = meta["out"]
    assert isinstance(out, list)
    assert out[0] == {
        "objname": "obj/100",
        "bucket": b0,
        "provider": "ais",
        "opaque": "aGk=",
        "size": 100,
    }
    assert out[1] == {
        "objname": "s-gnu.tar",
        "archpath": "a.txt",
        "bucket": b0,
        "provider": "ais",
        "size": len(MEMBERS["a.txt"]),
    }
    assert out[2]["size"] == 0 and "archpath" not in out[2] and "opaque" not in out[2]
    assert out[2]["err_msg"].endswith(f"ais://{b0}/nope does not exist")
    assert out[3]["size"] == 20
    assert [d for _, d in _entries(".tar", archive)] == [
        ds.objects[(0, "obj/100")],
        MEMBERS["a.txt"],
        b"",
        ds.objects[(0, "obj/4096")][10:30],
    ]


# --- errors ----------------------------------------------------------------------------


def _error(ds: Dataset, status: int, body: object = None, **kw: object) -> dict[str, object]:
    r = _moss(ds, body, **kw)  # type: ignore[arg-type]
    assert r.status == status, (r.status, r.body)
    return error_doc(r.status, r.headers, r.body, "GET")


def test_bad_requests_get_4xx_json(ds: Dataset) -> None:
    b0 = ds.buckets[0].name
    one = [{"objname": "obj/1", "bucket": b0}]
    assert _error(ds, 400, {"in": []})["message"] == "moss: empty input"
    assert _error(ds, 400, {})["message"] == "moss: empty input"
    _error(ds, 400, raw_body=b"{not json")
    _error(ds, 400, raw_body=b"")
    _error(ds, 400, {"in": [{"objname": "x"}]})  # no bucket at all
    _error(ds, 400, {"in": [{"objname": "../x", "bucket": b0}]})
    _error(ds, 400, {"in": [{"objname": 7, "bucket": b0}]})
    _error(ds, 400, {"in": one, "mime": ".rar"})
    _error(ds, 400, {"in": [{"objname": "obj/1", "bucket": b0, "start": 5}]})
    _error(ds, 400, {"in": one}, path="/v1/ml/moss?coloc=9")
    _error(ds, 400, {"in": one}, path=f"/v1/ml/moss/{b0}/extra")
    _error(ds, 405, {"in": one}, method="PUT")
    doc = _error(ds, 404, {"in": [{"objname": "x", "bucket": "no-such-bucket"}]})
    assert doc["message"] == 'bucket "ais://no-such-bucket" does not exist'
    doc = _error(ds, 404, {"in": [{"objname": "x"}]}, path="/v1/ml/moss/no-such-bucket")
    assert "does not exist" in str(doc["message"])
    _error(
        ds, 404, {"in": [{"objname": "x", "bucket": b0, "provider": "gcp"}]}
    )  # no gcp backend here


def test_missing_without_cont_on_err(ds: Dataset) -> None:
    b0 = ds.buckets[0]
    with pytest.raises(ErrObjNotFound):
        ds.client.batch(["nope"], bucket=b0, cont_on_err=False).get()
    with pytest.raises(ErrObjNotFound):
        ds.client.batch(["obj/1", "nope"], bucket=b0, cont_on_err=False, streaming_get=False).get()
    with pytest.raises(ErrBckNotFound):
        ds.client.batch(["x"], bucket=ds.client.bucket("no-such-bucket")).get()


def test_missing_mid_stream_cuts_the_archive(ds: Dataset) -> None:
    """After the reply started, a hard error ends the archive without its trailer: our
    client raises instead of silently yielding fewer items. (300 large items: more than the
    server queues before the reply must start, 256 file pieces, whatever the timing.)"""
    names = ["obj/300000"] * 300 + ["nope"] + ["obj/1"]
    gen = ds.client.batch(names, bucket=ds.buckets[0], cont_on_err=False).get()
    assert isinstance(gen, Iterator)
    got = 0
    with pytest.raises(RuntimeError, match="Failed to read tar archive stream"):
        for _ in gen:
            got += 1
    assert got == 300


def test_soft_error_limit(ds: Dataset) -> None:
    b0 = ds.buckets[0].name
    ok = {
        "coer": True,
        "in": [{"objname": "nope", "bucket": b0}] * 8 + [{"objname": "obj/1", "bucket": b0}],
    }
    assert _moss(ds, ok).status == 200
    too_many = {
        "coer": True,
        "strm": False,
        "in": [{"objname": "nope", "bucket": b0}] * 9 + [{"objname": "obj/1", "bucket": b0}],
    }
    doc = _error(ds, 400, too_many)
    assert "exceeded soft-errors limit: 9 (max: 8)" in str(doc["message"])


def test_range_errors_are_400(ds: Dataset) -> None:
    b0 = ds.buckets[0].name
    for item in (
        {"objname": "obj/100", "bucket": b0, "start": 100, "length": -1},
        {"objname": "obj/100", "bucket": b0, "start": 99, "length": 2},
        {"objname": "obj/0", "bucket": b0, "length": -1},
    ):
        doc = _error(ds, 400, {"coer": True, "in": [item]})
        assert "not satisfiable range" in str(doc["message"])


def test_not_an_archive_is_400(ds: Dataset) -> None:
    doc = _error(
        ds,
        400,
        {
            "coer": True,
            "in": [{"objname": "obj/4096", "bucket": ds.buckets[0].name, "archpath": "x"}],
        },
    )
    assert "not an archive" in str(doc["message"])


# --- reading files inside shards with a plain GET --------------------------------------


@pytest.mark.parametrize("shard", sorted(_shards()))
def test_get_archpath(ds: Dataset, shard: str) -> None:
    obj = ds.buckets[0].object(shard)
    for member, data in MEMBERS.items():
        for spelled in (member, "/" + member, f"{shard}/{member}"):
            got = obj.get_reader(archive_config=ArchiveConfig(archpath=spelled)).read_all()
            assert got == data, (shard, spelled)
    with pytest.raises(ErrObjNotFound):
        obj.get_reader(archive_config=ArchiveConfig(archpath="nope")).read_all()


def test_get_archpath_raw_rules(ds: Dataset) -> None:
    ep = ds.client._request_client.base_url.rsplit("/v1", 1)[0]
    b0 = ds.buckets[0].name
    r = raw_request(ep, "GET", f"/v1/objects/{b0}/s-gnu.tar?archpath=dir/b.bin&archregx=")
    assert r.status == 200 and r.body == MEMBERS["dir/b.bin"]
    assert r.header("Content-Type") == "application/octet-stream"
    assert r.header("Content-Length") == str(len(MEMBERS["dir/b.bin"]))
    assert r.header("Ais-Checksum-Type") is None
    r = raw_request(
        ep, "GET", f"/v1/objects/{b0}/s-gnu.tar?archpath=a.txt", headers={"Range": "bytes=0-1"}
    )
    assert r.status == 400
    r = raw_request(ep, "GET", f"/v1/objects/{b0}/s-gnu.tar?archpath=a.txt&archmode=prefix")
    assert r.status == 400
    r = raw_request(ep, "GET", f"/v1/objects/{b0}/nosuffix-shard?archpath=a.txt&archmime=.tar")
    assert r.status == 200 and r.body == MEMBERS["a.txt"]
    r = raw_request(ep, "GET", f"/v1/objects/{b0}/obj/4096?archpath=a.txt")
    assert r.status == 400
    r = raw_request(ep, "GET", f"/v1/objects/{b0}/nope.tar?archpath=a.txt")
    assert r.status == 404


@pytest.mark.parametrize("shard", ["s-gnu.tar", "s.tgz", "s-deflate.zip"])
def test_archregx_multi_select(ds: Dataset, shard: str) -> None:
    for mode, regx, want in (
        ("prefix", "dir/", ["dir/b.bin"]),
        ("suffix", ".txt", ["a.txt"]),
        ("substr", "x" * 10, ["long/" + "x" * 150 + ".dat"]),
        ("regexp", r"^(a|empty)", ["a.txt", "empty"]),
        ("wdskey", "dir/b", ["dir/b.bin"]),
        ("prefix", "", sorted(MEMBERS, key=list(MEMBERS).index)),
    ):
        ep = ds.client._request_client.base_url.rsplit("/v1", 1)[0]
        r = raw_request(
            ep, "GET", f"/v1/objects/{ds.buckets[0].name}/{shard}?archregx={regx}&archmode={mode}"
        )
        assert r.status == 200, (mode, r.body)
        assert r.header("Content-Type") == "application/x-tar"
        assert _entries(".tar", r.body) == [(n, MEMBERS[n]) for n in want], (mode, regx)
    ep = ds.client._request_client.base_url.rsplit("/v1", 1)[0]
    r = raw_request(
        ep, "GET", f"/v1/objects/{ds.buckets[0].name}/{shard}?archregx=zzz&archmode=prefix"
    )
    assert r.status == 404


# --- connections ------------------------------------------------------------------------


def _proc_status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def test_client_hanging_up_mid_stream_costs_nothing(ds: Dataset, ais_server: LocalServer) -> None:
    pid = ais_server.pid
    assert pid
    b0 = ds.buckets[0].name
    body = json.dumps(
        {"in": [{"objname": "obj/300000", "bucket": b0}] * 3000, "strm": True}
    ).encode()
    u = urlsplit(ais_server.endpoint)

    def settle(what: str, baseline: int, probe: object) -> None:
        # Batch threads are pooled: an extra one started while another wound down lingers
        # idle for 10 s before it exits.
        deadline = time.monotonic() + 20
        while probe() > baseline and time.monotonic() < deadline:  # type: ignore[operator]
            time.sleep(0.05)
        assert probe() <= baseline, what  # type: ignore[operator]

    _moss(ds, {"in": [{"objname": "obj/1", "bucket": b0}]})  # warm up: threads, pools
    fds, threads = _fds(pid), _proc_status(pid, "Threads")
    for _ in range(5):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        conn.request("GET", "/v1/ml/moss", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200
        assert len(resp.read(5_000_000)) == 5_000_000
        conn.close()  # hang up with ~900 MB unsent
    settle("open fds", fds, lambda: _fds(pid))
    settle("threads", threads, lambda: _proc_status(pid, "Threads"))
    # The server still serves.
    r = _moss(ds, {"in": [{"objname": "obj/100", "bucket": b0}]})
    assert r.status == 200


def test_slow_reader_gets_every_byte_in_order(ds: Dataset, ais_server: LocalServer) -> None:
    """A client reading slowly through a small receive buffer keeps the server's socket full, so
    its writes go out in parts and wait for room (runs of memory pieces and file segments
    alike); the archive still arrives whole and in order, over one connection."""
    b0 = ds.buckets[0].name
    batches = [
        [f"obj/{size}" for size in SIZES] * 40,  # ~15 MB: more than the socket buffers hold
        ["obj/4096"] * 2000,  # ~9 MB of memory pieces only: long gathered writes
    ]
    u = urlsplit(ais_server.endpoint)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.connect()
    assert conn.sock is not None
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
    try:
        for names in batches:
            body = json.dumps({"in": [{"objname": n, "bucket": b0} for n in names], "strm": True})
            headers = {"Content-Type": "application/json"}
            conn.request("GET", "/v1/ml/moss", body=body, headers=headers)
            resp = conn.getresponse()
            assert resp.status == 200
            parts = []
            while chunk := resp.read(16 * 1024):
                parts.append(chunk)
                time.sleep(0.001)
            with tarfile.open(fileobj=io.BytesIO(b"".join(parts)), mode="r:") as t:
                members = t.getmembers()
                assert [m.name for m in members] == [f"{b0}/{n}" for n in names]
                for m, n in zip(members, names, strict=True):
                    f = t.extractfile(m)
                    assert f is not None
                    assert f.read() == ds.objects[(0, n)], n
    finally:
        conn.close()


def test_keep_alive_after_streamed_reply(ds: Dataset, ais_server: LocalServer) -> None:
    u = urlsplit(ais_server.endpoint)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    b0 = ds.buckets[0].name
    try:
        for _ in range(3):
            for strm in (True, False):
                body = json.dumps(
                    {"in": [{"objname": "obj/70000", "bucket": b0}] * 5, "strm": strm}
                )
                conn.request(
                    "GET", "/v1/ml/moss", body=body, headers={"Content-Type": "application/json"}
                )
                resp = conn.getresponse()
                assert resp.status == 200
                assert len(resp.read()) > 350_000
            conn.request(
                "GET", "/v1/ml/moss", body=b"{}", headers={"Content-Type": "application/json"}
            )
            resp = conn.getresponse()
            assert resp.status == 400
            resp.read()
    finally:
        conn.close()


def _own_connections(server_port: int) -> set[int]:
    """Socket inodes of this process's TCP connections to `server_port`. Inodes are never reused
    while the test runs, unlike client ports (loopback reuses TIME_WAIT ports at once)."""
    ours = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, or one closed meanwhile
            continue
        if target.startswith("socket:["):
            ours.add(int(target[8:-1]))
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if remote_port == server_port and int(fields[9]) in ours:
                    inodes.add(int(fields[9]))
    return inodes


@pytest.mark.parametrize(
    ("fmt", "streaming", "as_stream"),
    [(".tar", True, False), (".zip", True, False), (".tar", False, True), (".tgz", False, False)],
)
def test_connection_is_reused(ds: Dataset, fmt: str, streaming: bool, as_stream: bool) -> None:
    """A batch read to its end leaves its connection in the pool for the next request (the
    native client's for streaming replies, urllib3's for multipart ones): every batch of a fresh
    client runs over the same one connection."""
    base = ds.client._request_client.base_url.rsplit("/v1", 1)[0]
    port = int(base.rsplit(":", 1)[1])
    client = Client(base)
    before = _own_connections(port)
    seen: set[int] = set()
    for _ in range(4):
        batch = client.batch(
            ["obj/100", "obj/70000"],
            bucket=ds.buckets[0],
            output_format=fmt,
            streaming_get=streaming,
        )
        assert len(list(batch.get(decode_as_stream=as_stream))) == 2
        seen |= _own_connections(port) - before
    assert len(seen) == 1


def test_list_objects_arch_dir(ds: Dataset) -> None:
    """LsArchDir lists the files inside objects named like archives, in name order and with
    their sizes, across pages, and a prefix may reach into a shard."""
    from aistore.sdk.list_object_flag import ListObjectFlag

    b0 = ds.buckets[0]
    arch = [ListObjectFlag.ARCH_DIR]
    plain = sorted(e.name for e in b0.list_all_objects())
    listed = b0.list_all_objects(flags=arch)
    names = [e.name for e in listed]
    assert names == sorted(names)
    members = sorted(MEMBERS)
    expected = sorted(
        plain + [f"{s}/{m}" for s in ds.shards if s != "nosuffix-shard" for m in members]
    )
    assert names == expected
    flags = {e.name: e.flags for e in listed}
    sizes = {e.name: e.size for e in listed}
    assert flags["s.tgz"] & 512 and not flags["obj/100"] & 512
    assert flags["s.tgz/dir/b.bin"] & 128 and not flags["s.tgz/dir/b.bin"] & 512
    assert sizes["s-stored.zip/dir/b.bin"] == len(MEMBERS["dir/b.bin"])
    assert [e.name for e in b0.list_all_objects(flags=arch, page_size=3)] == expected
    inside = [e.name for e in b0.list_all_objects(flags=arch, prefix="s.tar.gz/dir/")]
    assert inside == ["s.tar.gz/dir/b.bin"]


def test_list_archive(ds: Dataset) -> None:
    """Bucket.list_archive: the files inside one shard, optionally with the shard itself, and
    not the objects that merely share its name as a prefix."""
    b0 = ds.buckets[0]
    b0.object("s-gnu.tar-sibling").get_writer().put_content(b"not inside")
    try:
        members = [f"s-gnu.tar/{m}" for m in sorted(MEMBERS)]
        listed = b0.list_archive("s-gnu.tar")
        assert [e.name for e in listed] == members
        assert all(e.flags & 128 for e in listed)  # EntryInArch
        sizes = {e.name: e.size for e in b0.list_archive("s-gnu.tar", props="name,size")}
        assert sizes["s-gnu.tar/dir/b.bin"] == len(MEMBERS["dir/b.bin"])
        with_self = b0.list_archive("s.tgz", include_archive_obj=True, page_size=2)
        assert [e.name for e in with_self] == ["s.tgz"] + [f"s.tgz/{m}" for m in sorted(MEMBERS)]
        assert with_self[0].flags & 512  # EntryIsArchive
        assert b0.list_archive("obj/100") == []  # not an archive: nothing inside
    finally:
        b0.object("s-gnu.tar-sibling").delete()


# --- GetBatch requests as jobs ------------------------------------------------------------


def _get_batch_jobs(client: Client, bucket: Bucket) -> list[str]:
    """Ids of the running get-batch jobs of `bucket` (as AIS's x-moss, one per bucket)."""
    running = {
        j.split("[", 1)[1].rstrip("]") for j in client.cluster().list_running_jobs("get-batch")
    }
    snaps = client.job(job_kind="get-batch").get_details().list_snapshots()
    return [s.id for s in snaps if s.id in running and s.bucket and s.bucket.name == bucket.name]


def test_get_batch_requests_run_as_a_job(ds: Dataset) -> None:
    """A GetBatch request is work of a running get-batch job: listed, counted, idle after."""
    client = ds.client
    b0 = ds.buckets[0]
    assert len(list(client.batch(["obj/100", "obj/4096"], bucket=b0).get())) == 2
    ids = _get_batch_jobs(client, b0)
    assert len(ids) == 1
    job = client.job(ids[0])
    assert job.status().end_time == 0  # running, idle between requests

    def counted() -> int:
        snaps = job.get_details().list_snapshots()
        return sum(s.stats.objects for s in snaps if s.stats)

    # The job's thread publishes a request's counts after its reply's last byte: wait until it
    # is idle and the count holds still before taking the baseline.
    assert job.wait_for_idle(timeout=10, verbose=False).success
    before = counted()
    deadline = time.monotonic() + 10
    while True:
        time.sleep(0.1)
        now = counted()
        if now == before:
            break
        assert time.monotonic() < deadline, f"the job's object count keeps moving: {now}"
        before = now
    assert len(list(client.batch(["obj/100"] * 5, bucket=b0).get())) == 5
    assert _get_batch_jobs(client, b0) == ids  # the same job serves the next request

    deadline = time.monotonic() + 10
    while counted() < before + 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert counted() == before + 5
    # Counts are published before the job says it is idle again: wait for that too.
    assert job.wait_for_idle(timeout=10, verbose=False).success
    assert client.job(job_kind="get-batch").wait_for_idle(timeout=10, verbose=False).success
    # Multipart replies name the job in MossResp.uuid.
    r = _moss(ds, {"in": [{"objname": "obj/1", "bucket": b0.name}], "strm": False})
    assert r.status == 200
    meta, _ = _split_multipart(r.headers["Content-Type"], r.body)
    assert meta["uuid"] == ids[0]


@pytest.mark.parametrize("by", ["id", "kind"])
def test_aborting_the_job_cuts_the_stream(ds: Dataset, by: str) -> None:
    """Aborting the get-batch job (by id or by kind) ends a running stream early and cleanly:
    the reader sees a cut-short archive, the job is listed as aborted, the connection stays
    usable and the next request runs under a new job."""
    client = ds.client
    b0 = ds.buckets[0]
    items = client.batch(["obj/300000"] * 3000, bucket=b0).get()  # ~900 MB: long enough
    got = 0
    for _, data in items:
        assert len(data) == 300_000
        got += 1
        if got == 3:
            break
    (job_id,) = _get_batch_jobs(client, b0)
    if by == "id":
        client.job(job_id).abort()
    else:
        client.job(job_kind="get-batch").abort()
    with pytest.raises(RuntimeError, match="cut short|ends without|ends inside"):
        for _ in items:
            got += 1
    assert got < 3000
    status = client.job(job_id).status()
    deadline = time.monotonic() + 10
    while status.end_time == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        status = client.job(job_id).status()
    assert status.aborted
    assert job_id not in _get_batch_jobs(client, b0)
    # A new request works, under a new job.
    assert [len(d) for _, d in client.batch(["obj/100"], bucket=b0).get()] == [100]
    assert _get_batch_jobs(client, b0) != [job_id]
    finished = {s.uuid: s for s in client.cluster().list_jobs_status("get-batch")}
    assert finished[job_id].aborted
