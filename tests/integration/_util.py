"""Helpers for the server integration tests: raw HTTP, AIS error JSON, job polling, disk scans.

The disk scans read the layout documented in server/src/store (mountpaths.h, object_meta.h):
`<mp>/ais/<bucket>/%ob/<name>` object files (directories carry a trailing \\x01), chunk files
`<mp>/ais/<bucket>/%ch/<upload id>/NNNN`, and per-mountpath work dirs `<mp>/.ais.work`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import http.client
import io
import json
import os
import random
import struct
import tarfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import msgspec
import requests

OBJ_MAGIC = b"AISOBJ01"
DIR_SUFFIX = "\x01"
ENTRY_IS_CACHED = 64
ENTRY_IS_CHUNKED = 8192


@dataclass
class RawResponse:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


def raw_request(
    endpoint: str,
    method: str,
    path: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = 30.0,
) -> RawResponse:
    """One request with the path sent byte for byte (no dot-segment removal, no re-quoting)."""
    u = urlsplit(endpoint)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        hdrs = dict(headers or {})
        if body is not None:
            hdrs.setdefault("Content-Length", str(len(body)))
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.endheaders(body)
        resp = conn.getresponse()
        data = resp.read()
        return RawResponse(resp.status, resp.headers, data)
    finally:
        conn.close()


def call(
    server: Any,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    params: dict[str, str] | None = None,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> requests.Response:
    """`method path` on `server` (a LocalServer) with `Authorization: Bearer <token>` when
    given, and `body` as JSON (else the raw `data`)."""
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    payload = json.dumps(body).encode() if body is not None else data
    return requests.request(
        method, server.endpoint + path, headers=h, data=payload, params=params, timeout=30
    )


def error_doc(status: int, headers: Mapping[str, str], body: bytes, method: str) -> dict[str, Any]:
    """The AIS error JSON of a failed reply: the body, or the `Hdr-Error` header for HEAD."""
    if method.upper() == "HEAD":
        text = headers.get("Hdr-Error")
        assert text, f"HEAD {status}: no Hdr-Error header in {dict(headers)}"
        assert not body
    else:
        ctype = headers.get("Content-Type", "")
        assert ctype.startswith("application/json"), f"error reply Content-Type is {ctype!r}"
        text = body.decode()
    doc = json.loads(text)
    assert isinstance(doc, dict), text
    assert isinstance(doc.get("message"), str) and doc["message"], f"no message in {text}"
    assert doc.get("status") == status, f"status {doc.get('status')} in JSON != HTTP {status}"
    return doc


def obj_path(bucket: str, name: str) -> str:
    return f"/v1/objects/{bucket}/{quote(name, safe='/')}"


def bucket_action(
    endpoint: str,
    method: str,
    bucket: str,
    action: str,
    value: Any = None,
    provider: str = "ais",
    query: str = "",
    ok: tuple[int, ...] = (200,),
) -> bytes:
    """An AIS action message to /v1/buckets/<bucket> (raw: as a client would send it, also where
    the SDK refuses to); the reply's body, after checking its status is one of `ok`."""
    r = raw_request(
        endpoint,
        method,
        f"/v1/buckets/{bucket}?provider={provider}{query}",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"action": action, "name": "", "value": value}).encode(),
    )
    assert r.status in ok, r.body
    return r.body


def create_bucket(endpoint: str, bucket: str, props: Mapping[str, Any] | None = None) -> None:
    bucket_action(endpoint, "POST", bucket, "create-bck", props)


def set_bprops(endpoint: str, bucket: str, value: Mapping[str, Any]) -> None:
    bucket_action(endpoint, "PATCH", bucket, "set-bprops", value)


def destroy_bucket(endpoint: str, bucket: str) -> None:
    bucket_action(endpoint, "DELETE", bucket, "destroy-bck", ok=(200, 404))


def list_entries(endpoint: str, bucket: str, props: str = "name,size") -> list[dict[str, Any]]:
    """Every entry of the bucket (JSON form), following continuation tokens."""
    out: list[dict[str, Any]] = []
    token, uuid = "", ""
    while True:
        msg = {"props": props, "pagesize": 1000, "continuation_token": token, "uuid": uuid}
        r = raw_request(
            endpoint,
            "GET",
            f"/v1/buckets/{bucket}?provider=ais",
            headers={"Content-Type": "application/json"},
            body=json.dumps({"action": "list", "name": "", "value": msg}).encode(),
        )
        assert r.status == 200, r.body
        page = json.loads(r.body)
        out.extend(page["entries"])
        uuid, token = page["uuid"], page["continuation_token"]
        if not token:
            return out


def list_names(endpoint: str, bucket: str) -> set[str]:
    return {e["name"] for e in list_entries(endpoint, bucket)}


