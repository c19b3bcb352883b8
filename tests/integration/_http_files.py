"""A local HTTP server that download jobs fetch from: deterministic file bodies and the faults a
downloader meets (tests/integration/test_download.py, benchmarks/download.py).

Paths (SIZE in bytes; NAME any file name, which seeds the content):
  /files/SIZE/NAME    the file (HEAD, Range: bytes=a-b)
  /whole/SIZE/NAME    the file, always all of it (200: Range ignored)
  /changing/SIZE/NAME the file, with an ETag that changes at every request (a file replaced
                      between two range requests)
  /slow/SIZE/NAME     the file in 16 KiB pieces, 50 ms apart
  /cut/SIZE/NAME      Content-Length SIZE, then half of it, then the connection closes
  /stall/SIZE/NAME    the header and 1 KiB, then nothing until the server stops
  /missing/NAME       404
  /flaky/SIZE/NAME    503 to the first GET of NAME, the file after
  /headers/NAME       the request's Authorization and X-Test headers as the body
  /redirect?to=URL    302 to URL (with a body that is not the file's)
  /loop/NAME          302 to itself, forever
Every request is counted per path (`hits`).
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_BLOCK = 1 << 20


def _block(name: str, size: int) -> bytes:
    """The first min(size, 1 MiB) bytes of NAME: a SHA-256 chain seeded by the name."""
    out = bytearray()
    h = hashlib.sha256(name.encode()).digest()
    while len(out) < min(size, _BLOCK):
        out += h * 32  # 1 KiB per hash
        h = hashlib.sha256(h).digest()
    return bytes(out[: min(size, _BLOCK)])


def file_bytes(name: str, size: int) -> bytes:
    """The bytes /files/SIZE/NAME serves: its first MiB repeated (cheap at hundreds of MiB)."""
    block = _block(name, size)
    return (block * (size // _BLOCK + 1))[:size] if size > _BLOCK else block


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that does not print a traceback when a client closes its idle
    keep-alive connection (every pooled client does); other handler errors still print."""

    daemon_threads = True
    request_queue_size = 128  # socketserver's 5 drops the SYNs of a burst of clients (1 s retries)

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FileServer:
    """The server on 127.0.0.1 and an ephemeral port, on its own threads; `stop()` ends it."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                owner._serve(self, head=True)

            def do_GET(self) -> None:
                owner._serve(self, head=False)

        self._httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _serve(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        u = urlsplit(h.path)
        parts = u.path.strip("/").split("/")
        kind = parts[0]
        with self._lock:
            self.hits[u.path] += 1
            count = self.hits[u.path]
        try:
            if kind == "missing":
                return self._reply(h, 404, b"not found\n", head=head)
            if kind == "headers":
                text = (
                    f"{h.headers.get('Authorization', '')}|{h.headers.get('X-Test', '')}".encode()
                )
                return self._reply(h, 200, text, head=head)
            if kind in ("redirect", "loop"):
                to = parse_qs(u.query)["to"][0] if kind == "redirect" else u.path
                body = b"moved: this is not the file\n"
                h.send_response(302)
                h.send_header("Location", to)
                h.send_header("Content-Length", str(len(body)))
                h.end_headers()
                if not head:
                    h.wfile.write(body)
                return None
            size, name = int(parts[1]), "/".join(parts[2:])
            if kind == "files":
                return reply_file(h, name, size, head=head)
            if kind == "whole":
                return reply_file(h, name, size, head=head, ranges=False)
            if kind == "changing":
                return reply_file(h, name, size, head=head, headers={"ETag": f'"v{count}"'})
            data = file_bytes(name, size)
            if kind == "flaky":
                if count == 1 and not head:
                    return self._reply(h, 503, b"try again\n", head=head)
                return self._reply(h, 200, data, head=head)
            if kind == "slow":
                h.send_response(200)
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                if head:
                    return None
                for i in range(0, len(data), 16 << 10):
                    if self._stopping.is_set():
                        return None
                    h.wfile.write(data[i : i + (16 << 10)])
                    h.wfile.flush()
                    self._stopping.wait(0.05)
                return None
            if kind == "cut":
                h.send_response(200)
                h.send_header("Content-Length", str(len(data)))
                h.send_header("Connection", "close")
                h.end_headers()
                if not head:
                    h.wfile.write(data[: len(data) // 2])
                    h.wfile.flush()
                h.close_connection = True
                return None
            if kind == "stall":
                h.send_response(200)
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                if not head:
                    h.wfile.write(data[:1024])
                    h.wfile.flush()
                    self._stopping.wait(600)
                h.close_connection = True
                return None
            return self._reply(h, 400, b"unknown path\n", head=head)
        except (BrokenPipeError, ConnectionResetError):
            return None

    @staticmethod
    def _reply(h: BaseHTTPRequestHandler, status: int, body: bytes, *, head: bool) -> None:
        h.send_response(status)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not head:
            h.wfile.write(body)


def reply_file(
    h: BaseHTTPRequestHandler,
    name: str,
    size: int,
    *,
    head: bool,
    headers: dict[str, str] | None = None,
    ranges: bool = True,
) -> None:
    """Replies with file_bytes(name, size), or the byte range asked for (206) unless not
    `ranges`, a block at a time (never the whole file in memory), with `headers` added."""
    block = _block(name, size)
    a, b, status = 0, size - 1, 200
    rng = h.headers.get("Range", "") if ranges else ""
    if rng.startswith("bytes="):
        first, _, last = rng[6:].partition("-")
        a = int(first)
        b = min(int(last), size - 1) if last else size - 1
        status = 206
        if a >= size:  # unsatisfiable, as for every range of an empty file (RFC 9110 §15.5.17)
            h.send_response(416)
            h.send_header("Content-Range", f"bytes */{size}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
    h.send_response(status)
    if status == 206:
        h.send_header("Content-Range", f"bytes {a}-{b}/{size}")
    h.send_header("Content-Length", str(b - a + 1))
    if ranges:
        h.send_header("Accept-Ranges", "bytes")
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    if head or size == 0:
        return
    view = memoryview(block)
    pos = a
    while pos <= b:
        off = pos % _BLOCK
        n = min(_BLOCK - off, b + 1 - pos)
        h.wfile.write(view[off : off + n])
        pos += n
