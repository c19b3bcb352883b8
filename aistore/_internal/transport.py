"""The client's one seam: a transport takes (method, url, headers, body) and returns a `Reply`.

Two transports implement it, as httpx's client holds one of several behind one interface:

- `NativeTransport`: our keep-alive HTTP/1.1 client (`csrc/http_client.h`) for plain HTTP
  with no body, a buffer body (sent from where it is) or a regular file's rest (sent with
  sendfile): a small GET through the SDK costs ~35 us of client CPU with it, ~510 us with
  `requests` (docs/figures.md).
- `RequestsTransport`: a `requests.Session` for everything else (HTTPS, proxies, auth,
  streamed uploads), including the two-step body redirect over HTTPS.

`select_transport` decides which one serves a request, and is the only place that does.
Both follow proxy → target redirects themselves and never send a request twice: retries
(status and network) belong to the caller (`aistore.sdk.retry_manager.RetryManager`).
Foreign errors become the `requests` exceptions the retry policies know, by the one table of
`aistore._internal.error_map`.
"""

from __future__ import annotations

import functools
import io
import os
import stat
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import requests
from requests.exceptions import TooManyRedirects

from aistore import _native
from aistore._internal.body import BodyReader, BufferedReply, NativeReply, Reply, header_dict
from aistore._internal.config import TimeoutArg
from aistore._internal.const import (
    HEADER_CONNECTION,
    HEADER_CONTENT_LENGTH,
    HEADER_LOCATION,
    HTTP,
    HTTPS,
    STATUS_REDIRECT_PERM,
    STATUS_REDIRECT_TMP,
)
from aistore._internal.error_map import map_errors

__all__ = [
    "HttpTransport",
    "NativeTransport",
    "RequestsTransport",
    "body_length",
    "environment_matters",
    "select_transport",
    "with_query",
]


def environment_matters() -> bool:
    """Whether requests' per-request environment lookups could change anything: proxy
    variables or a .netrc file are present."""
    netrc = os.environ.get("NETRC") or os.path.expanduser("~/.netrc")
    return bool(urllib.request.getproxies()) or os.path.exists(netrc)


def with_query(url: str, params: Mapping[str, Any] | None) -> str:
    """`url` with the query string `requests` builds from `params`: lists repeat the key,
    None values are left out."""
    if not params:
        return url
    pairs: list[tuple[str, Any]] = []
    for key, value in params.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        pairs.extend((key, v) for v in values if v is not None)
    query = urlencode(pairs)
    if not query:
        return url
    return f"{url}&{query}" if "?" in url else f"{url}?{query}"


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
        except (AttributeError, OSError, ValueError):
            pass
        try:
            pos = data.tell()
            end = data.seek(0, os.SEEK_END)
            data.seek(pos)
            return int(end - pos)
        except (AttributeError, OSError, ValueError):
            return None
    return None


def _file_range(body: Any) -> tuple[int, int, int] | None:
    """(fd, offset, length) of a binary file object over a regular file: its bytes from the
    current position to the end, which the native client sends with sendfile. None for
    anything else (pipes, sockets, text files, in-memory streams)."""
    if not isinstance(body, (io.BufferedReader, io.FileIO)):
        return None
    try:
        fd = body.fileno()
        st = os.fstat(fd)
        offset = body.tell()
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or offset > st.st_size:
        return None
    return fd, offset, st.st_size - offset


def _native_body(body: Any) -> bool:
    """Whether the native client can send `body`: none, a contiguous buffer, a regular file."""
    if body is None or isinstance(body, (bytes, bytearray)):
        return True
    if isinstance(body, memoryview):
        return body.contiguous
    return _file_range(body) is not None


def _split_timeout(timeout: TimeoutArg) -> tuple[float | None, float | None]:
    if isinstance(timeout, tuple):
        return timeout[0], timeout[1]
    return timeout, timeout


_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_MAX_REDIRECTS = requests.models.DEFAULT_REDIRECT_LIMIT
# An error reply's body (its message) is read up to this size (the native client's limit).
MAX_ERROR_BODY = 64 << 10
# `requests` offers compressed replies; the native client reads bodies as they are sent.
_NATIVE_DROPPED_HEADERS = frozenset(("accept-encoding",))


class HttpTransport:
    """Sends one request and returns its reply, head read; no retries, no error statuses
    raised. The caller OWNS the reply and closes it.

    Example:
        >>> reply = transport.send("GET", "http://h:8080/v1/objects/b/o", {}, None)
        >>> data = reply.read_all()
    """

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: Any,
        *,
        stream: bool = True,
        timeout: TimeoutArg = None,
        follow_redirects: bool = True,
    ) -> Reply:
        """Send `method url`; with `stream` False the body is read before returning.

        Raises:
            requests.RequestException: the request failed below HTTP (see `error_map`).
        """
        raise NotImplementedError


