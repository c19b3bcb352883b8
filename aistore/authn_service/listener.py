"""The AuthN listener: cheroot (CherryPy's threaded WSGI server) running `httpd.AuthNApp`, with
TLS and the limits a login endpoint on a network needs.

Three parts, as in the house style: `httpd.route` behind `httpd.AuthNApp` (request in, reply
out, no socket); `_Connection` (one per connection; a worker thread serves it one request at a
time, and between requests it waits in cheroot's selector, holding no thread); `AuthNServer`
(cheroot's accept loop and its fixed pool of `WORKERS` threads).

Limits, each named below:
- At most `MAX_CONNECTIONS` connections are being read, answered or waiting for a worker; the
  next one is answered 503 at once and closed. Idle keep-alive connections wait apart: at most
  `MAX_IDLE_KEEPALIVE` (beyond, a response closes its connection), each at most
  `IDLE_TIMEOUT_S`.
- Read deadline (`READ_TIMEOUT_S` unless configured): once a worker takes a connection, its TLS
  handshake, request head and body must all arrive within it, however slowly they trickle; at
  the deadline the connection is shut down (`_Deadlines`). Every socket read and write also
  waits at most `IDLE_TIMEOUT_S`.
- The request line and headers together are at most `MAX_HEAD` bytes (414 when the request line
  alone is over, else 431), at most `MAX_HEADERS` header lines (431); the body's bounds are the
  app's (`httpd.MAX_BODY`).
- TLS handshakes run on the connection's worker, under its deadline: a client that never speaks
  TLS cannot stall the accept loop.

Refusals cheroot makes itself (a request it cannot parse: 400, 413, 414, 431, 505; a timeout:
408) carry AIS's error body, as the app's do, close the connection, and are in the access log.

Example:
    >>> server = AuthNServer(("127.0.0.1", 0), service)  # doctest: +SKIP
    >>> server.serve()  # until server.stop()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import queue
import socket
import ssl
import threading
import time
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from cheroot import errors, wsgi
from cheroot.makefile import MakeFile, StreamReader, StreamWriter
from cheroot.server import HeaderReader, HTTPConnection, HTTPRequest
from cheroot.ssl import Adapter

from aistore.authn_service.httpd import BODY_READ, CLOSE, MAX_BODY, AuthNApp, error_body
from aistore.authn_service.service import AuthNService

__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_CONNECTIONS",
    "MAX_HEAD",
    "MAX_HEADERS",
    "MAX_IDLE_KEEPALIVE",
    "READ_TIMEOUT_S",
    "WORKERS",
    "AuthNServer",
]

logger = logging.getLogger("aistore.authn")
access_log = logging.getLogger("aistore.authn.access")

WORKERS = 64  # requests served at once (a login holds one while it waits for scrypt)
MAX_CONNECTIONS = 256  # served plus queued for a worker
MAX_IDLE_KEEPALIVE = 64
READ_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 30
MAX_HEAD = 64 * 1024
MAX_HEADERS = 100
LISTEN_BACKLOG = 128
SHUTDOWN_TIMEOUT_S = 5  # then the workers' connections are shut down under them
_REFUSE_TIMEOUT_S = 1.0  # the 503 is written on the accept thread: bounded, whatever the client


class _TooManyHeaders(Exception):
    """Not a ValueError on purpose: cheroot answers those with a 400, this is a 431."""


class _LineBudget:
    """A head reader that refuses to read more than `lines` lines."""

    def __init__(self, rfile: Any, lines: int) -> None:
        self._rfile = rfile
        self._left = lines

    def readline(self, size: int | None = None) -> bytes:
        if self._left == 0:
            raise _TooManyHeaders(f"more than {MAX_HEADERS} header lines")
        self._left -= 1
        # None, not -1: cheroot's size check reads an unsized line in small pieces, checking
        # the head's size after each; a size would read the whole line first.
        data: bytes = self._rfile.readline(size)
        return data


class _HeaderReader(HeaderReader):
    """cheroot's header parser, over at most `MAX_HEADERS` lines (plus the empty last one)."""

    def __call__(self, rfile: Any, hdict: Any = None) -> Any:
        return super().__call__(_LineBudget(rfile, MAX_HEADERS + 1), hdict)


