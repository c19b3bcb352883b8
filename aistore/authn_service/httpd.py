"""The AuthN HTTP server: routing, bounded request reading, AIS error replies.

Three parts, as in the house style: `route` (request in, status and body out, no socket),
`_Handler` (one per connection, stdlib `BaseHTTPRequestHandler`) and `AuthNServer` (the accept
loop, a thread per connection, bounded in number).

Limits, each named below: a request body is at most `MAX_BODY` bytes and must declare its
`Content-Length` (413 / 411 otherwise); a connection idles at most `IDLE_TIMEOUT_S` between
reads; at most `MAX_CONNECTIONS` connections are served at once, the next get 503. An exception
that escapes an operation costs its request a 500 with the AIS error body and is logged, never
the process. Tokens and passwords are never logged: the access log holds method, path (which
names users, never secrets) and status.

Error body (`cmn.ErrHTTP`, as the SDKs decode it):
`{"message": ..., "method": ..., "url_path": ..., "remote_addr": ..., "caller": "",
"node": "AuthN", "status": <int>}`.

Example:
    >>> server = AuthNServer(("127.0.0.1", 0), service)  # doctest: +SKIP
    >>> server.serve_forever()  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from aistore.authn_service.service import AuthNService, ServiceError
from aistore.authn_service.wire import (
    CluACL,
    ConfigToUpdate,
    LoginMsg,
    Role,
    TokenMsg,
    User,
    WireError,
    decode,
    encode,
)

__all__ = ["MAX_BODY", "MAX_CONNECTIONS", "AuthNServer", "Request", "route"]

logger = logging.getLogger("aistore.authn")
access_log = logging.getLogger("aistore.authn.access")

MAX_BODY = 64 * 1024  # the largest document (a role with many bucket ACLs) is far smaller
MAX_CONNECTIONS = 256
IDLE_TIMEOUT_S = 30.0
_JSON = "application/json"


class Request:
    """One request as `route` sees it: method, path items, headers it uses, body."""

    def __init__(self, method: str, path: str, authorization: str | None, body: bytes) -> None:
        self.method = method
        self.path = path
        self.authorization = authorization
        self.body = body


class Reply(NamedTuple):
    """What `route` answers: a status, a JSON-ready body (None: empty), extra headers."""

    status: int
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()


# Clusters cache the JWKS this long (`Cache-Control`): a rotated key reaches them at the latest
# then, or at once when they refresh on an unknown kid.
JWKS_MAX_AGE_S = 300


def _items(path: str, prefix: str) -> list[str]:
    rest = path[len(prefix) :].strip("/")
    return [unquote(item) for item in rest.split("/")] if rest else []


def _expect(items: list[str], low: int, high: int) -> None:
    if not low <= len(items) <= high:
        raise ServiceError(400, "invalid URL path: unexpected number of path items")


def _not_allowed(*methods: str) -> ServiceError:
    return ServiceError(405, f"method not allowed (supported: {', '.join(methods)})")


def route(svc: AuthNService, req: Request) -> Reply:
    """Answer one request; every refusal is a `ServiceError` (or `WireError`, a 400)."""
    path, method = req.path, req.method
    if path in ("/.well-known/openid-configuration", "/.well-known/openid-configuration/"):
        if method != "GET":
            raise _not_allowed("GET")
        return Reply(200, svc.openid_configuration())
    if path in ("/.well-known/jwks.json", "/.well-known/jwks.json/"):
        if method != "GET":
            raise _not_allowed("GET")
        return Reply(200, svc.jwks(), (("Cache-Control", f"max-age={JWKS_MAX_AGE_S}, public"),))
    for prefix, handler in _ROUTES:
        if path == prefix or path.startswith(prefix + "/"):
            return handler(svc, req, _items(path, prefix))
    raise ServiceError(404, f"invalid URL path {path[:200]!r}")


def _users(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method == "POST" and len(items) == 1:  # login: the one call without a token
        return Reply(200, svc.login(items[0], decode(req.body, LoginMsg)))
    claims = svc.authenticate(req.authorization)
    if req.method == "POST":
        _expect(items, 0, 0)
        svc.require_admin(claims)
        svc.add_user(decode(req.body, User))
        return Reply(200)
    if req.method == "GET":
        _expect(items, 0, 1)
        if not items:
            svc.require_admin(claims)
            return Reply(200, svc.list_users())
        return Reply(200, svc.get_user(items[0], claims))
    if req.method == "PUT":
        _expect(items, 1, 1)
        svc.update_user(items[0], decode(req.body, User), claims)
        return Reply(200)
    if req.method == "DELETE":
        _expect(items, 1, 1)
        svc.require_admin(claims)
        svc.delete_user(items[0])
        return Reply(200)
    raise _not_allowed("DELETE", "GET", "POST", "PUT")


def _roles(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method == "GET":
        _expect(items, 0, 1)
        return Reply(200, svc.get_role(items[0]) if items else svc.list_roles())
    if req.method not in ("POST", "PUT", "DELETE"):
        raise _not_allowed("DELETE", "GET", "POST", "PUT")
    svc.require_admin(svc.authenticate(req.authorization))
    if req.method == "POST":
        _expect(items, 0, 0)
        svc.add_role(decode(req.body, Role))
    elif req.method == "PUT":
        _expect(items, 1, 1)
        svc.update_role(items[0], decode(req.body, Role))
    else:
        _expect(items, 1, 1)
        svc.delete_role(items[0])
    return Reply(200)


def _clusters(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method == "GET":
        _expect(items, 0, 1)
        return Reply(200, svc.get_cluster(items[0]) if items else svc.list_clusters())
    if req.method not in ("POST", "PUT", "DELETE"):
        raise _not_allowed("DELETE", "GET", "POST", "PUT")
    svc.require_admin(svc.authenticate(req.authorization))
    if req.method == "POST":
        _expect(items, 0, 0)
        svc.register_cluster(decode(req.body, CluACL))
    elif req.method == "PUT":
        _expect(items, 1, 1)
        svc.update_cluster(items[0], decode(req.body, CluACL))
    else:
        if not items:
            raise ServiceError(400, "cluster name or ID not defined")
        _expect(items, 1, 1)
        svc.delete_cluster(items[0])
    return Reply(200)


def _tokens(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method != "DELETE":
        raise _not_allowed("DELETE")
    _expect(items, 0, 0)
    # As AIS: whoever holds a valid token may revoke it (logout); no other check.
    svc.revoke(decode(req.body, TokenMsg).token)
    return Reply(200)


def _daemon(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method not in ("GET", "PUT"):
        raise _not_allowed("GET", "PUT")
    _expect(items, 0, 0)
    svc.require_admin(svc.authenticate(req.authorization))
    if req.method == "GET":
        return Reply(200, svc.config())
    svc.update_config(decode(req.body, ConfigToUpdate))
    return Reply(200)


def _public_key(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method != "GET":
        raise _not_allowed("GET")
    _expect(items, 0, 0)
    return Reply(200, svc.public_key())


def _rotate(svc: AuthNService, req: Request, items: list[str]) -> Reply:
    if req.method != "POST":
        raise _not_allowed("POST")
    _expect(items, 0, 0)
    svc.require_admin(svc.authenticate(req.authorization))
    svc.rotate_key()
    return Reply(200)


_ROUTES = (
    ("/v1/users", _users),
    ("/v1/roles", _roles),
    ("/v1/clusters", _clusters),
    ("/v1/tokens", _tokens),
    ("/v1/daemon", _daemon),
    ("/v1/public-key", _public_key),
    ("/v1/rotate-key", _rotate),
)


class _Handler(BaseHTTPRequestHandler):
    """One connection: read a bounded request, `route` it, write the reply."""

    server: AuthNServer
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S  # socket timeout: a silent client is dropped, not waited for
    server_version = "aistore-authn"
    sys_version = ""

    def _handle(self) -> None:
        path = urlsplit(self.path).path
        try:
            body = self._read_body()
            req = Request(self.command, path, self.headers.get("Authorization"), body)
            reply = route(self.server.service, req)
        except WireError as e:
            self._error(400, str(e), path)
        except ServiceError as e:
            self._error(e.status, e.message, path)
        except Exception:  # the guard: an operation's bug costs this request, not the process
            logger.exception("%s %s failed", self.command, path)
            self._error(500, "internal error (see the AuthN log)", path)
        else:
            body = b"" if reply.body is None else encode(reply.body)
            self._reply(reply.status, body, reply.headers)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise ServiceError(411, "chunked request bodies are not supported: send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        if not raw.strip().isdigit() or not raw.isascii():  # int() would take "+1", "1_0"
            self.close_connection = True
            raise ServiceError(400, f"invalid Content-Length {raw[:32]!r}")
        length = int(raw)
        if length > MAX_BODY:
            self.close_connection = True  # the unread body must not be parsed as a request
            raise ServiceError(
                413, f"request body of {length} bytes exceeds the {MAX_BODY}-byte limit"
            )
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            raise ServiceError(
                408, f"request body not received within {IDLE_TIMEOUT_S:.0f}s"
            ) from None
        if len(body) != length:
            self.close_connection = True
            raise ServiceError(400, "request body shorter than its Content-Length")
        return body

    def _reply(self, status: int, body: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", _JSON)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The stdlib's own refusals (a request line or header it cannot parse, a method with no
        # do_X): AIS's error JSON too, not its HTML page; the connection is not trusted further.
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # not parsed as far as the version: answer 1.1
            self.request_version = "HTTP/1.1"
        path = urlsplit(getattr(self, "path", "") or "").path
        self._error(code, message or explain or HTTPStatus(code).phrase, path)

    def _error(self, status: int, message: str, path: str) -> None:
        doc = {
            "message": message,
            "method": self.command or "",
            "url_path": path,
            "remote_addr": self.client_address[0] if self.client_address else "",
            "caller": "",
            "node": "AuthN",
            "status": status,
        }
        self._reply(status, json.dumps(doc).encode())

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # The query is not logged (nothing secret may reach the log); a request refused before
        # its line was parsed has no command or path yet.
        path = urlsplit(getattr(self, "path", "") or "").path[:512]
        command = self.command or "-"
        access_log.info('%s "%s %s" %s', self.client_address[0], command, path, code)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        # Parse errors and timeouts; never carries a header or a body.
        logger.debug("%s: %s", self.client_address[0], format % args)


class AuthNServer(ThreadingHTTPServer):
    """The listener: one thread per connection, at most `MAX_CONNECTIONS` of them.

    Args:
        address: (host, port); port 0 picks a free one (see `server_address`).
        service: the operations.
        tls: a server `SSLContext` for HTTPS, or None for plain HTTP.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        service: AuthNService,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.service = service
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        if tls is not None:
            # The handshake runs on the connection's own thread (first read), under its
            # timeout: a client that never speaks TLS cannot stall the accept loop.
            self.socket = tls.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)  # on the accept thread: bounded, whatever the client does
                request.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)  # starts the connection's thread
        except BaseException:
            self._slots.release()  # no thread: nobody else would give the slot back
            self.shutdown_request(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A connection that broke mid-request (reset, TLS garbage): the client's problem.
        logger.debug("connection from %s ended with an error", client_address, exc_info=True)