def _plain(session: requests.Session) -> bool:
    """Whether `Session.request` would add nothing to a request but the session's headers:
    no environment lookups, proxies, auth, cookies or hooks."""
    return (
        not session.trust_env
        and not session.proxies
        and session.auth is None
        and not session.cookies
        and not any(session.hooks.values())
    )


@functools.lru_cache(maxsize=256)
def _host_port(origin: str) -> tuple[str, int] | None:
    """(host, port) of `http://host[:port]` without credentials, else None. Cached: a client
    talks to a handful of origins, and parsing one costs more than the rest of a small GET's
    Python path (`urlsplit`'s properties parse the netloc again on each access)."""
    parts = urlsplit(origin)
    if parts.username is not None or parts.hostname is None:
        return None
    return parts.hostname, parts.port or 80


def _http_origin(url: str) -> tuple[str, int, str] | None:
    """(host, port, target) of an `http://` URL without credentials, else None."""
    if not url.startswith(HTTP):
        return None
    slash = url.find("/", len(HTTP))
    host_port = _host_port(url[:slash] if slash >= 0 else url)
    if host_port is None:
        return None
    return host_port[0], host_port[1], url[slash:] if slash >= 0 else "/"


# The session's header fields as the native client sends them, by the headers' (name, value)
# pairs: a session's headers rarely change, and reading a CaseInsensitiveDict costs more than
# the rest of building a request. Bounded; past the bound, fields are built each time.
_SESSION_FIELDS: dict[tuple[Any, ...], dict[str, tuple[str, str]]] = {}
_SESSION_FIELDS_MAX = 64


def _session_fields(headers: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """{lower-case name: (name, value)} of a session's headers, without those the native
    client must not send. The caller must not modify the result."""
    store = getattr(headers, "_store", None)  # CaseInsensitiveDict: {lower: (name, value)}
    pairs = tuple(store.values()) if isinstance(store, dict) else tuple(headers.items())
    try:
        return _SESSION_FIELDS[pairs]
    except KeyError:
        pass
    except TypeError:  # an unhashable value
        pairs = ()
    fields = {
        name.lower(): (name, str(value))
        for name, value in (pairs or headers.items())
        if value is not None and name.lower() not in _NATIVE_DROPPED_HEADERS
    }
    if pairs and len(_SESSION_FIELDS) < _SESSION_FIELDS_MAX:
        _SESSION_FIELDS[pairs] = fields
    return fields


def select_transport(
    method: str,
    url: str,
    body: Any,
    session: requests.Session,
    native_client: Callable[[], _native.HttpClient],
) -> HttpTransport:
    """The transport that serves `method url` with `body`: the native one over plain HTTP for
    a body it can send (`_native_body`), on a session that adds nothing of its own (see
    `_plain`); `requests` for all else. The only place this is decided."""
    if _http_origin(url) is not None and _native_body(body) and _plain(session):
        return NativeTransport(native_client(), session, native_client)
    return RequestsTransport(session)


class NativeTransport(HttpTransport):
    """Requests through `_native.HttpClient`; redirects followed here (a hop the native client
    cannot take goes to the transport `select_transport` picks for it).

    Args:
        client: the calling process's native client.
        session: its headers are sent, as `requests` would send them.
        native_client: the native client factory, for hops that follow a redirect.
    """

    def __init__(
        self,
        client: _native.HttpClient,
        session: requests.Session,
        native_client: Callable[[], _native.HttpClient],
    ) -> None:
        self._client = client
        self._session = session
        self._native_client = native_client

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: Any,
        *,
        stream: bool = True,
        timeout: TimeoutArg = None,
        follow_redirects: bool = True,
    ) -> Reply:
        merged = dict(_session_fields(self._session.headers))
        for name, value in headers.items():
            key = name.lower()
            if value is None or key in _NATIVE_DROPPED_HEADERS:
                merged.pop(key, None)  # None removes a session header, as in `requests`
            else:
                merged[key] = (name, str(value))
        fields = list(merged.values())
        connect, read = _split_timeout(timeout)
        for _hop in range(_MAX_REDIRECTS + 1):
            origin = _http_origin(url)
            if origin is None:  # a redirect to where the native client cannot go
                transport = select_transport(method, url, body, self._session, self._native_client)
                other = transport.send(method, url, headers, body, stream=stream, timeout=timeout)
                other.redirected = other.redirected or _hop > 0
                return other
            host, port, target = origin
            with map_errors("send"):
                if not stream and body is None and method == "GET":
                    status, got, reply_fields = self._client.get(
                        host, port, target, fields, connect, read
                    )
                    if isinstance(got, bytes):
                        reply: Reply = BufferedReply(status, header_dict(reply_fields), got)
                    else:
                        reply = NativeReply(got)
                elif (span := _file_range(body)) is not None:
                    fd, offset, length = span  # sent from the same offset on every hop
                    got = self._client.open_file(
                        host, port, method, target, fields, fd, offset, length, connect, read
                    )
                    reply = NativeReply(got)
                else:
                    got = self._client.open(
                        host,
                        port,
                        method,
                        target,
                        fields,
                        b"" if body is None else body,
                        connect,
                        read,
                    )
                    reply = NativeReply(got)
            location = reply.headers.get(HEADER_LOCATION) if reply.status in _REDIRECTS else None
            if not location or not follow_redirects:
                if isinstance(reply, NativeReply) and (
                    method == "HEAD" or (not stream and reply.status < 400)
                ):
                    reply = reply.buffered(0 if method == "HEAD" else None)
                reply.redirected = _hop > 0
                return reply
            reply.close(MAX_ERROR_BODY)
            url = urljoin(url, location)
        raise TooManyRedirects(f"Exceeded {_MAX_REDIRECTS} redirects.")


