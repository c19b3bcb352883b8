"""The one error path of the server (issue 17): handlers return a Status, the router replies with
it. These pin what that reply carries for the errors whose path moved: headers staged by the
handler (Content-Range of a 416), the AIS error code carried by the Status (ErrBckNotFound in
"tcode", never inferred from the message text), HEAD errors in Hdr-Error, errors that come
after the request body was read, and a multipart GetBatch whose spool (the work directory)
fails: a clean AIS error, never part of a reply. (The replies made before a request's head is
read, 431/400/503, and a file shorter than its segments under ReplyFile are pinned by the C++
unit tests in server/src/http/server_test.cc.)"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _util import (
    content_for,
    create_bucket,
    destroy_bucket,
    error_doc,
    obj_path,
    raw_request,
    wait_until,
    work_files,
)

from aistore.server import LocalServer

MiB = 1 << 20


def _bucket(ep: str) -> str:
    name = "errpath-" + uuid.uuid4().hex[:8]
    create_bucket(ep, name)
    return name


def test_unsatisfiable_range_is_416_with_content_range(ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        assert raw_request(ep, "PUT", obj_path(b, "five"), body=b"12345").status == 200
        r = raw_request(ep, "GET", obj_path(b, "five"), headers={"Range": "bytes=10-20"})
        assert r.status == 416
        assert r.header("Content-Range") == "bytes */5"
        assert r.header("X-Content-Type-Options") == "nosniff"
        error_doc(r.status, r.headers, r.body, "GET")
        # Malformed (not "bytes="): no size is named.
        r = raw_request(ep, "GET", obj_path(b, "five"), headers={"Range": "pages=1-2"})
        assert r.status == 416 and r.header("Content-Range") is None
        # The staged header belongs to that one exchange: a later error on a kept-alive
        # connection does not carry it (each request gets a fresh Exchange).
        r = raw_request(ep, "GET", obj_path(b, "absent"))
        assert r.status == 404 and r.header("Content-Range") is None
    finally:
        destroy_bucket(ep, b)


def test_bucket_not_found_carries_its_code(ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    missing = "nobucket-" + uuid.uuid4().hex[:8]
    for method in ("GET", "HEAD", "DELETE"):
        r = raw_request(ep, method, obj_path(missing, "o"))
        assert r.status == 404, (method, r.status)
        doc = error_doc(r.status, r.headers, r.body, method)
        assert doc.get("tcode") == "ErrBckNotFound", doc
        assert doc["message"] == f'bucket "ais://{missing}" does not exist'
    r = raw_request(ep, "PUT", obj_path(missing, "o"), body=b"x" * 1000)
    assert (
        r.status == 404
        and error_doc(r.status, r.headers, r.body, "PUT").get("tcode") == "ErrBckNotFound"
    )


def test_object_not_found_has_no_bucket_code(ais_server: LocalServer) -> None:
    """An object whose name reads like the bucket message is still an object 404: the code travels
    on the Status, the text decides nothing."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        for method in ("GET", "HEAD"):
            r = raw_request(ep, method, obj_path(b, 'bucket "x" does not exist'))
            assert r.status == 404
            doc = error_doc(r.status, r.headers, r.body, method)
            assert "tcode" not in doc, doc
    finally:
        destroy_bucket(ep, b)


def test_error_after_body_read(ais_server: LocalServer) -> None:
    """A PUT whose checksum does not match fails after its body was read: a 400 on the same path,
    and the connection stays usable."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        r = raw_request(
            ep,
            "PUT",
            obj_path(b, "bad"),
            body=b"hello",
            headers={"Ais-Checksum-Type": "md5", "Ais-Checksum-Value": "0" * 32},
        )
        assert r.status == 400
        assert error_doc(r.status, r.headers, r.body, "PUT")["message"].startswith(
            "BAD DATA CHECKSUM"
        )
        assert raw_request(ep, "HEAD", obj_path(b, "bad")).status == 404
    finally:
        destroy_bucket(ep, b)


def test_getbatch_error_before_the_first_byte(ais_server: LocalServer) -> None:
    """A streamed GetBatch that fails before anything was sent is a normal error reply."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        body = json.dumps(
            {"mime": ".tar", "strm": True, "in": [{"objname": "absent", "bucket": b}]}
        ).encode()
        r = raw_request(
            ep, "GET", f"/v1/ml/moss/{b}", body=body, headers={"Content-Type": "application/json"}
        )
        assert r.status == 404, r.body
        error_doc(r.status, r.headers, r.body, "GET")
        missing = "nobucket-" + uuid.uuid4().hex[:8]
        body = json.dumps(
            {"mime": ".tar", "strm": True, "in": [{"objname": "o", "bucket": missing}]}
        ).encode()
        r = raw_request(
            ep, "GET", f"/v1/ml/moss/{b}", body=body, headers={"Content-Type": "application/json"}
        )
        assert r.status == 404
        assert error_doc(r.status, r.headers, r.body, "GET").get("tcode") == "ErrBckNotFound"
    finally:
        destroy_bucket(ep, b)


