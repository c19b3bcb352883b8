"""The AuthN HTTP surface without a socket: `route` and the WSGI adapter `AuthNApp`.

`route` is the one place the REST paths live: a `Request` in, a `Reply` out (or a
`ServiceError`). `AuthNApp` is the WSGI application around it: it reads one request from the
WSGI environ into a `Request`, answers it, writes the access log, and turns the `Reply` or the
refusal into the response. The listener that runs it (sockets, TLS, connection and time limits)
is `listener.AuthNServer`.

The app's own limits: a request body is at most `MAX_BODY` bytes and must declare its
`Content-Length` (413 / 411 otherwise, and the connection is closed: its unread body must not be
parsed as a request); methods outside `METHODS` get 501 (and the connection is closed too). An
exception that escapes an operation costs its request a 500 with the AIS error body and is
logged, never the process. Tokens and passwords are never logged: the access log holds
address, method, path (which names users, never secrets) and status.

Two environ keys tie the app to the listener, and are simply absent under another WSGI server:
`BODY_READ` (a callable the app calls once the body is in: the listener's read deadline ends)
and `CLOSE` (set by the app: the listener closes the connection after this response).

Error body (`cmn.ErrHTTP`, as the SDKs decode it):
`{"message": ..., "method": ..., "url_path": ..., "remote_addr": ..., "caller": "",
"node": "AuthN", "status": <int>}`.

Example:
    >>> req = Request("GET", "/v1/users", "Bearer eyJ...", b"", "10.0.0.7")
    >>> route(service, req)  # doctest: +SKIP
    Reply(status=200, body={...}, headers=())
    >>> app = AuthNApp(service)  # a WSGI application  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, NamedTuple
from urllib.parse import quote, unquote, urlsplit

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

__all__ = [
    "BODY_READ",
    "CLOSE",
    "MAX_BODY",
    "METHODS",
    "AuthNApp",
    "Request",
    "error_body",
    "route",
]

logger = logging.getLogger("aistore.authn")
access_log = logging.getLogger("aistore.authn.access")

MAX_BODY = 64 * 1024  # the largest document (a role with many bucket ACLs) is far smaller
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"})  # the rest: 501
BODY_READ = "aistore.authn.body_read"
CLOSE = "aistore.authn.close"
_JSON = "application/json"

_StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class Request:
    """One request as `route` sees it: method, raw path, the headers it uses, body, and the
    caller's address (the login throttle counts failures by it)."""

    def __init__(
        self,
        method: str,
        path: str,
        authorization: str | None,
        body: bytes,
        remote_addr: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.authorization = authorization
        self.body = body
        self.remote_addr = remote_addr


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
        return Reply(200, svc.login(items[0], decode(req.body, LoginMsg), req.remote_addr))
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


@dataclass(frozen=True)
class _AdminCollection:
    """The handler of a collection only an admin may read or change: GET lists it or, with a
    name, gets one; POST adds a `doc` body; PUT updates the named one with it; DELETE removes
    the named one."""

    doc: type[Any]  # the wire type of POST and PUT bodies
    list_all: Callable[[AuthNService], Any]
    get: Callable[[AuthNService, str], Any]
    add: Callable[[AuthNService, Any], None]
    update: Callable[[AuthNService, str, Any], None]
    delete: Callable[[AuthNService, str], None]
    delete_unnamed: str = ""  # the 400's message for a DELETE without a name, if not the usual

    def __call__(self, svc: AuthNService, req: Request, items: list[str]) -> Reply:
        if req.method not in ("GET", "POST", "PUT", "DELETE"):
            raise _not_allowed("DELETE", "GET", "POST", "PUT")
        svc.require_admin(svc.authenticate(req.authorization))  # reads too (AIS: none)
        if req.method == "GET":
            _expect(items, 0, 1)
            return Reply(200, self.get(svc, items[0]) if items else self.list_all(svc))
        if req.method == "POST":
            _expect(items, 0, 0)
            self.add(svc, decode(req.body, self.doc))
        elif req.method == "PUT":
            _expect(items, 1, 1)
            self.update(svc, items[0], decode(req.body, self.doc))
        else:
            if not items and self.delete_unnamed:
                raise ServiceError(400, self.delete_unnamed)
            _expect(items, 1, 1)
            self.delete(svc, items[0])
        return Reply(200)


_roles = _AdminCollection(
    Role,
    AuthNService.list_roles,
    AuthNService.get_role,
    AuthNService.add_role,
    AuthNService.update_role,
    AuthNService.delete_role,
)
_clusters = _AdminCollection(
    CluACL,
    AuthNService.list_clusters,
    AuthNService.get_cluster,
    AuthNService.register_cluster,
    AuthNService.update_cluster,
    AuthNService.delete_cluster,
    delete_unnamed="cluster name or ID not defined",
)


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


def error_body(status: int, message: str, method: str, path: str, remote_addr: str) -> bytes:
    """AIS's error document (see the module docstring), encoded."""
    doc = {
        "message": message,
        "method": method,
        "url_path": path,
        "remote_addr": remote_addr,
        "caller": "",
        "node": "AuthN",
        "status": status,
    }
    return json.dumps(doc).encode()


def _request_path(environ: dict[str, Any]) -> str:
    """The request's path as sent (still percent-encoded: `route` decodes each item once)."""
    raw = environ.get("REQUEST_URI")
    if raw:
        return urlsplit(str(raw)).path
    # PEP 3333: PATH_INFO holds the decoded bytes as latin-1; encode them again.
    return quote(str(environ.get("PATH_INFO", "")).encode("latin-1"), safe="/")


def _read_body(environ: dict[str, Any]) -> bytes:
    """The body, whole and within `MAX_BODY`; a refusal sets `CLOSE` (the rest of the body is
    not read, so the connection cannot serve another request)."""
    if "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower():
        environ[CLOSE] = True
        raise ServiceError(411, "chunked request bodies are not supported: send Content-Length")
    raw = environ.get("CONTENT_LENGTH")
    if raw is None or raw == "":
        return b""
    if not raw.strip().isdigit() or not raw.isascii():  # int() would take "+1", "1_0"
        environ[CLOSE] = True
        raise ServiceError(400, f"invalid Content-Length {raw[:32]!r}")
    length = int(raw)
    if length > MAX_BODY:
        environ[CLOSE] = True
        raise ServiceError(413, f"request body of {length} bytes exceeds the {MAX_BODY}-byte limit")
    stream = environ["wsgi.input"]
    chunks: list[bytes] = []
    got = 0
    try:
        while got < length:
            chunk = stream.read(length - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError:  # a read timed out, or the listener dropped the connection at its deadline
        got = -1
    if got != length:
        environ[CLOSE] = True
        raise ServiceError(400, "request body shorter than its Content-Length")
    return b"".join(chunks)


class AuthNApp:
    """The WSGI application serving `route` (see the module docstring).

    Args:
        service: the operations.
    """

    def __init__(self, service: AuthNService) -> None:
        self.service = service

    def __call__(self, environ: dict[str, Any], start_response: _StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", ""))
        path = _request_path(environ)
        remote = str(environ.get("REMOTE_ADDR", ""))
        headers: list[tuple[str, str]] = []
        try:
            if method not in METHODS:  # e.g. CONNECT, or an upgrade: not trusted further
                environ[CLOSE] = True
                raise ServiceError(501, f"unsupported method {method[:32]!r}")
            body = _read_body(environ)
            body_read = environ.get(BODY_READ)
            if body_read is not None:
                body_read()
            req = Request(method, path, environ.get("HTTP_AUTHORIZATION"), body, remote)
            reply = route(self.service, req)
        except WireError as e:
            status, out = 400, error_body(400, str(e), method, path, remote)
        except ServiceError as e:
            status, out = e.status, error_body(e.status, e.message, method, path, remote)
            if e.retry_after is not None:
                headers.append(("Retry-After", str(e.retry_after)))
        except Exception:  # the guard: an operation's bug costs this request, not the process
            logger.exception("%s %s failed", method, path)
            message = "internal error (see the AuthN log)"
            status, out = 500, error_body(500, message, method, path, remote)
        else:
            status = reply.status
            out = b"" if reply.body is None else encode(reply.body)
            headers.extend(reply.headers)
        if out:
            headers.append(("Content-Type", _JSON))
        headers.append(("Content-Length", str(len(out))))
        # The query is not logged (nothing secret may reach the log).
        access_log.info('%s "%s %s" %s', remote, method or "-", path[:512], status)
        start_response(f"{status} {HTTPStatus(status).phrase}", headers)
        return [] if method == "HEAD" else [out]
