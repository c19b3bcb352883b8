"""Bad input and rude clients against the real server.

Every bad request gets a clear 4xx carrying the AIS error JSON (`message`, `status`, ...; for HEAD
in the `Hdr-Error` header), stores nothing (listing, object files, chunk dirs and work dirs are
checked on the mountpaths), and the server keeps serving. Clients that vanish mid-PUT leave no
object and no temp files; clients that vanish mid-GET leak no file descriptors.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
import requests
from _util import (
    RawResponse,
    assert_bucket_consistent,
    chunk_dirs,
    content_for,
    create_bucket,
    destroy_bucket,
    error_doc,
    obj_path,
    raw_request,
    set_bprops,
    wait_until,
    work_files,
)

from aistore.server import LocalServer

KEEP = "keep/me.bin"
KEEP_DATA = content_for(KEEP, 100_000)
JSON = {"Content-Type": "application/json"}


def fail(r: RawResponse, method: str, status: int, *needles: str) -> dict:
    """Assert `r` is the AIS error `status` whose message contains every needle."""
    assert r.status == status, f"{method}: expected {status}, got {r.status}: {r.body[:300]!r}"
    doc = error_doc(r.status, r.headers, r.body, method)
    for n in needles:
        assert n in doc["message"], f"{n!r} not in {doc['message']!r}"
    return doc


class Env:
    """The session server plus one bucket holding one known object."""

    def __init__(self, srv: LocalServer, bucket: str) -> None:
        self.srv = srv
        self.ep = srv.endpoint
        self.bucket = bucket
        self.mps = srv.mountpaths
        self.names = {KEEP}  # what the bucket must contain
        # Work files of other tests' in-flight uploads may exist; ours must come and go.
        self.work_before = set(work_files(self.mps))

    def new_work(self) -> set[str]:
        return set(work_files(self.mps)) - self.work_before

    def req(self, method: str, path: str, **kw) -> RawResponse:  # type: ignore[no-untyped-def]
        return raw_request(self.ep, method, path, **kw)

    def assert_intact(self) -> None:
        """The server still serves, and the bad request left nothing behind."""
        r = self.req("GET", "/v1/health")
        assert r.status == 200
        r = self.req("GET", obj_path(self.bucket, KEEP))
        assert r.status == 200 and r.body == KEEP_DATA
        wait_until(lambda: not self.new_work(), 5, "no new work files")
        assert assert_bucket_consistent(self.ep, self.mps, self.bucket) == self.names


@pytest.fixture
def env(ais_server: LocalServer) -> Iterator[Env]:
    bucket = f"rob-{uuid.uuid4().hex[:10]}"
    create_bucket(ais_server.endpoint, bucket)
    e = Env(ais_server, bucket)
    assert e.req("PUT", obj_path(bucket, KEEP), body=KEEP_DATA).status == 200
    yield e
    e.assert_intact()
    destroy_bucket(ais_server.endpoint, bucket)


# ---- object names -----------------------------------------------------------------------------

BAD_OBJECT_PATHS = [
    # (raw path suffix after /v1/objects/<bck>/, message fragment)
    ("..", "'..'"),
    ("a/../b", "'..'"),
    ("./x", "'.'"),
    ("a/./b", "'.'"),
    ("a/..", "'..'"),
    ("%2e%2e/x", "'..'"),  # percent-encoded dots are decoded before validation
    ("a/%2E%2E/b", "'..'"),
    ("~/x", "~/"),
    ("%7E/x", "~/"),
    ("a%00b", "control"),
    ("a%0Ab", "control"),
    ("a%0D%0Aset-cookie:x", "control"),
    ("a//b", "'//'"),
    ("/x", "'/'"),
    ("x" * 1025, "too long"),
    ("/".join(["y" * 200] * 6), "too long"),  # 1205 bytes, every component short
    ("z" * 255, "too long"),
    ("d/" + "z" * 255 + "/e", "too long"),
]


@pytest.mark.parametrize("suffix,needle", BAD_OBJECT_PATHS, ids=lambda v: v[:24])
@pytest.mark.parametrize("method", ["PUT", "GET", "HEAD", "DELETE"])
def test_bad_object_name(env: Env, method: str, suffix: str, needle: str) -> None:
    body = b"should not be stored" if method == "PUT" else None
    r = env.req(method, f"/v1/objects/{env.bucket}/{suffix}", body=body)
    fail(r, method, 400, "invalid object name", needle)
    env.assert_intact()


@pytest.mark.parametrize("method", ["PUT", "GET", "DELETE"])
def test_trailing_slash_rejected(env: Env, method: str) -> None:
    r = env.req(method, f"/v1/objects/{env.bucket}/dir/", body=b"x" if method == "PUT" else None)
    fail(r, method, 400, "must not end with '/'")
    env.assert_intact()


def test_trailing_slash_head_probes_virtual_dir(env: Env) -> None:
    # HEAD may probe a "directory": not an error of the name, just not an object.
    r = env.req("HEAD", f"/v1/objects/{env.bucket}/keep/")
    fail(r, "HEAD", 404, f"ais://{env.bucket}/keep/")


def test_name_length_limits_are_inclusive(env: Env) -> None:
    """The longest legal names (1024 bytes, 254-byte components) round-trip."""
    longest = "/".join(["a" * 254] * 4) + "/" + "b" * 4  # 1024 bytes
    widest = "c" * 254
    assert len(longest.encode()) == 1024
    for name in (longest, widest):
        data = content_for(name, 1000)
        assert env.req("PUT", obj_path(env.bucket, name), body=data).status == 200
        r = env.req("GET", obj_path(env.bucket, name))
        assert r.status == 200 and r.body == data
        env.names.add(name)
    env.assert_intact()


LEGAL_NAMES = [
    "with space",
    "#?%&=+!$()",
    ".hidden",
    "...",
    "-dash",
    "a/.b/..c",
    "ünï/çø",
    "~x",
    "x~/y",
]


@pytest.mark.parametrize("name", LEGAL_NAMES)
def test_unusual_but_legal_names(env: Env, name: str) -> None:
    """The validator is not over-strict: AIS allows these byte-exact."""
    data = name.encode() * 7
    assert env.req("PUT", obj_path(env.bucket, name), body=data).status == 200
    r = env.req("GET", obj_path(env.bucket, name))
    assert r.status == 200 and r.body == data
    env.names.add(name)
    env.assert_intact()


# ---- bucket names -----------------------------------------------------------------------------


def ais_dirs(mps: list[Path]) -> set[str]:
    return {d.name for mp in mps if (mp / "ais").is_dir() for d in (mp / "ais").iterdir()}


@pytest.mark.parametrize(
    "raw",
    [
        "*",
        ".",
        "%20",
        "bucket%20and%20name",
        "%23badname",
        "%24badname",
        "~badname",
        "a" * 65,
        "a..b",
        ".hidden",
        "bad%2Fname",
        "%00",
        "tab%09name",
    ],
)
def test_bad_bucket_name(env: Env, raw: str) -> None:
    before = ais_dirs(env.mps)
    buckets_before = env.req("GET", "/v1/buckets?provider=ais").body
    create = json.dumps({"action": "create-bck", "name": "", "value": None}).encode()
    r = env.req("POST", f"/v1/buckets/{raw}?provider=ais", headers=JSON, body=create)
    fail(r, "POST", 400, "bucket name")
    for method in ("PUT", "GET", "HEAD"):
        r = env.req(method, f"/v1/objects/{raw}/obj", body=b"data" if method == "PUT" else None)
        fail(r, method, 400, "bucket name")
    assert env.req("GET", "/v1/buckets?provider=ais").body == buckets_before
    assert ais_dirs(env.mps) == before
    env.assert_intact()


def test_bucket_name_with_extra_segment(env: Env) -> None:
    create = json.dumps({"action": "create-bck", "name": "", "value": None}).encode()
    r = env.req("POST", "/v1/buckets/bucket/badname?provider=ais", headers=JSON, body=create)
    fail(r, "POST", 400)
    assert "bucket" not in ais_dirs(env.mps)
    env.assert_intact()


def test_empty_bucket_name_cannot_be_created(env: Env) -> None:
    create = json.dumps({"action": "create-bck", "name": "", "value": None}).encode()
    r = env.req("POST", "/v1/buckets/?provider=ais", headers=JSON, body=create)
    assert r.status in (400, 405), r.body
    error_doc(r.status, r.headers, r.body, "POST")
    env.assert_intact()


def test_longest_bucket_name_is_legal(ais_server: LocalServer) -> None:
    name = "B" + "x" * 62 + "9"
    assert len(name) == 64
    create_bucket(ais_server.endpoint, name)
    destroy_bucket(ais_server.endpoint, name)


# ---- ranges -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rng,needle",
    [
        ("bytes=100000-", "beyond"),
        ("bytes=200000-300000", "beyond"),
        ("bytes=0-1,3-4", "multi-range"),
        ("bytes=0-0, 5-", "multi-range"),
        ("bytes=5-2", "precedes"),
        ("items=0-1", "bytes="),
        ("bytes=abc", ""),
        ("bytes=-", ""),
        ("bytes=-0", ""),
        ("bytes=1-x", ""),
    ],
)
def test_bad_range(env: Env, rng: str, needle: str) -> None:
    r = env.req("GET", obj_path(env.bucket, KEEP), headers={"Range": rng})
    fail(r, "GET", 416, needle)
    if "multi" not in needle and not rng.startswith("items"):
        assert r.header("Content-Range") == f"bytes */{len(KEEP_DATA)}"
    env.assert_intact()


def test_any_range_of_empty_object_is_416(env: Env) -> None:
    assert env.req("PUT", obj_path(env.bucket, "empty"), body=b"").status == 200
    env.names.add("empty")
    for rng in ("bytes=0-", "bytes=0-0", "bytes=-1"):
        r = env.req("GET", obj_path(env.bucket, "empty"), headers={"Range": rng})
        fail(r, "GET", 416)
        assert r.header("Content-Range") == "bytes */0"
    r = env.req("GET", obj_path(env.bucket, "empty"))
    assert r.status == 200 and r.body == b""
    env.assert_intact()


@pytest.mark.parametrize(
    "rng,start,end",
    [
        ("bytes=0-0", 0, 0),
        ("bytes=99990-200000", 99990, 99999),
        ("bytes=-7", 99993, 99999),
        ("bytes=-500000", 0, 99999),
        ("bytes=12345-", 12345, 99999),
    ],
)
def test_good_range(env: Env, rng: str, start: int, end: int) -> None:
    r = env.req("GET", obj_path(env.bucket, KEEP), headers={"Range": rng})
    assert r.status == 206
    assert r.body == KEEP_DATA[start : end + 1]
    assert r.header("Content-Range") == f"bytes {start}-{end}/{len(KEEP_DATA)}"
    assert r.header("Content-Length") == str(end - start + 1)


def test_connection_close_gets_the_whole_body(env: Env) -> None:
    """A client that sends `Connection: close` (urllib always does) gets every byte of the reply,
    then the close: a small body goes out with its headers, a larger one from its files after
    them (it used to be dropped: the headers announced it and the connection closed)."""
    import urllib.request

    for size in (1000, 64 * 1024 + 1, 3 * 1024 * 1024 + 7):
        name = f"close-{size}"
        data = os.urandom(size)
        assert env.req("PUT", obj_path(env.bucket, name), body=data).status == 200
        env.names.add(name)
        url = env.ep + obj_path(env.bucket, name)
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.headers["Connection"] == "close"
            assert r.read() == data
        ranged = urllib.request.Request(url, headers={"Range": f"bytes=1-{size - 2}"})
        with urllib.request.urlopen(ranged, timeout=30) as r:
            assert r.status == 206 and r.read() == data[1:-1]


# ---- JSON bodies, actions, props ---------------------------------------------------------------

ACTION_CALLS = [
    ("POST", "bucket"),
    ("GET", "bucket"),
    ("PATCH", "bucket"),
    ("DELETE", "bucket"),
    ("POST", "object"),
]
MALFORMED = [b"{not json", b"[1,2,3]", b'"create-bck"', b"\xff\xfe\x00", b'{"action": ', b"null"]


@pytest.mark.parametrize("body", MALFORMED, ids=range(len(MALFORMED)))
@pytest.mark.parametrize("method,where", ACTION_CALLS)
def test_malformed_json(env: Env, method: str, where: str, body: bytes) -> None:
    path = f"/v1/buckets/{env.bucket}" if where == "bucket" else obj_path(env.bucket, KEEP)
    r = env.req(method, path, headers=JSON, body=body)
    fail(r, method, 400)
    assert env.req("HEAD", f"/v1/buckets/{env.bucket}").status == 200  # DELETE did not destroy it
    env.assert_intact()


@pytest.mark.parametrize("what", ["status", "qryxstats"])
def test_malformed_json_jobs_query(env: Env, what: str) -> None:
    r = env.req("GET", f"/v1/cluster?what={what}", headers=JSON, body=b"{oops")
    fail(r, "GET", 400, "JSON")


@pytest.mark.parametrize("method,where", ACTION_CALLS)
def test_unknown_action(env: Env, method: str, where: str) -> None:
    path = f"/v1/buckets/{env.bucket}" if where == "bucket" else obj_path(env.bucket, KEEP)
    body = json.dumps({"action": "frobnicate", "name": "", "value": None}).encode()
    r = env.req(method, path, headers=JSON, body=body)
    fail(r, method, 400, 'invalid action "frobnicate"')
    env.assert_intact()


@pytest.mark.parametrize(
    "value",
    [
        {"chunks": {"chunk_size": "7 bananas"}},
        {"chunks": {"chunk_size": "1B"}},
        {"chunks": {"chunk_size": "6GiB"}},
        {"chunks": {"objsize_limit": -1}},
        {"chunks": {"max_monolithic_size": "1KiB"}},
        {"checksum": {"type": "crc64"}},
        {"checksum": {"type": 5}},
        {"versioning": {"enabled": "yes"}},
        "not-an-object",
    ],
)
def test_bad_bucket_props_change_nothing(env: Env, value: object) -> None:
    before = env.req("HEAD", f"/v1/buckets/{env.bucket}").header("Ais-Bucket-Props")
    body = json.dumps({"action": "set-bprops", "name": "", "value": value}).encode()
    fail(env.req("PATCH", f"/v1/buckets/{env.bucket}", headers=JSON, body=body), "PATCH", 400)
    assert env.req("HEAD", f"/v1/buckets/{env.bucket}").header("Ais-Bucket-Props") == before
    name = f"rob-{uuid.uuid4().hex[:10]}"
    create = json.dumps({"action": "create-bck", "name": "", "value": value}).encode()
    fail(env.req("POST", f"/v1/buckets/{name}", headers=JSON, body=create), "POST", 400)
    assert env.req("HEAD", f"/v1/buckets/{name}").status == 404
    assert name not in ais_dirs(env.mps)
    env.assert_intact()


@pytest.mark.parametrize(
    "value,needle",
    [
        ({"prefix": "../x"}, "'..'"),
        ({"prefix": "a/./b"}, "'.'"),
        ({"prefix": "~/x"}, "~/"),
        ({"prefix": "a\nb"}, "control"),
        ({"pagesize": -1}, "pagesize"),
        ({"pagesize": "x"}, "pagesize"),
        ({"flags": "512"}, "not-cached"),
        ({"flags": "abc"}, "flags"),
        ({"props": "bogus"}, "invalid property"),
        ({"continuation_token": 5}, '"value.continuation_token": expecting a string'),
        ({"uuid": None, "no_such_field": 1}, 'unknown field "value.no_such_field"'),
        ("not-an-object", '"value" must be a JSON object'),
    ],
)
def test_bad_list_request(env: Env, value: object, needle: str) -> None:
    body = json.dumps({"action": "list", "name": "", "value": value}).encode()
    fail(env.req("GET", f"/v1/buckets/{env.bucket}", headers=JSON, body=body), "GET", 400, needle)
    env.assert_intact()


@pytest.mark.parametrize("props", ["bogus", "name,cached", "size,status", "present", "x y"])
def test_unknown_head_prop(env: Env, props: str) -> None:
    r = env.req("HEAD", obj_path(env.bucket, KEEP) + "?props=" + quote(props))
    fail(r, "HEAD", 400, "invalid property")
    env.assert_intact()


# ---- missing things, conflicts ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE"])
def test_missing_object(env: Env, method: str) -> None:
    doc = fail(
        env.req(method, obj_path(env.bucket, "no/such.bin")),
        method,
        404,
        f"ais://{env.bucket}/no/such.bin",
    )
    assert doc.get("tcode") != "ErrBckNotFound"


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "PUT", "POST"])
def test_missing_bucket_object_calls(env: Env, method: str) -> None:
    nob = f"nob-{uuid.uuid4().hex[:8]}"
    body = None
    if method == "PUT":
        body = b"orphan"
    elif method == "POST":
        body = json.dumps({"action": "mpt-upload", "name": "", "value": None}).encode()
    r = env.req(method, obj_path(nob, "obj"), body=body)
    doc = fail(r, method, 404, f"ais://{nob}")
    assert f"ais://{nob}/" not in doc["message"]  # the SDK tells bucket from object by this slash
    assert nob not in ais_dirs(env.mps)
    env.assert_intact()


@pytest.mark.parametrize("method", ["HEAD", "DELETE", "GET", "PATCH"])
def test_missing_bucket_bucket_calls(env: Env, method: str) -> None:
    nob = f"nob-{uuid.uuid4().hex[:8]}"
    action = {"GET": "list", "DELETE": "destroy-bck", "PATCH": "set-bprops"}.get(method)
    body = json.dumps({"action": action, "name": "", "value": None}).encode() if action else None
    r = env.req(method, f"/v1/buckets/{nob}?provider=ais", headers=JSON, body=body)
    doc = fail(r, method, 404, f'"ais://{nob}"')
    assert doc.get("tcode") == "ErrBckNotFound"
    assert nob not in ais_dirs(env.mps)


def test_create_existing_bucket_is_409(env: Env) -> None:
    create = json.dumps({"action": "create-bck", "name": "", "value": None}).encode()
    r = env.req("POST", f"/v1/buckets/{env.bucket}?provider=ais", headers=JSON, body=create)
    fail(r, "POST", 409, f'"ais://{env.bucket}" already exists')
    env.assert_intact()  # the existing bucket and its object are untouched


# ---- HTTP-level abuse ---------------------------------------------------------------------------


def test_header_section_over_64k_is_431(env: Env) -> None:
    r = env.req("GET", obj_path(env.bucket, KEEP), headers={"X-Big": "a" * (65 << 10)})
    assert r.status == 431
    assert json.loads(r.body)["status"] == 431
    many = {f"X-H{i}": "b" * 1000 for i in range(70)}  # no single header is large
    r = env.req("PUT", obj_path(env.bucket, "h431"), headers=many, body=b"never stored")
    assert r.status == 431
    env.assert_intact()


def test_header_section_just_under_limit_is_served(env: Env) -> None:
    r = env.req("GET", obj_path(env.bucket, KEEP), headers={"X-Big": "a" * (60 << 10)})
    assert r.status == 200 and r.body == KEEP_DATA


@pytest.mark.parametrize(
    "method,path",
    [
        ("CONNECT", "object"),
        ("OPTIONS", "object"),
        ("TRACE", "object"),
        ("TRACE", "bucket"),  # PUT is a bucket method: multi-object archive (AIS)
        ("OPTIONS", "bucket"),
        ("POST", "/v1/health"),
        ("DELETE", "/v1/cluster?what=smap"),
    ],
)
def test_wrong_method_is_405(env: Env, method: str, path: str) -> None:
    if path == "object":
        path = obj_path(env.bucket, KEEP)
    elif path == "bucket":
        path = f"/v1/buckets/{env.bucket}"
    r = env.req(method, path)
    fail(r, method, 405)
    assert r.header("Allow")
    env.assert_intact()


def send_raw(ep: str, data: bytes) -> bytes:
    u = urlsplit(ep)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "data",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /v1/health HTTP/9.9\r\n\r\n",
        b"PUT /v1/objects/x/y HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        b"PUT /v1/objects/x/y HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        b"PUT /v1/objects/{B}/y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET /v1/health HTTP/1.1\r\nBad Header Line\r\n\r\n",
    ],
    ids=["garbage", "version", "neg-length", "dup-length", "bad-chunk", "bad-header"],
)
def test_malformed_http_is_400_then_close(env: Env, data: bytes) -> None:
    # send_raw returns once the server closes the connection
    reply = send_raw(env.ep, data.replace(b"{B}", env.bucket.encode()))
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), reply[:200]
    assert json.loads(body)["status"] == 400
    env.assert_intact()


# ---- clients that vanish ------------------------------------------------------------------------

TEN_MIB = 10 << 20


def abort_socket(s: socket.socket, rst: bool) -> None:
    if rst:  # abortive close: the server sees ECONNRESET instead of EOF
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


@pytest.mark.parametrize("rst", [False, True], ids=["fin", "rst"])
@pytest.mark.parametrize("chunked", [False, True], ids=["monolithic", "chunked"])
def test_disconnect_mid_put_stores_nothing(env: Env, chunked: bool, rst: bool) -> None:
    if chunked:
        set_bprops(
            env.ep, env.bucket, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}}
        )
    u = urlsplit(env.ep)
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.sendall(
        f"PUT {obj_path(env.bucket, 'partial.bin')} HTTP/1.1\r\nHost: x\r\n"
        f"Content-Length: {TEN_MIB}\r\n\r\n".encode()
    )
    s.sendall(b"p" * (1 << 20))
    # The server is mid-PUT once the writer's files exist: a temp file, or chunk files + marker.
    if chunked:
        wait_until(lambda: chunk_dirs(env.mps, env.bucket), 5, "chunk files of the partial PUT")
    wait_until(lambda: env.new_work(), 5, "the partial PUT's work file")
    abort_socket(s, rst)
    wait_until(lambda: not env.new_work(), 5, "work files removed after the disconnect")
    wait_until(lambda: not chunk_dirs(env.mps, env.bucket), 5, "chunks removed after disconnect")
    fail(env.req("HEAD", obj_path(env.bucket, "partial.bin")), "HEAD", 404)
    env.assert_intact()
    # The same name is writable afterwards.
    data = content_for("partial.bin", TEN_MIB)
    assert env.req("PUT", obj_path(env.bucket, "partial.bin"), body=data).status == 200
    assert env.req("GET", obj_path(env.bucket, "partial.bin")).body == data
    env.names.add("partial.bin")
    env.assert_intact()


def test_disconnect_mid_put_keeps_previous_version(env: Env) -> None:
    u = urlsplit(env.ep)
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    head = (
        f"PUT {obj_path(env.bucket, KEEP)} HTTP/1.1\r\nHost: x\r\nContent-Length: {TEN_MIB}\r\n\r\n"
    )
    s.sendall(head.encode())
    s.sendall(b"n" * (2 << 20))
    wait_until(lambda: env.new_work(), 5, "the overwrite's work file")
    abort_socket(s, rst=False)
    wait_until(lambda: not env.new_work(), 5, "work files removed after the disconnect")
    r = env.req("HEAD", obj_path(env.bucket, KEEP) + "?props=version")
    assert r.status == 200 and r.header("Ais-Version") == "1"
    env.assert_intact()  # KEEP still has its old bytes


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def accepted_from(pid: int, client_ports: set[int]) -> int:
    """How many of the given client ports have a connection the server process has accepted."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    count = 0
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            for row in f.read().splitlines()[1:]:
                cols = row.split()
                remote_port = int(cols[2].rsplit(":", 1)[1], 16)
                count += remote_port in client_ports and cols[9] in inodes
    return count


