"""The server's configurable limits, against a real server started with tight ones.

Each limit is exercised just under and just over: under is served, over gets a 4xx (or 503 with
Retry-After) naming the limit, never a 5xx, a hang or unbounded memory, and the server serves on.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from _util import content_for, create_bucket, error_doc, obj_path, raw_request

from aistore.server import LocalServer, find_server_binary

LIMITS = [
    "--max-connections", "6",
    "--idle-timeout", "2",
    "--header-timeout", "1",
    "--max-header-size", "4KiB",
    "--max-json-body", "2KiB",
    "--max-json-depth", "4",
    "--getbatch-max-items", "3",
    "--list-max-page-size", "5",
]  # fmt: skip
BUCKET = "limits"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    root = tmp_path_factory.mktemp("limits")
    server = LocalServer(mountpaths=[root / "mp0", root / "mp1"], threads=2, args=LIMITS).start()
    create_bucket(server.endpoint, BUCKET)
    for i in range(8):
        name = f"obj-{i}"
        r = raw_request(server.endpoint, "PUT", obj_path(BUCKET, name), body=content_for(name, 100))
        assert r.status == 200
    yield server
    server.stop()


def connect(srv: LocalServer) -> socket.socket:
    u = urlsplit(srv.endpoint)
    return socket.create_connection((u.hostname, u.port), timeout=10)


def read_reply(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def assert_serves(srv: LocalServer) -> None:
    r = raw_request(srv.endpoint, "GET", obj_path(BUCKET, "obj-0"))
    assert r.status == 200 and r.body == content_for("obj-0", 100)


def served_connection(srv: LocalServer) -> socket.socket:
    """A kept-alive connection the server has taken (answered one request on it). Retries while
    the sessions of earlier, already closed connections still count against the limit."""
    deadline = time.monotonic() + 5
    while True:
        s = connect(srv)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = s.recv(4096)
        if reply.startswith(b"HTTP/1.1 200"):
            return s
        s.close()
        assert time.monotonic() < deadline, reply[:200]
        time.sleep(0.05)


def test_connections_over_the_limit_get_503_retry_after(srv: LocalServer) -> None:
    held = [served_connection(srv) for _ in range(6)]
    try:
        extra = connect(srv)
        reply = read_reply(extra)
        extra.close()
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), reply[:200]
        assert b"\r\nRetry-After: 1" in head
        assert json.loads(body)["status"] == 503
        # A held connection is served as usual.
        held[0].sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        for s in held:
            s.close()
    # Once they are gone, new connections are welcome again.
    deadline = time.monotonic() + 5
    while True:
        r = raw_request(srv.endpoint, "GET", "/v1/health")
        if r.status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r.status == 200


def test_idle_connection_is_closed(srv: LocalServer) -> None:
    s = connect(srv)
    s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert s.recv(4096).startswith(b"HTTP/1.1 200")
    t0 = time.monotonic()
    assert s.recv(4096) == b""  # closed by the server, not by our 10 s timeout
    waited = time.monotonic() - t0
    s.close()
    assert 1.5 < waited < 6, waited


def test_silent_new_connection_gets_no_idle_time(srv: LocalServer) -> None:
    # A new connection's first request is due within the header timeout (1 s), not the idle
    # timeout (2 s): a client cannot hold connections open by never sending a byte.
    s = connect(srv)
    t0 = time.monotonic()
    assert read_reply(s) == b""
    waited = time.monotonic() - t0
    s.close()
    assert 0.5 < waited < 1.8, waited


def test_connections_per_client_address_are_capped(tmp_path: Path) -> None:
    args = ["--max-connections-per-address", "2"]
    with LocalServer(mountpaths=[tmp_path / "mp"], threads=2, args=args) as other:
        held = [served_connection(other) for _ in range(2)]
        try:
            refused = connect(other)
            head = read_reply(refused).partition(b"\r\n\r\n")[0]
            refused.close()
            assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in head, head
            # Another address (127.0.0.2 is loopback too) has connections of its own.
            u = urlsplit(other.endpoint)
            s = socket.create_connection(
                (u.hostname, u.port), timeout=10, source_address=("127.0.0.2", 0)
            )
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
            s.close()
        finally:
            for h in held:
                h.close()
        served_connection(other).close()  # the address's slots come back


def test_slow_header_is_cut_off(srv: LocalServer) -> None:
    s = connect(srv)
    s.sendall(b"GET /v1/health HTTP/1.1\r\n")  # ... and the rest never comes
    t0 = time.monotonic()
    assert read_reply(s) == b""
    waited = time.monotonic() - t0
    s.close()
    assert waited < 4, waited
    assert_serves(srv)


def test_header_size_limit(srv: LocalServer) -> None:
    ok = raw_request(srv.endpoint, "GET", "/v1/health", headers={"X-Pad": "a" * 3000})
    assert ok.status == 200
    over = raw_request(srv.endpoint, "GET", "/v1/health", headers={"X-Pad": "a" * 5000})
    assert over.status == 431
    assert_serves(srv)


def test_json_body_size_limit(srv: LocalServer) -> None:
    path = f"/v1/buckets/{BUCKET}"
    fits = json.dumps({"action": "list", "value": {"prefix": "obj-", "uuid": "u" * 1500}}).encode()
    assert len(fits) < 2048
    assert raw_request(srv.endpoint, "GET", path, headers=JSON, body=fits).status == 200
    over = json.dumps({"action": "list", "value": {"prefix": "obj-", "uuid": "u" * 2100}}).encode()
    r = raw_request(srv.endpoint, "GET", path, headers=JSON, body=over)
    assert r.status == 400
    assert "too large" in error_doc(r.status, r.headers, r.body, "GET")["message"]
    assert_serves(srv)


def test_json_depth_limit(srv: LocalServer) -> None:
    path = f"/v1/buckets/{BUCKET}"
    # depth 4: the body, "value", and two more levels are allowed ...
    fits = {"action": "list", "value": {"prefix": "obj-", "props": None}}
    assert (
        raw_request(srv.endpoint, "GET", path, headers=JSON, body=json.dumps(fits).encode()).status
        == 200
    )
    # ... a fifth is not, wherever it is
    deep = b'{"action": "list", "value": {"a": {"b": {"c": {"d": 1}}}}}'
    r = raw_request(srv.endpoint, "GET", path, headers=JSON, body=deep)
    assert r.status == 400
    assert "nested deeper than 4" in error_doc(r.status, r.headers, r.body, "GET")["message"]
    # a nest far past the limit is refused just the same (no recursion, no memory blow-up)
    r = raw_request(srv.endpoint, "GET", path, headers=JSON, body=b"[" * 1500)
    assert r.status == 400
    assert_serves(srv)


def test_getbatch_item_limit(srv: LocalServer) -> None:
    def batch(n: int) -> bytes:
        return json.dumps(
            {"in": [{"objname": f"obj-{i}"} for i in range(n)], "mime": ".tar", "strm": True}
        ).encode()

    ok = raw_request(srv.endpoint, "GET", f"/v1/ml/moss/{BUCKET}", headers=JSON, body=batch(3))
    assert ok.status == 200 and len(ok.body) > 3 * 512
    r = raw_request(srv.endpoint, "GET", f"/v1/ml/moss/{BUCKET}", headers=JSON, body=batch(4))
    assert r.status == 400
    assert "more than 3 items" in error_doc(r.status, r.headers, r.body, "GET")["message"]
    assert_serves(srv)


def test_list_page_size_is_clamped(srv: LocalServer) -> None:
    client = srv.client()
    page = client.bucket(BUCKET).list_objects(page_size=100)
    assert len(page.entries) == 5 and page.continuation_token == "obj-4"
    names = [e.name for e in client.bucket(BUCKET).list_all_objects(page_size=100)]
    assert names == [f"obj-{i}" for i in range(8)]


@pytest.mark.parametrize(
    "flag,value",
    [("--max-connections", "0"), ("--max-json-depth", "1"), ("--max-header-size", "lots")],
)
def test_bad_limit_flags_exit_2(tmp_path: Path, flag: str, value: str) -> None:
    cmd = [str(find_server_binary()), "--mountpath", str(tmp_path), "--port", "0", flag, value]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert f"invalid {flag} {value}" in proc.stderr