def refuse_downgrade(from_url: str, to_url: str) -> None:
    """Raise `requests.exceptions.InvalidURL` for a redirect from https:// to http://: the
    request's token and body would then travel unencrypted (a TLS proxy never sends one)."""
    if from_url.startswith(HTTPS) and not to_url.startswith(HTTPS):
        raise requests.exceptions.InvalidURL(
            f"refusing to follow a redirect from {urlsplit(from_url).netloc} to {to_url!r}: "
            "HTTPS to plain HTTP would send the token and the body unencrypted"
        )


class NoDowngradeSession(requests.Session):
    """A `requests.Session` whose redirects never go from https:// to http://."""

    def rebuild_auth(
        self, prepared_request: requests.PreparedRequest, response: requests.Response
    ) -> None:
        refuse_downgrade(str(response.request.url), str(prepared_request.url))
        super().rebuild_auth(prepared_request, response)  # type: ignore[no-untyped-call]  # (untyped in the stubs)


class RequestsTransport(HttpTransport):
    """Requests through a `requests.Session`, whose adapters retry nothing (status retries
    are the caller's). Over plain HTTP, `requests` follows redirects and rewinds a seekable
    body for the second leg. Over HTTPS a proxy must not see the body (TLS servers close the
    connection before reading it), so a request with a body asks the proxy where to go with
    an empty body first (`_send_https_with_body`)."""

    def __init__(self, session: requests.Session) -> None:
        self._session = session

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: Any,
        *,
        stream: bool = True,
        timeout: TimeoutArg = None,
        follow_redirects: bool = True,
        **extra: Any,
    ) -> Reply:
        """As `HttpTransport.send`; `extra` goes to `requests.Session.request`."""
        if body is not None and url.startswith(HTTPS) and follow_redirects:
            return self._send_https_with_body(method, url, headers, body, stream, timeout, extra)
        return BodyReader(
            self._request(method, url, headers, body, stream, timeout, follow_redirects, extra)
        )

    def _request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: Any,
        stream: bool,
        timeout: TimeoutArg,
        follow_redirects: bool,
        extra: Mapping[str, Any],
    ) -> requests.Response:
        session = self._session
        kwargs: dict[str, Any] = dict(extra)
        # `requests` lets REQUESTS_CA_BUNDLE override a session's CA path or skip flag unless
        # the request repeats it; an explicit choice must win over the environment.
        if session.verify is not True:
            kwargs["verify"] = session.verify
        with map_errors("send"):
            return session.request(
                method,
                url,
                headers=dict(headers),
                data=body,
                stream=stream,
                timeout=timeout,
                allow_redirects=follow_redirects,
                **kwargs,
            )

    def _send_https_with_body(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: Any,
        stream: bool,
        timeout: TimeoutArg,
        extra: Mapping[str, Any],
    ) -> Reply:
        """Ask the proxy where to go with an empty body, then send the body there.

        The first leg carries the real `Content-Length` (the proxy may sign it) and
        `Connection: close`; a reply other than 301/307 is returned as it is.
        """
        probe_headers = dict(headers)
        probe_headers[HEADER_CONNECTION] = "close"
        length = body_length(body)
        if length is not None:
            probe_headers[HEADER_CONTENT_LENGTH] = str(length)
        probe = self._request(method, url, probe_headers, b"", stream, timeout, False, extra)
        if probe.status_code not in (STATUS_REDIRECT_PERM, STATUS_REDIRECT_TMP):
            return BodyReader(probe)
        location = probe.headers.get(HEADER_LOCATION)
        probe.close()
        if not location:
            raise ValueError(
                f"No redirect URL received from proxy for {method} {url} "
                f"(status {probe.status_code} without Location)"
            )
        target = urljoin(url, location)
        refuse_downgrade(url, target)
        return BodyReader(
            self._request(method, target, headers, body, stream, timeout, True, extra)
        )