@pytest.mark.parametrize("chunked", [False, True], ids=["monolithic", "chunked"])
def test_disconnect_mid_get_keeps_serving(env: Env, chunked: bool) -> None:
    if chunked:
        set_bprops(env.ep, env.bucket, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "1MiB"}})
    name, size = "big.bin", 24 << 20
    data = content_for(name, size)
    assert env.req("PUT", obj_path(env.bucket, name), body=data).status == 200
    env.names.add(name)
    pid = env.srv.pid
    assert pid is not None
    baseline = open_fds(pid)
    u = urlsplit(env.ep)
    for i in range(12):
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        rng = f"Range: bytes={i * 1000}-\r\n" if i % 3 == 2 else ""
        s.sendall(f"GET {obj_path(env.bucket, name)} HTTP/1.1\r\nHost: x\r\n{rng}\r\n".encode())
        got = s.recv(65536)
        assert got.startswith(b"HTTP/1.1 20"), got[:100]
        abort_socket(s, rst=i % 2 == 1)
    # Each aborted GET released its socket and its object/chunk fds.
    wait_until(lambda: open_fds(pid) <= baseline, 10, f"fds back to {baseline}")
    r = requests.get(env.ep + obj_path(env.bucket, name), timeout=30)
    assert r.status_code == 200 and r.content == data
    env.assert_intact()