def wait_until(pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.02) -> Any:
    """Poll `pred` until it returns something truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for: {what}")
        time.sleep(interval)


def wait_job(endpoint: str, job_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """Poll `GET /v1/cluster?what=status` until the job has an end time; returns the status."""

    def done() -> dict[str, Any] | None:
        r = raw_request(
            endpoint,
            "GET",
            "/v1/cluster?what=status",
            headers={"Content-Type": "application/json"},
            body=json.dumps({"id": job_id}).encode(),
        )
        assert r.status == 200, r.body
        st = json.loads(r.body)
        return st if st.get("end_time") else None

    return wait_until(done, timeout, f"job {job_id} to finish", interval=0.05)


def content_for(name: str, size: int) -> bytes:
    """Deterministic bytes for (name, size): an object verifies from its name and length."""
    return random.Random(f"{name}:{size}").randbytes(size)


def _load_libxxhash() -> Any:
    name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
    lib = ctypes.CDLL(name)
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return lib


def xxh64_hex(data: bytes) -> str:
    """XXH64 (seed 0) as AIS prints it, from the system libxxhash: independent of our code."""
    try:
        import xxhash  # type: ignore[import-not-found]

        return str(xxhash.xxh64_hexdigest(data))
    except ImportError:
        pass
    global _libxxhash
    if _libxxhash is None:
        _libxxhash = _load_libxxhash()
    return f"{_libxxhash.XXH64(data, len(data), 0):016x}"


_libxxhash: Any = None


# ---- disk scans -------------------------------------------------------------------------------


def work_files(mountpaths: Iterable[Path]) -> list[str]:
    """Everything inside every `<mp>/.ais.work` (temp files, chunk markers, trash)."""
    out = []
    for mp in mountpaths:
        work = Path(mp) / ".ais.work"
        if work.is_dir():
            out.extend(str(p) for p in work.iterdir())
    return out


def _decode_rel(rel: Path) -> str:
    parts = list(rel.parts)
    assert all(p.endswith(DIR_SUFFIX) for p in parts[:-1]), f"directory without suffix: {rel}"
    return "/".join([p[:-1] for p in parts[:-1]] + [parts[-1]])


def object_files(mountpaths: Iterable[Path], bucket: str) -> dict[str, Path]:
    """Object name -> object file, from every `<mp>/ais/<bucket>/%ob` tree."""
    out: dict[str, Path] = {}
    for mp in mountpaths:
        root = Path(mp) / "ais" / bucket / "%ob"
        if not root.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = Path(dirpath) / f
                name = _decode_rel(p.relative_to(root))
                assert name not in out, f"{name!r} stored twice: {out[name]}, {p}"
                out[name] = p
    return out


def read_object_meta(path: Path) -> dict[str, Any]:
    """Decode an object file's header: magic, u32 meta_len, u32 data_offset, msgpack meta."""
    with open(path, "rb") as f:
        head = f.read(16)
        assert head[:8] == OBJ_MAGIC, f"{path}: bad magic {head[:8]!r}"
        meta_len, data_offset = struct.unpack("<II", head[8:16])
        meta = msgspec.msgpack.decode(f.read(meta_len))
    meta["_data_offset"] = data_offset
    return meta


@dataclass
class ChunkDir:
    upload_id: str
    files: dict[int, Path] = field(default_factory=dict)  # chunk number -> file
    stray: list[Path] = field(default_factory=list)  # anything not named NNNN


def chunk_dirs(mountpaths: Iterable[Path], bucket: str) -> dict[str, ChunkDir]:
    """Upload id -> its chunk files, merged over every `<mp>/ais/<bucket>/%ch`."""
    out: dict[str, ChunkDir] = {}
    for mp in mountpaths:
        root = Path(mp) / "ais" / bucket / "%ch"
        if not root.is_dir():
            continue
        for d in root.iterdir():
            cd = out.setdefault(d.name, ChunkDir(d.name))
            for f in d.iterdir():
                if len(f.name) == 4 and f.name.isdigit():
                    assert int(f.name) not in cd.files, f"chunk {f} exists twice"
                    cd.files[int(f.name)] = f
                else:
                    cd.stray.append(f)
    return out


def assert_bucket_consistent(endpoint: str, mountpaths: list[Path], bucket: str) -> set[str]:
    """Listing, object files and chunk dirs agree exactly; returns the listed names.

    - every object file is listed and every listed name has exactly one object file;
    - every chunk dir is referenced by exactly one object, holds exactly its chunks 1..N with
      the recorded sizes, and nothing else.
    """
    listed = list_names(endpoint, bucket)
    files = object_files(mountpaths, bucket)
    assert set(files) == listed, (
        f"on disk but not listed: {sorted(set(files) - listed)[:5]}; "
        f"listed but not on disk: {sorted(listed - set(files))[:5]}"
    )
    chunks = chunk_dirs(mountpaths, bucket)
    referenced: dict[str, dict[str, Any]] = {}
    for name, path in files.items():
        meta = read_object_meta(path)
        assert meta["n"] == name
        if meta.get("u"):
            assert meta["u"] not in referenced, f"{name} shares upload {meta['u']}"
            referenced[meta["u"]] = meta
    orphans = set(chunks) - set(referenced)
    assert not orphans, f"chunk dirs no object references: {sorted(orphans)}"
    for uid, meta in referenced.items():
        cd = chunks.get(uid)
        assert cd is not None, f"{meta['n']}: chunk dir {uid} is missing"
        assert not cd.stray, f"stray files in chunk dir {uid}: {cd.stray}"
        sizes = meta["cs"]
        have = sorted(cd.files)
        assert have == list(range(1, len(sizes) + 1)), f"{meta['n']}: chunks {have}"
        for i, sz in enumerate(sizes, start=1):
            assert cd.files[i].stat().st_size == sz, f"{meta['n']}: chunk {i} size"
    return listed


def tar_bytes(members: dict[str, bytes], fmt: int = tarfile.GNU_FORMAT, mode: str = "w") -> bytes:
    """A tar (compressed as `mode` says: "w", "w:gz") of `members`, name -> bytes, in order."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode=mode, format=fmt) as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            t.addfile(info, io.BytesIO(data))
    return bio.getvalue()