class _Request(HTTPRequest):
    """cheroot's request parser, with AIS error replies and the header-line limit."""

    header_reader = _HeaderReader()

    def read_request_headers(self) -> bool:
        try:
            return bool(super().read_request_headers())  # type: ignore[no-untyped-call]
        except (errors.MaxSizeExceeded, _TooManyHeaders) as e:
            why = str(e) or f"request line and headers over {MAX_HEAD} bytes"
            self.simple_response("431 Request Header Fields Too Large", why)
            return False

    def simple_response(self, status: Any, msg: Any = "") -> None:
        # cheroot's refusals (and its 408 / 500 from the connection loop): AIS's error JSON,
        # not text; the connection is not trusted further. The status is written as given
        # (cheroot's own turns a 414, sent before the request line is parsed, into a 400).
        status = str(status)
        code = int(status[:3])
        if isinstance(msg, bytes):
            msg = msg.decode("latin-1")
        method = getattr(self, "method", b"").decode("latin-1")
        path = urlsplit(getattr(self, "uri", b"").decode("latin-1")).path
        remote = self.conn.remote_addr or ""
        message = msg or HTTPStatus(code).phrase
        body = error_body(code, message, method, path, remote)
        self.close_connection = True
        head = (
            f"{self.server.protocol} {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        access_log.info('%s "%s %s" %s', remote, method or "-", path[:512], code)
        with contextlib.suppress(OSError):  # gone, or dropped at its deadline: nobody to tell
            self.conn.wfile.write(head.encode("latin-1") + body)


class _Gateway(wsgi.Gateway_10):
    """cheroot's WSGI 1.0 gateway, plus `httpd.BODY_READ` and `httpd.CLOSE`."""

    req: _Request

    def get_environ(self) -> dict[str, Any]:  # type: ignore[override]  # stubs: -> None
        env: dict[str, Any] = super().get_environ()  # type: ignore[no-untyped-call]
        conn = self.req.conn
        assert isinstance(conn, _Connection)
        env[BODY_READ] = functools.partial(conn.server.deadlines.disarm, conn.deadline)
        return env

    def start_response(self, status: Any, headers: Any, exc_info: Any = None) -> Any:
        if self.env.get(CLOSE):
            self.req.close_connection = True  # cheroot adds `Connection: close`
        return super().start_response(status, headers, exc_info)


class _Connection(HTTPConnection):
    """One connection; `communicate` serves one request under the read deadline."""

    RequestHandlerClass = _Request
    server: AuthNServer

    def __init__(self, server: AuthNServer, sock: Any, makefile: Any = MakeFile) -> None:
        super().__init__(server, sock, makefile)
        self.tls_pending = isinstance(sock, ssl.SSLSocket)  # handshake not done yet
        self.deadline = 0  # the key of this request's read deadline

    def communicate(self) -> bool:
        self.deadline = self.server.deadlines.arm(
            self.socket, self.server.read_timeout, self.remote_addr or ""
        )
        try:
            if self.tls_pending:
                try:
                    self.socket.do_handshake()
                except (ssl.SSLError, OSError) as e:  # not TLS, a bad client, or its deadline
                    logger.debug("TLS handshake with %s failed: %s", self.remote_addr, e)
                    return False
                self.tls_pending = False
            return bool(super().communicate())  # type: ignore[no-untyped-call]
        finally:
            self.server.deadlines.disarm(self.deadline)


class _TLSAdapter(Adapter):
    """TLS with the caller's `SSLContext`, the handshake left to the connection's worker
    (cheroot's builtin adapter shakes hands on the accept thread, where one silent client
    stalls every other)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context

    def bind(self, sock: Any) -> Any:
        return sock

    def wrap(self, sock: Any) -> tuple[Any, dict[str, Any]]:
        try:
            return self.context.wrap_socket(
                sock, server_side=True, do_handshake_on_connect=False
            ), {}
        except OSError as e:  # the client left already: cheroot drops it quietly
            raise errors.FatalSSLAlert(*e.args) from e

    def get_environ(self) -> dict[str, Any]:
        return {}

    def makefile(self, sock: Any, mode: str = "r", bufsize: int = io.DEFAULT_BUFFER_SIZE) -> Any:
        if "r" in mode:
            return StreamReader(sock, mode, bufsize)
        return StreamWriter(sock, mode, bufsize)


class _Deadlines:
    """Shuts down the connections whose request did not arrive in time.

    One thread; one armed deadline per worker at most, so at most `WORKERS` entries. Shutting
    the socket down (both ways) makes the worker blocked reading it see end-of-stream at once;
    the worker then closes the connection. `arm` and `disarm` are called by workers.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()  # guards everything below
        self._armed: dict[int, tuple[float, float, socket.socket, str]] = {}
        self._next_key = 1
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="authn-deadlines", daemon=True)
        self._thread.start()

    def arm(self, sock: socket.socket, seconds: float, who: str) -> int:
        """Shut `sock` down in `seconds` unless disarmed first; the key to disarm it with."""
        with self._cond:
            key = self._next_key
            self._next_key += 1
            self._armed[key] = (time.monotonic() + seconds, seconds, sock, who)
            self._cond.notify()
        return key

    def disarm(self, key: int) -> None:
        """Cancel a deadline (no-op when it fired or was cancelled)."""
        with self._cond:
            self._armed.pop(key, None)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(5)

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                for key in [k for k, (at, *_) in self._armed.items() if at <= now]:
                    _, seconds, sock, who = self._armed.pop(key)
                    # The base class's shutdown on purpose: SSLSocket.shutdown also drops its
                    # TLS state, which the worker may be using right now. OSError: closed.
                    with contextlib.suppress(OSError):
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)
                    logger.info("dropped %s: request not received within %gs", who, seconds)
                nearest = min((at for at, *_ in self._armed.values()), default=None)
                self._cond.wait(None if nearest is None else max(nearest - now, 0.0))