# ---- connection reuse after errors ------------------------------------------------------------


def read_response(f) -> tuple[int, dict[str, str], bytes]:  # type: ignore[no-untyped-def]
    """One HTTP/1.1 response with a Content-Length body from a socket file."""
    status_line = f.readline()
    assert status_line.startswith(b"HTTP/1.1 "), status_line
    headers = {}
    while (line := f.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get("content-length", "0")))
    return int(status_line.split()[1]), headers, body


def put_head(path: str, length: int, extra: str = "") -> bytes:
    return f"PUT {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Length: {length}\r\n\r\n".encode()


@pytest.mark.parametrize("case", ["bad-name", "missing-bucket", "bad-checksum", "bad-range"])
def test_error_reply_keeps_connection_usable(env: Env, case: str) -> None:
    """After an error reply (body read or not), the next request on the same connection works."""
    body = b"q" * (1 << 20)
    if case == "bad-name":
        first = put_head(f"/v1/objects/{env.bucket}/a/../b", len(body)) + body
    elif case == "missing-bucket":
        first = put_head(obj_path("nob-zz", "x"), len(body)) + body
    elif case == "bad-checksum":
        cks = "Ais-Checksum-Type: xxhash\r\nAis-Checksum-Value: 0123456789abcdef\r\n"
        first = put_head(obj_path(env.bucket, "x"), len(body), cks) + body
    else:
        first = f"GET {obj_path(env.bucket, KEEP)} HTTP/1.1\r\nHost: x\r\nRange: bytes=9-1\r\n\r\n"
        first = first.encode()
    second = f"GET {obj_path(env.bucket, KEEP)} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    u = urlsplit(env.ep)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(first + second)  # pipelined
        f = s.makefile("rb")
        status, headers, err = read_response(f)
        assert 400 <= status < 500
        assert json.loads(err)["status"] == status
        status, _, data = read_response(f)
        assert status == 200 and data == KEEP_DATA
    env.assert_intact()


