"""Sending one request: per-process sessions, default headers, TLS, the HTTPS body redirect.

Redirects over plain HTTP (proxy → target, 301 for GET and 307 otherwise) are followed by
`requests` itself, exactly as the official SDK does; seekable bodies are rewound for the
second leg. Over HTTPS a proxy must not see the body (TLS servers close the connection
before reading it), so a request with a body takes two explicit steps, see
`Transport.send_https_with_body`.

Whole-body GETs (`Transport.fetch`) and streamed replies such as GetBatch archives and the
parallel engine's range GETs (`Transport.open_stream`) over plain HTTP take a native path:
`requests` spends ~300 us of CPU on a request, the native client (`csrc/http_client.h`) ~8 us.
What it does not cover (HTTPS, statuses urllib3 retries, a session with proxies or auth...)
goes the regular way.
"""

from __future__ import annotations

import functools
import http
import io
import logging
import os
import urllib.request
import warnings
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.util.retry import Retry

from aistore import _native
from aistore._internal.config import ClientCert, TimeoutArg, resolve_verify
from aistore.sdk.const import (
    HEADER_AUTHORIZATION,
    HEADER_CONNECTION,
    HEADER_CONTENT_LENGTH,
    HEADER_CONTENT_TYPE,
    HEADER_LOCATION,
    HEADER_USER_AGENT,
    HTTP,
    HTTPS,
    JSON_CONTENT_TYPE,
    STATUS_REDIRECT_PERM,
    STATUS_REDIRECT_TMP,
    USER_AGENT_BASE,
)
from aistore.version import __version__

logger = logging.getLogger(__name__)

# A reply the native client streams (`Transport.open_stream`).
NativeStream = _native.HttpResponse

_USER_AGENT = f"{USER_AGENT_BASE}/{__version__}"


def _environment_matters() -> bool:
    """Whether requests' per-request environment lookups could change anything: proxy
    variables or a .netrc file are present."""
    netrc = os.environ.get("NETRC") or os.path.expanduser("~/.netrc")
    return bool(urllib.request.getproxies()) or os.path.exists(netrc)


class SessionManager:
    """Hands out one `requests.Session` per process id.

    A session's pooled sockets must never be shared by a parent and its forked children, so
    a process that finds no session under its own pid builds one. Pickling drops the pool:
    a worker process that unpickles a client opens its own connections.
    """

    def __init__(
        self,
        retry: Retry | None = None,
        ca_cert: str | None = None,
        skip_verify: bool = False,
        client_cert: ClientCert | None = None,
        max_pool_size: int = 10,
    ) -> None:
        self._retry = retry
        self._ca_cert = ca_cert
        self._skip_verify = skip_verify
        self._client_cert = client_cert
        self._max_pool_size = max_pool_size
        if skip_verify:
            warnings.warn(
                "Skipping SSL certificate verification is insecure. "
                "Use a valid SSL certificate instead.",
                UserWarning,
                stacklevel=3,
            )
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._sessions: dict[int, requests.Session] = {}
        self._native_clients: dict[int, _native.HttpClient] = {}

    @property
    def retry(self) -> Retry | None:
        """urllib3 retry policy mounted on every session."""
        return self._retry

    @property
    def ca_cert(self) -> str | None:
        """CA bundle given explicitly, if any."""
        return self._ca_cert

    @property
    def client_cert(self) -> ClientCert | None:
        """Client certificate (path or (cert, key)) for mutual TLS, if any."""
        return self._client_cert

    @property
    def skip_verify(self) -> bool:
        """Whether server certificates go unchecked."""
        return self._skip_verify

    @property
    def session(self) -> requests.Session:
        """The calling process's session, built on first use."""
        pid = os.getpid()
        session = self._sessions.get(pid)
        if session is None:
            session = self._sessions[pid] = self._create_session()
        return session

    @property
    def native_client(self) -> _native.HttpClient:
        """The calling process's native HTTP client (see `Transport.fetch`), built on first use."""
        pid = os.getpid()
        client = self._native_clients.get(pid)
        if client is None:
            client = self._native_clients[pid] = _native.HttpClient(_NATIVE_IDLE_PER_HOST)
        return client

    def ensure_pool_size(self, size: int) -> None:
        """Let the pool keep at least `size` connections per host (parallel range readers hold
        one each); the calling process's session is re-mounted when it has fewer."""
        if size <= self._max_pool_size:
            return
        self._max_pool_size = size
        session = self._sessions.get(os.getpid())
        if session is not None:
            for prefix in (HTTP, HTTPS):
                old = session.adapters.get(prefix)
                session.mount(prefix, self._adapter())
                if old is not None:
                    old.close()

    def _adapter(self) -> HTTPAdapter:
        return HTTPAdapter(
            max_retries=self._retry if self._retry is not None else 0,
            pool_connections=self._max_pool_size,
            pool_maxsize=self._max_pool_size,
        )

    def _create_session(self) -> requests.Session:
        session = requests.Session()
        session.verify = resolve_verify(self._skip_verify, self._ca_cert)
        session.cert = self._client_cert
        if not _environment_matters():
            # requests re-reads proxies, CA bundle and .netrc from the environment on every
            # request (a fifth of a small GET's client CPU); with none set, read the CA once.
            session.trust_env = False
            if session.verify is True:
                session.verify = (
                    os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
                )
        adapter = self._adapter()
        session.mount(HTTP, adapter)
        session.mount(HTTPS, adapter)
        return session

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_sessions"] = {}
        state["_native_clients"] = {}
        return state