# --- a multipart GetBatch whose spool fails ---------------------------------------------------


@pytest.fixture(scope="module")
def tmpfs_server() -> Iterator[LocalServer]:
    """A server on two small tmpfs mountpaths (skipped where mount is refused)."""
    root = Path(tempfile.mkdtemp(prefix="ais-spool-"))
    mounted: list[Path] = []
    try:
        for name in ("mp0", "mp1"):
            mp = root / name
            mp.mkdir()
            res = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mp)],
                capture_output=True,
                text=True,
                check=False,
            )
            if res.returncode != 0:
                pytest.skip(f"cannot mount tmpfs here (needs root): {res.stderr.strip()}")
            mounted.append(mp)
        with LocalServer(mounted) as srv:
            yield srv
    finally:
        for mp in reversed(mounted):
            subprocess.run(["umount", "-l", str(mp)], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


def _fill(path: Path) -> None:
    """Writes `path` until its filesystem is full."""
    block = b"\0" * MiB
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    # Whatever is left is less than one block: take it too, a page at a time.
    with open(path, "ab", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e


def _multipart(ep: str, bucket: str, names: list[str]) -> tuple[int, str, bytes]:
    body = json.dumps(
        {"mime": ".tar", "strm": False, "in": [{"objname": n} for n in names]}
    ).encode()
    r = raw_request(
        ep, "GET", f"/v1/ml/moss/{bucket}", body=body, headers={"Content-Type": "application/json"}
    )
    return r.status, r.header("Content-Type") or "", r.body


def test_multipart_getbatch_on_a_full_disk_is_507_and_nothing_partial(
    tmpfs_server: LocalServer,
) -> None:
    ep, mps = tmpfs_server.endpoint, [Path(p) for p in tmpfs_server.mountpaths]
    b = _bucket(ep)
    names = [f"o{i}" for i in range(6)]
    for n in names:
        assert raw_request(ep, "PUT", obj_path(b, n), body=content_for(n, MiB)).status == 200
    free = os.statvfs(mps[0]).f_bavail
    status, ctype, _ = _multipart(ep, b, names)
    assert status == 200 and ctype.startswith("multipart/mixed"), status
    # Its spool (an unlinked file on mp0) may be held a moment after the reply's last byte:
    # filling before it is freed would leave room for the next one.
    wait_until(lambda: os.statvfs(mps[0]).f_bavail >= free, 10, "the first spool freed")
    fillers = [mp / "filler" for mp in mps]
    try:
        for f in fillers:
            _fill(f)
        status, ctype, body = _multipart(ep, b, names)
        assert status == 507, (status, body[:300])
        doc = error_doc(status, {"Content-Type": ctype}, body, "GET")
        assert "no space left on device" in doc["message"].lower(), doc
        assert work_files(mps) == []  # the spool left nothing behind
        # A streamed GetBatch needs no spool: it still serves, byte-exact.
        strm = json.dumps({"mime": ".tar", "strm": True, "in": [{"objname": "o0"}]}).encode()
        r = raw_request(ep, "GET", f"/v1/ml/moss/{b}", body=strm)
        assert r.status == 200 and content_for("o0", MiB) in r.body
    finally:
        for f in fillers:
            f.unlink(missing_ok=True)
    status, ctype, _ = _multipart(ep, b, names)
    assert status == 200 and ctype.startswith("multipart/mixed"), status
    destroy_bucket(ep, b)


def test_multipart_getbatch_with_no_work_dir_is_a_clean_error(tmpfs_server: LocalServer) -> None:
    ep, mps = tmpfs_server.endpoint, [Path(p) for p in tmpfs_server.mountpaths]
    b = _bucket(ep)
    assert raw_request(ep, "PUT", obj_path(b, "o"), body=content_for("o", 1000)).status == 200
    work = [mp / ".ais.work" for mp in mps]
    saved = [mp / "work.saved" for mp in mps]
    try:
        for w, keep in zip(work, saved, strict=True):
            w.rename(keep)
            w.write_bytes(b"not a directory")  # the spool cannot be created in it
        status, ctype, body = _multipart(ep, b, ["o"])
        # The work directory is the server's: its failure is a 500, not the client's 404.
        assert status == 500, (status, body[:300])
        doc = error_doc(status, {"Content-Type": ctype}, body, "GET")
        assert "spool" in doc["message"], doc
    finally:
        for w, keep in zip(work, saved, strict=True):
            w.unlink(missing_ok=True)
            keep.rename(w)
    status, ctype, _ = _multipart(ep, b, ["o"])
    assert status == 200 and ctype.startswith("multipart/mixed"), status
    destroy_bucket(ep, b)