def test_expect_continue_error_is_sent_without_reading_body(env: Env) -> None:
    u = urlsplit(env.ep)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(put_head(obj_path("nob-zz", "x"), 100 << 20, "Expect: 100-continue\r\n"))
        status, headers, body = read_response(s.makefile("rb"))
        assert status == 404 and "ais://nob-zz" in json.loads(body)["message"]
        # The body was never sent; the server must not keep waiting for it on this connection.
        s.settimeout(5)
        assert s.recv(1) == b""
    env.assert_intact()


def test_expect_continue_success(env: Env) -> None:
    u = urlsplit(env.ep)
    data = content_for("cont", 300_000)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(put_head(obj_path(env.bucket, "cont"), len(data), "Expect: 100-continue\r\n"))
        f = s.makefile("rb")
        assert f.readline().startswith(b"HTTP/1.1 100")
        assert f.readline() == b"\r\n"
        s.sendall(data)
        status, headers, _ = read_response(f)
        assert status == 200 and headers["ais-checksum-type"] == "xxhash2"
    env.names.add("cont")
    assert env.req("GET", obj_path(env.bucket, "cont")).body == data
    env.assert_intact()


@pytest.mark.parametrize("chunked_bucket", [False, True], ids=["monolithic", "chunked"])
def test_chunked_transfer_encoding_put(env: Env, chunked_bucket: bool) -> None:
    if chunked_bucket:
        set_bprops(
            env.ep, env.bucket, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}}
        )
    data = content_for("te", 3 * (1 << 20) + 5)
    pieces = [data[i : i + 100_000] for i in range(0, len(data), 100_000)]
    r = requests.put(env.ep + obj_path(env.bucket, "te"), data=iter(pieces), timeout=30)
    assert r.status_code == 200, r.text
    env.names.add("te")
    assert env.req("GET", obj_path(env.bucket, "te")).body == data
    env.assert_intact()