# Idle keep-alive connections the native client keeps per host; more threads than this at once
# still work, their extra connections are closed after use.
_NATIVE_IDLE_PER_HOST = 64
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
# An error reply's body (its message) is read up to this size (the native client's limit too).
_MAX_ERROR_BODY = 64 << 10
# `requests` offers compressed replies; the native client reads bodies as they are sent.
_NATIVE_DROPPED_HEADERS = frozenset(("accept-encoding",))

_DIRECT_METHODS = frozenset(("GET", "HEAD"))
_DIRECT_KWARGS = frozenset(("params", "stream", "timeout", "allow_redirects"))


def _plain(session: requests.Session) -> bool:
    """Whether `Session.request` would add nothing to a body-less request but the session's
    headers: no environment lookups, proxies, auth, cookies or hooks."""
    return (
        not session.trust_env
        and not session.proxies
        and session.auth is None
        and not session.cookies
        and not any(session.hooks.values())
    )


def _encode_params(params: Mapping[str, Any]) -> str:
    """The query string `requests` builds from a params mapping: lists repeat the key, None
    values are left out."""
    pairs: list[tuple[str, Any]] = []
    for key, value in params.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        pairs.extend((key, v) for v in values if v is not None)
    return urlencode(pairs)


def _with_query(url: str, params: Mapping[str, Any] | None) -> str:
    query = _encode_params(params) if params else ""
    return f"{url}?{query}" if query else url


@functools.lru_cache(maxsize=64)
def _http_origin(url_prefix: str) -> tuple[str, int] | None:
    """(host, port) of an `http://host[:port]` prefix; None if it carries credentials."""
    parts = urlsplit(url_prefix)
    if parts.username is not None or parts.hostname is None:
        return None
    return parts.hostname, parts.port or 80


def _split_timeout(timeout: TimeoutArg) -> tuple[float | None, float | None]:
    if isinstance(timeout, tuple):
        return timeout[0], timeout[1]
    return timeout, timeout


def header_dict(fields: list[tuple[str, str]] | None) -> CaseInsensitiveDict[str]:
    """Header fields as `requests` shows them: a repeated field's values joined by ", "."""
    headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for name, value in fields or ():
        previous = headers.get(name)
        headers[name] = value if previous is None else f"{previous}, {value}"
    return headers


def _read_small(stream: _native.HttpResponse) -> bytes | None:
    """The whole body of an error reply if it is at most `_MAX_ERROR_BODY` bytes, else None."""
    buf = bytearray(_MAX_ERROR_BODY + 1)
    view = memoryview(buf)
    size = 0
    while size < len(buf):
        n = stream.readinto(view[size:])
        if n == 0:
            return bytes(buf[:size])
        size += n
    return None


def _built_reply(
    method: str,
    status: int,
    headers: CaseInsensitiveDict[str],
    body: bytes,
    url: str,
    sent: Mapping[str, Any],
) -> requests.Response:
    """The `requests.Response` an adapter would build for a reply read in full."""
    req = requests.PreparedRequest()
    req.method = method
    req.url = url
    req.headers = CaseInsensitiveDict(sent)
    resp = requests.Response()
    resp.status_code = status
    resp.headers = headers
    resp.raw = io.BytesIO(body)
    resp.encoding = requests.utils.get_encoding_from_headers(headers)
    resp.reason = _reason(status)
    resp.url = url
    resp.request = req
    return resp


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def body_length(data: Any) -> int | None:
    """Bytes a request body will send, or None when it cannot be known without reading it."""
    if isinstance(data, (bytes, bytearray)):
        return len(data)
    if isinstance(data, memoryview):
        return data.nbytes
    if isinstance(data, str):
        return len(data.encode("utf-8"))
    if hasattr(data, "read"):
        try:
            return int(os.fstat(data.fileno()).st_size - data.tell())
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            pass
        try:
            pos = data.tell()
            end = data.seek(0, io.SEEK_END)
            data.seek(pos)
            return int(end - pos)
        except (AttributeError, OSError, ValueError):
            return None
    return None