class AuthNServer(wsgi.Server):
    """The listener (see the module docstring); bound and started by the constructor, served by
    `serve()` until `stop()`.

    Args:
        address: (host, port); port 0 picks a free one (see `server_address`).
        service: the operations.
        tls: a server `SSLContext` for HTTPS, or None for plain HTTP.
        read_timeout: the read deadline of a request, seconds.

    Raises:
        OSError: the address cannot be bound.
    """

    ConnectionClass = _Connection

    def __init__(
        self,
        address: tuple[str, int],
        service: AuthNService,
        tls: ssl.SSLContext | None = None,
        read_timeout: float = READ_TIMEOUT_S,
    ) -> None:
        super().__init__(
            address,
            AuthNApp(service),
            numthreads=WORKERS,
            max=WORKERS,
            server_name="aistore-authn",
            request_queue_size=LISTEN_BACKLOG,
            timeout=IDLE_TIMEOUT_S,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
            accepted_queue_size=MAX_CONNECTIONS - WORKERS,
            accepted_queue_timeout=0,  # a full queue refuses at once: never blocks accepting
        )
        self.gateway = _Gateway
        self.max_request_header_size = MAX_HEAD
        self.max_request_body_size = MAX_BODY
        self.keep_alive_conn_limit = MAX_IDLE_KEEPALIVE
        if tls is not None:
            self.ssl_adapter = _TLSAdapter(tls)
        self.read_timeout = read_timeout
        self.deadlines = _Deadlines()
        try:
            self.prepare()  # binds, listens, starts the workers
        except BaseException:
            self.deadlines.stop()
            raise

    @property
    def server_address(self) -> tuple[str, int]:
        """The bound (host, port)."""
        host, port = self.bind_addr[:2]
        return str(host), int(port)

    def process_conn(self, conn: Any) -> None:
        # Called on the accept thread for a new connection, or one whose next request arrived.
        try:
            self.requests.put(conn)
        except queue.Full:
            self._refuse(conn)

    def _refuse(self, conn: _Connection) -> None:
        remote = conn.remote_addr or ""
        access_log.info('%s "- -" 503 (over %d connections)', remote, MAX_CONNECTIONS)
        if not conn.tls_pending:  # a TLS client gets no reply before its handshake: just closed
            message = f"too many connections (over {MAX_CONNECTIONS}): retry later"
            body = error_body(503, message, "", "", remote)
            head = (
                f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
            )
            with contextlib.suppress(OSError):
                conn.socket.settimeout(_REFUSE_TIMEOUT_S)
                conn.socket.sendall(head.encode() + body)
        conn.close()

    def stop(self) -> None:
        super().stop()
        self.deadlines.stop()

    def error_log(self, msg: str = "", level: int = 20, traceback: bool = False) -> None:
        # cheroot's own reports: mostly connections that broke or clients that left.
        logger.log(
            level if level >= logging.ERROR else logging.DEBUG,
            "cheroot: %s",
            msg,
            exc_info=traceback,
        )