def test_objects_nest_under_object_names(env: Env) -> None:
    """ "a", "a/b" and "a/b/c" are three objects; deleting one leaves the others."""
    for name in ("a", "a/b", "a/b/c", "a/bc"):
        assert env.req("PUT", obj_path(env.bucket, name), body=name.encode()).status == 200
        env.names.add(name)
    env.assert_intact()
    assert env.req("DELETE", obj_path(env.bucket, "a/b")).status == 200
    env.names.discard("a/b")
    for name in ("a", "a/b/c", "a/bc"):
        assert env.req("GET", obj_path(env.bucket, name)).body == name.encode()
    fail(env.req("GET", obj_path(env.bucket, "a/b")), "GET", 404, f"ais://{env.bucket}/a/b")
    env.assert_intact()


def test_oversized_json_body_is_400(env: Env) -> None:
    msg = {"action": "list", "name": "", "value": {"prefix": "p" * (5 << 20)}}
    r = env.req("GET", f"/v1/buckets/{env.bucket}", headers=JSON, body=json.dumps(msg).encode())
    fail(r, "GET", 400, "too large")
    env.assert_intact()


def test_stalled_clients_do_not_block_others(env: Env) -> None:
    """Idle connections and half-sent headers neither block other clients nor leak fds."""
    pid = env.srv.pid
    assert pid is not None
    baseline = open_fds(pid)
    u = urlsplit(env.ep)
    stalled = []
    try:
        for i in range(200):
            s = socket.create_connection((u.hostname, u.port), timeout=10)
            if i % 2:
                s.sendall(b"GET /v1/health HTTP/1.1\r\nHo")  # never finished
            stalled.append(s)
        ports = {s.getsockname()[1] for s in stalled}
        wait_until(lambda: accepted_from(pid, ports) == 200, 5, "the server to accept them all")
        r = env.req("GET", obj_path(env.bucket, KEEP), timeout=5)
        assert r.status == 200 and r.body == KEEP_DATA
    finally:
        for s in stalled:
            s.close()
    wait_until(lambda: open_fds(pid) <= baseline, 10, f"fds back to {baseline}")
    env.assert_intact()