class Transport:
    """Sends single requests to an AIS endpoint; no retries beyond urllib3's, no error mapping.

    Args:
        base_url: endpoint including the API version, e.g. `http://proxy:8080/v1`.
        session_manager: per-process sessions.
        token: bearer token, sent on every request when non-empty.
        timeout: default (connect, read) timeout for requests that give none.
    """

    def __init__(
        self,
        base_url: str,
        session_manager: SessionManager,
        token: str = "",
        timeout: TimeoutArg = None,
    ) -> None:
        self.base_url = base_url
        self.session_manager = session_manager
        self.token = token
        self.timeout = timeout

    def headers(self, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        """Caller headers with the SDK's own on top (they win, as in the official SDK)."""
        merged = dict(extra) if extra else {}
        merged[HEADER_CONTENT_TYPE] = JSON_CONTENT_TYPE
        merged[HEADER_USER_AGENT] = _USER_AGENT
        if self.token:
            merged[HEADER_AUTHORIZATION] = f"Bearer {self.token}"
        return merged

    def send(
        self, method: str, url: str, headers: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> requests.Response:
        """One request to an absolute URL; `kwargs` go to `requests.Session.request`."""
        if self.timeout is not None and "timeout" not in kwargs:
            kwargs["timeout"] = self.timeout
        session = self.session_manager.session
        direct = method.upper() in _DIRECT_METHODS and _DIRECT_KWARGS.issuperset(kwargs)
        if direct and _plain(session):
            resp = self._send_direct(session, method, url, headers, **kwargs)
            if not resp.is_redirect or not kwargs.get("allow_redirects", True):
                return resp
            # A proxy sends the client to a target: follow once, as requests would.
            location = urljoin(url, resp.headers[HEADER_LOCATION])
            resp.close()
            resp = self._send_direct(
                session, method, location, headers, **{**kwargs, "params": None}
            )
            if not resp.is_redirect:
                return resp
            resp.close()  # more hops: requests follows them
        # `requests` lets REQUESTS_CA_BUNDLE override a session's CA path or skip flag unless
        # the request repeats it; an explicit choice must win over the environment.
        if session.verify is not True:
            kwargs.setdefault("verify", session.verify)
        return session.request(method, url, headers=self.headers(headers), **kwargs)

    def _session_headers(
        self, session: requests.Session, extra: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """What `Session.request` would send: the session's headers, then ours on top."""
        merged: dict[str, Any] = dict(session.headers)
        merged.update(self.headers(extra))
        return merged

    def _send_direct(
        self,
        session: requests.Session,
        method: str,
        url: str,
        headers: Mapping[str, Any] | None,
        params: Mapping[str, Any] | None = None,
        stream: bool = False,
        timeout: TimeoutArg = None,
        allow_redirects: bool = True,
    ) -> requests.Response:
        """A body-less request handed straight to the session's adapter, which maps errors and
        builds the `Response` exactly as `Session.request` would. What is skipped - environment
        merging, cookies, hooks, auth, redirect handling - is unused by a plain session (see
        `_plain`), and cost a small GET a third of its client CPU."""
        req = requests.PreparedRequest()
        req.method = method.upper()
        req.url = _with_query(url, params)
        req.headers = CaseInsensitiveDict(self._session_headers(session, headers))
        req.body = None
        req.hooks = {"response": []}
        verify = True if session.verify is None else session.verify
        send: Any = session.get_adapter(req.url).send  # its stub's timeout type is narrower
        resp: requests.Response = send(
            req, stream=stream, timeout=timeout, verify=verify, cert=session.cert, proxies={}
        )
        if not stream:
            resp.content  # noqa: B018 - read now, as requests does for a non-streamed request
        return resp

    def fetch(
        self,
        url: str,
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> bytes | requests.Response | None:
        """A GET through the native client: the body of a 2xx reply, or an error reply (status
        400 and up, body read) for the response handler; None when the request must take the
        regular path (`send`), which then decides what happens.

        Covered: plain HTTP with a plain session (see `_plain`), one redirect. Left to the
        regular path: HTTPS, statuses the session's urllib3 policy retries (429, 5xx; the
        regular path then applies the whole policy, so such a GET is sent once more than the
        policy alone would), bodies without a length or with a content coding, and replies
        that cannot be parsed. Failed or broken connections and timeouts raise the `requests`
        exceptions the regular path would (ConnectionError, ConnectTimeout, ReadTimeout), so
        the network retry policy sees the same errors and sends the request again.
        """
        reply = self._send_native("GET", url, headers, params, None)
        assert not isinstance(reply, _native.HttpResponse)
        return reply

    def open_stream(
        self,
        method: str,
        url: str,
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        data: bytes = b"",
    ) -> _native.HttpResponse | requests.Response | None:
        """Like `fetch`, for a reply read as it streams in: a 2xx reply comes back with its
        head read (the caller reads the body with `readinto` and closes it). `data` is sent as
        the request body, again after a redirect."""
        reply = self._send_native(method.upper(), url, headers, params, data)
        assert not isinstance(reply, bytes)
        return reply

    def head(
        self,
        url: str,
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> requests.Response | None:
        """A HEAD through the native client, as the `requests.Response` an adapter would build
        (any status); None when it must take the regular path (see `fetch`)."""
        reply = self._send_native("HEAD", url, headers, params, b"")
        if not isinstance(reply, NativeStream):
            assert not isinstance(reply, bytes)
            return reply
        status, fields = reply.status, reply.fields
        reply.close()
        return _built_reply("HEAD", status, header_dict(fields), b"", url, headers or {})

    def _send_native(
        self,
        method: str,
        url: str,
        headers: Mapping[str, Any] | None,
        params: Mapping[str, Any] | None,
        data: bytes | None,
    ) -> bytes | _native.HttpResponse | requests.Response | None:
        """`fetch` (data None: the whole body as bytes) or `open_stream` (an HttpResponse)."""
        session = self.session_manager.session
        if not url.startswith(HTTP) or not _plain(session):
            return None
        connect_timeout, read_timeout = _split_timeout(self.timeout)
        merged = self._session_headers(session, headers)
        header_list = [
            (name, str(value))
            for name, value in merged.items()
            if name.lower() not in _NATIVE_DROPPED_HEADERS and value is not None
        ]
        client = self.session_manager.native_client
        target_url = _with_query(url, params)
        for _hop in range(2):
            slash = target_url.find("/", len(HTTP))
            origin = _http_origin(target_url[:slash] if slash >= 0 else target_url)
            if origin is None:
                return None
            target = target_url[slash:] if slash >= 0 else "/"
            host, port = origin
            try:
                if data is None:
                    status, body, fields = client.get(
                        host, port, target, header_list, connect_timeout, read_timeout
                    )
                    if fields is None:  # 2xx: its body, or None when it has no length
                        return body
                else:
                    stream = client.open(
                        host,
                        port,
                        method,
                        target,
                        header_list,
                        data,
                        connect_timeout,
                        read_timeout,
                    )
                    status, fields = stream.status, stream.fields
                    if 200 <= status < 300:
                        return stream
                    body = _read_small(stream) if status >= 400 else None
                    stream.close(_MAX_ERROR_BODY)
            except _native.ConnectTimeout as err:
                raise requests.exceptions.ConnectTimeout(str(err)) from err
            except _native.ReadTimeout as err:
                raise requests.exceptions.ReadTimeout(str(err)) from err
            except _native.ConnectionFailed as err:
                raise requests.exceptions.ConnectionError(str(err)) from err
            except _native.HttpError as err:
                logger.debug("native %s failed, sending it the regular way: %s", method, err)
                return None
            reply_headers = header_dict(fields)
            location = reply_headers.get(HEADER_LOCATION)
            if status in _REDIRECTS and location:
                target_url = urljoin(target_url, location)
                if not target_url.startswith(HTTP):
                    return None
                continue
            adapter = session.get_adapter(target_url)
            retry = adapter.max_retries if isinstance(adapter, HTTPAdapter) else None
            if (
                status < 400
                or body is None
                or (retry is not None and retry.is_retry(method, status))
            ):
                return None
            return _built_reply(method, status, reply_headers, body, target_url, merged)
        return None

    def send_https_with_body(
        self, method: str, url: str, headers: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> requests.Response:
        """Ask the proxy where to go with an empty body, then send the body there.

        The first leg carries the real `Content-Length` (the proxy may sign it) and
        `Connection: close`; a reply other than 301/307 is returned as it is.
        """
        data = kwargs.pop("data")
        probe_headers = dict(headers) if headers else {}
        probe_headers[HEADER_CONNECTION] = "close"
        length = body_length(data)
        if length is not None:
            probe_headers[HEADER_CONTENT_LENGTH] = str(length)
        probe = self.send(
            method, url, headers=probe_headers, data=b"", allow_redirects=False, **kwargs
        )
        if probe.status_code not in (STATUS_REDIRECT_PERM, STATUS_REDIRECT_TMP):
            logger.debug("no redirect for %s %s: status %d", method, url, probe.status_code)
            return probe
        location = probe.headers.get(HEADER_LOCATION)
        probe.close()
        if not location:
            raise ValueError(
                f"No redirect URL received from proxy for {method} {url} "
                f"(status {probe.status_code} without Location)"
            )
        return self.send(method, urljoin(url, location), headers=headers, data=data, **kwargs)
