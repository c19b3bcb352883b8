"""The ETL runtime's HTTP/1.1 server for `HTTPMultiThreadedServer` classes: a thread per
connection, as that class's own `start()` serves, without the standard library's request
handler (its header parsing through `email` and its separate header and body writes cost more
than a small transform).

It answers what the class's handler answers: `GET /health` with `Running`; `GET` (hpull) and
`PUT` (hpush, a body of `Content-Length` bytes) of any other path with the `answer` callable
(`ETLServer._answer`: path, body, query, `Ais-Node-Url`), its reply in one write with
`Content-Type` and `Content-Length`; other methods 501. Connections are kept alive unless the
client asks to close. Bounded: a request head of at most `MAX_HEAD` bytes, one header line of
at most `MAX_LINE`.

Example:
    >>> sock = socket.create_server(("127.0.0.1", 0))  # doctest: +SKIP
    >>> serve_forever(sock, etl._answer, etl.get_mime_type())  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import BinaryIO
from urllib.parse import parse_qs, urlsplit

__all__ = ["Answer", "serve_forever"]

# (path without its leading '/', body or None for a GET, query, Ais-Node-Url) -> (status, body,
# headers): `ETLServer._answer`.
Answer = Callable[[str, "bytes | None", Mapping[str, str], str], tuple[int, bytes, dict[str, str]]]

MAX_LINE = 64 * 1024
MAX_HEAD = 256 * 1024
_HEALTH_PATH = "/health"
_HEALTH_REPLY = b"Running"
_ONE_WRITE_MAX = 1 << 20  # a reply body up to this size is joined to its header
# After refusing a request: what the client still sends is read, at most this much, this long.
_LINGER_MAX = 1 << 20
_LINGER_S = 1.0


class _BadRequest(Exception):
    """The request cannot be read; answered with `status` and the connection closed."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def serve_forever(listener: socket.socket, answer: Answer, mime_type: str) -> None:
    """Accept connections on `listener` (listening) until the calling thread is interrupted
    (SIGTERM's `SystemExit`, KeyboardInterrupt); each is served on a daemon thread, so none
    keeps the process alive after that."""
    while True:
        conn, _ = listener.accept()
        thread = threading.Thread(
            target=_serve_connection, args=(conn, answer, mime_type), daemon=True
        )
        thread.start()


def _serve_connection(conn: socket.socket, answer: Answer, mime_type: str) -> None:
    with contextlib.suppress(OSError), conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn.makefile("rb") as rfile:
            while _serve_one(conn, rfile, answer, mime_type):
                pass


def _serve_one(conn: socket.socket, rfile: BinaryIO, answer: Answer, mime_type: str) -> bool:
    """Read one request from `rfile`, reply on `conn`; whether the connection stays open."""
    try:
        request = _read_head(rfile)
        if request is None:
            return False
        method, target, version, headers = request
        keep_alive = _keep_alive(version, headers.get("connection", ""))
        if method not in ("GET", "PUT"):
            raise _BadRequest(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({method!r})")
        body = _read_body(conn, rfile, headers) if method == "PUT" else None
    except _BadRequest as err:
        _reply(conn, err.status.value, str(err).encode(), "text/plain", {}, keep_alive=False)
        _close_politely(conn)
        return False
    url = urlsplit(target)
    if url.path == _HEALTH_PATH:
        _reply(conn, HTTPStatus.OK.value, _HEALTH_REPLY, mime_type, {}, keep_alive)
        return keep_alive
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    status, out, extra = answer(url.path.lstrip("/"), body, query, headers.get("ais-node-url", ""))
    _reply(conn, status, out, mime_type, extra, keep_alive)
    return keep_alive


def _read_head(rfile: BinaryIO) -> tuple[str, str, str, dict[str, str]] | None:
    """(method, target, version, headers by lower-case name); None at a clean end of stream."""
    line = rfile.readline(MAX_LINE + 1)
    while line in (b"\r\n", b"\n"):  # empty lines before a request are ignored (RFC 9112 2.2)
        line = rfile.readline(MAX_LINE + 1)
    if not line:
        return None
    if len(line) > MAX_LINE:
        raise _BadRequest(HTTPStatus.REQUEST_URI_TOO_LONG, "request line too long")
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _BadRequest(HTTPStatus.BAD_REQUEST, f"bad request line {line[:256]!r}")
    headers: dict[str, str] = {}
    size = len(line)
    while True:
        line = rfile.readline(MAX_LINE + 1)
        size += len(line)
        if len(line) > MAX_LINE or size > MAX_HEAD:
            raise _BadRequest(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large")
        if line in (b"\r\n", b"\n", b""):
            break
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, f"bad header line {line[:256]!r}")
        headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1], parts[2], headers


def _read_body(conn: socket.socket, rfile: BinaryIO, headers: Mapping[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest(
            HTTPStatus.LENGTH_REQUIRED, "a chunked body is not supported: send Content-Length"
        )
    text = headers.get("content-length", "0").strip() or "0"
    if not text.isdigit():
        raise _BadRequest(HTTPStatus.BAD_REQUEST, f"bad Content-Length {text[:64]!r}")
    if headers.get("expect", "").lower() == "100-continue":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    length = int(text)
    body = rfile.read(length)
    if len(body) != length:
        raise OSError("the connection closed inside a request body")
    return body


def _close_politely(conn: socket.socket) -> None:
    """End the reply, then read (and drop) what the client still sends, for a bounded time: a
    close with unread bytes resets the connection, and the client may lose the reply."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(_LINGER_S)
    left = _LINGER_MAX
    while left > 0 and (chunk := conn.recv(min(left, 65536))):
        left -= len(chunk)


def _keep_alive(version: str, connection: str) -> bool:
    tokens = {t.strip().lower() for t in connection.split(",")}
    if version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


def _reply(
    conn: socket.socket,
    status: int,
    body: bytes,
    mime_type: str,
    headers: Mapping[str, str],
    keep_alive: bool,
) -> None:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines = [
        f"HTTP/1.1 {status} {phrase}",
        f"Content-Type: {mime_type}",
        f"Content-Length: {len(body)}",
    ]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if len(body) <= _ONE_WRITE_MAX:
        conn.sendall(head + body)
    else:
        conn.sendall(head)
        conn.sendall(body)
