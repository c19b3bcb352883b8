"""`aistore._internal.etl_http`, the ETL runtime's server for `HTTPMultiThreadedServer`
classes, over real loopback sockets: what it answers, keep-alive, and what it refuses."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator, Mapping

import pytest

from aistore._internal import etl_http

Call = tuple[str, "bytes | None", dict[str, str], str]


class _Recorder:
    """An `Answer` that upper-cases the body (or answers `pulled:<path>` for a GET) and records
    each call."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def __call__(
        self, path: str, body: bytes | None, query: Mapping[str, str], node_url: str
    ) -> tuple[int, bytes, dict[str, str]]:
        self.calls.append((path, body, dict(query), node_url))
        if path == "fail":
            return 500, b"it failed", {}
        if node_url:
            return 204, b"", {"Ais-Direct-Put-Length": "3"}
        return 200, (body.upper() if body is not None else f"pulled:{path}".encode()), {}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[int, _Recorder]]:
    listener = socket.create_server(("127.0.0.1", 0))
    recorder = _Recorder()
    thread = threading.Thread(
        target=etl_http.serve_forever, args=(listener, recorder, "text/x-test"), daemon=True
    )
    thread.start()
    yield listener.getsockname()[1], recorder
    listener.close()


def _raw(port: int, data: bytes) -> bytes:
    """Send `data`, read until the server closes (each case asks it to)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def test_put_get_and_health_on_one_kept_connection(served: tuple[int, _Recorder]) -> None:
    port, recorder = served
    recorder.calls.clear()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("PUT", "/bck/obj%20x?etl_args=a%2Cb&etl_fqn=", body=b"hello")
    put = conn.getresponse()
    assert (put.status, put.read()) == (200, b"HELLO")
    assert put.getheader("Content-Type") == "text/x-test"
    conn.request("GET", "/ais%2F%40%23%2Fb%2Fo")  # hpull: the escaped uname as it came
    get = conn.getresponse()
    assert (get.status, get.read()) == (200, b"pulled:ais%2F%40%23%2Fb%2Fo")
    conn.request("GET", "/health")
    health = conn.getresponse()
    assert (health.status, health.read()) == (200, b"Running")
    conn.request("PUT", "/b/o", body=b"xyz", headers={"Ais-Node-Url": "http://next:1"})
    direct = conn.getresponse()
    assert (direct.status, direct.read()) == (204, b"")
    assert direct.getheader("Ais-Direct-Put-Length") == "3"
    conn.request("PUT", "/fail", body=b"")
    failed = conn.getresponse()
    assert (failed.status, failed.read()) == (500, b"it failed")
    sock = conn.sock
    conn.request("PUT", "/b/empty", body=b"")
    assert conn.getresponse().read() == b""
    assert conn.sock is sock  # one connection for all of them
    conn.close()
    assert recorder.calls == [
        ("bck/obj%20x", b"hello", {"etl_args": "a,b"}, ""),
        ("ais%2F%40%23%2Fb%2Fo", None, {}, ""),
        ("b/o", b"xyz", {}, "http://next:1"),
        ("fail", b"", {}, ""),
        ("b/empty", b"", {}, ""),
    ]


def test_connection_close_and_http_1_0(served: tuple[int, _Recorder]) -> None:
    port, _ = served
    closed = _raw(port, b"PUT /b/o HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab")
    assert closed.startswith(b"HTTP/1.1 200 OK\r\n") and closed.endswith(b"\r\n\r\nAB")
    assert b"Connection: close" in closed
    old = _raw(port, b"PUT /b/o HTTP/1.0\r\nContent-Length: 2\r\n\r\ncd")  # 1.0: closes
    assert old.startswith(b"HTTP/1.1 200 OK\r\n") and old.endswith(b"CD")


def test_expect_continue(served: tuple[int, _Recorder]) -> None:
    port, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PUT /b/o HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"abc")
        assert sock.recv(65536).endswith(b"\r\n\r\nABC")


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"DELETE /b/o HTTP/1.1\r\n\r\n", 501),
        (b"PUT /b/o HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 411),
        (b"PUT /b/o HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"nonsense\r\n\r\n", 400),
        (b"PUT /b/o HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"GET /" + b"a" * (etl_http.MAX_LINE + 1) + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * (etl_http.MAX_HEAD // 8) + b"\r\n", 431),
    ],
    ids=["method", "chunked", "length", "request-line", "header-line", "long-line", "big-head"],
)
def test_refused_and_closed(
    served: tuple[int, _Recorder], request_bytes: bytes, status: int
) -> None:
    port, recorder = served
    recorder.calls.clear()
    reply = _raw(port, request_bytes)
    assert reply.startswith(f"HTTP/1.1 {status} ".encode()), reply[:200]
    assert b"Connection: close" in reply
    assert recorder.calls == []


def test_a_body_cut_short_is_not_answered(served: tuple[int, _Recorder]) -> None:
    port, recorder = served
    recorder.calls.clear()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PUT /b/o HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""
    assert recorder.calls == []
