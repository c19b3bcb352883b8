"""The reply of one request, whichever transport sent it: `Reply` and its three kinds.

A `Reply` has a status, case-insensitive headers and a body read by `read_all()`,
`readinto()`, `read()` or iteration; `close(drain)` ends it. Its owner closes it.

- `NativeReply`: a reply the native client streams (`_native.HttpResponse`).
- `BodyReader`: a `requests.Response` read below the decoding layer, so each byte is copied
  once, kernel → destination: `http.client.HTTPResponse.readinto` lands bytes straight in the
  caller's buffer and `read(n)` fills one new `bytes` object (urllib3's `readinto` reads into
  a temporary and copies). Content-encoded bodies (AIS never encodes object bytes) go through
  urllib3.
- `BufferedReply`: a reply whose body was read whole when it arrived.

Errors met while reading a body are raised as the `requests` exceptions the retry and resume
logic know, by the table of `aistore._internal.error_map`.
"""

from __future__ import annotations

import contextlib
import http
import http.client
import socket
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import requests
from requests.exceptions import ChunkedEncodingError, ContentDecodingError
from requests.structures import CaseInsensitiveDict

from aistore import _native
from aistore._internal.const import (
    HEADER_CONTENT_ENCODING,
    HEADER_CONTENT_LENGTH,
    STATUS_PARTIAL_CONTENT,
)
from aistore._internal.error_map import map_errors

__all__ = [
    "BodyReader",
    "BufferedReply",
    "NativeReply",
    "Reply",
    "StreamedReply",
    "as_response",
    "content_length",
    "header_dict",
]

_ITER_CHUNK = 1 << 20


def _is_encoded(headers: Mapping[str, str]) -> bool:
    encoding = headers.get(HEADER_CONTENT_ENCODING, "identity").strip().lower()
    return encoding not in ("", "identity")


def content_length(headers: Mapping[str, str]) -> int | None:
    """Bytes the body will deliver, when the reply's headers say so and it is not
    content-encoded."""
    if _is_encoded(headers):
        return None
    raw = headers.get(HEADER_CONTENT_LENGTH)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def header_dict(fields: list[tuple[str, str]] | None) -> CaseInsensitiveDict[str]:
    """Header fields as `requests` shows them: a repeated field's values joined by ", "."""
    headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for name, value in fields or ():
        previous = headers.get(name)
        headers[name] = value if previous is None else f"{previous}, {value}"
    return headers


class Reply:
    """One reply, head read; the body is read through it. OWNED by whoever holds it.

    Example:
        >>> reply = transport.send("GET", url, {}, None)
        >>> data = reply.read_all(); reply.close()
    """

    redirected = False  # set by the transport when a redirect led to it

    @property
    def status(self) -> int:
        """HTTP status."""
        raise NotImplementedError

    @property
    def status_code(self) -> int:
        """HTTP status (the name `requests` uses)."""
        return self.status

    @property
    def headers(self) -> Mapping[str, str]:
        """Header fields, names case-insensitive."""
        raise NotImplementedError

    def readinto(self, buf: memoryview) -> int:
        """Body bytes into `buf` (at least one unless the body is over); 0 once it is over.

        Raises:
            requests.RequestException: the body broke off (ChunkedEncodingError) or stalled.
        """
        raise NotImplementedError

    def read(self, size: int) -> bytes:
        """Up to `size` bytes; b"" once the body is over."""
        buf = bytearray(size)
        n = self.readinto(memoryview(buf))
        del buf[n:]
        return bytes(buf)

    def read_all(self) -> bytes:
        """The rest of the body as one `bytes`."""
        length = content_length(self.headers)
        if length is not None:
            out = _native.FillableBytes(length)
            view = memoryview(out)
            got = 0
            while got < length:
                n = self.readinto(view[got:])
                if n == 0:
                    raise ChunkedEncodingError(http.client.IncompleteRead(b"", length - got))
                got += n
            view.release()
            return _decoded(self.headers, out.take())
        chunks = list(self)
        return _decoded(self.headers, b"".join(chunks))

    def __iter__(self) -> Iterator[bytes]:
        """The body in pieces of up to 1 MiB."""
        while data := self.read(_ITER_CHUNK):
            yield data

    def close(self, drain: int = 0) -> None:
        """End the reply; idempotent. Up to `drain` bytes left of the body are read first,
        so that the connection can serve again; with more left it is dropped."""
        raise NotImplementedError

    def abort(self) -> None:
        """From another thread: make a read blocked on the connection fail at once; the
        connection is then dropped, not reused. Never raises."""


# A streamed body is what the native reply sends: one with a content coding is decoded here.
def _decoded(headers: Mapping[str, str], data: bytes) -> bytes:
    if not _is_encoded(headers):
        return data
    coding = headers.get(HEADER_CONTENT_ENCODING, "").strip().lower()
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompress(data, 16 + zlib.MAX_WBITS)
        if coding == "deflate":
            return zlib.decompress(data)
    except zlib.error as err:
        raise ContentDecodingError(err) from err
    raise ContentDecodingError(f"unsupported content coding {coding!r}")


StreamedReply = Reply


class BufferedReply(Reply):
    """A reply whose (decoded) body is in memory."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self._status = status
        self._headers = headers
        self._body = body
        self._pos = 0

    @property
    def status(self) -> int:
        return self._status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    def readinto(self, buf: memoryview) -> int:
        n = min(len(buf), len(self._body) - self._pos)
        buf[:n] = self._body[self._pos : self._pos + n]
        self._pos += n
        return n

    def read_all(self) -> bytes:
        body = self._body if self._pos == 0 else self._body[self._pos :]
        self._pos = len(self._body)
        return body

    def close(self, drain: int = 0) -> None:
        self._pos = len(self._body)


class NativeReply(Reply):
    """A reply the native client streams. OWNS `stream`."""

    def __init__(self, stream: _native.HttpResponse) -> None:
        self._stream = stream
        self._status = stream.status  # the stream forgets it once closed
        self._headers: Mapping[str, str] | None = None

    @property
    def status(self) -> int:
        return self._status

    @property
    def headers(self) -> Mapping[str, str]:
        if self._headers is None:
            self._headers = header_dict(self._stream.fields)
        return self._headers

    @property
    def stream(self) -> _native.HttpResponse:
        """The native reply, for a C++ reader of its body (see `ArchiveReader`)."""
        return self._stream

    def readinto(self, buf: memoryview) -> int:
        with map_errors("read"):
            return self._stream.readinto(buf)

    def buffered(self, limit: int | None = None) -> Reply:
        """This reply with its body read (up to `limit` bytes, when given); closes it."""
        data = self.read_all() if limit is None else self.read(limit) if limit else b""
        self.close(limit or 0)
        return BufferedReply(self.status, self.headers, data)

    def close(self, drain: int = 0) -> None:
        _ = self.headers  # read from the stream, which forgets them once closed
        self._stream.close(drain)

    def abort(self) -> None:
        self._stream.abort()


class BodyReader(Reply):
    """A streamed `requests` reply; a `ByteSource` for `ResumableStream`.

    `start` is the logical position of the first body byte: `offset` when the server
    answered 206 to a request for that offset, 0 when it sent the whole object (200).
    `expected_end` is `start` + Content-Length, or None when the length is not announced.

    OWNS `resp`: `close()` returns its connection to the pool after a complete read, and
    drops the connection otherwise (a half-read connection cannot be reused).
    """

    def __init__(self, resp: requests.Response, offset: int = 0) -> None:
        self._resp = resp
        self.start = offset if resp.status_code == STATUS_PARTIAL_CONTENT else 0
        length = content_length(resp.headers)
        self.expected_end: int | None = None if length is None else self.start + length
        self._raw: Any = resp.raw
        self._decode = _is_encoded(resp.headers)
        fp = getattr(self._raw, "_fp", None)
        self._http: http.client.HTTPResponse | None = (
            fp if isinstance(fp, http.client.HTTPResponse) and not self._decode else None
        )
        self._eof = bool(getattr(resp, "_content_consumed", False))  # a non-streamed reply
        self._content: bytes | None = resp.content if self._eof else None
        self.redirected = bool(resp.history)

    @property
    def response(self) -> requests.Response:
        """The `requests.Response` read."""
        return self._resp

    @property
    def status(self) -> int:
        return self._resp.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._resp.headers

    def abort(self) -> None:
        """Shut the socket down, from another thread: a read blocked on it fails at once and
        the connection is dropped.

        REQUIRES: the body was neither read to its end nor closed (its connection would be
        back in the pool, serving another request); the caller makes sure of it.
        """
        sock = getattr(getattr(self._raw, "_connection", None), "sock", None)
        if isinstance(sock, socket.socket):
            # The plain-socket method wakes a blocked recv without touching TLS state.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def read(self, size: int) -> bytes:
        """Up to `size` bytes; fewer only at the end of the body; b"" once it is over.

        Raises:
            ChunkedEncodingError: the connection closed before Content-Length bytes arrived.
        """
        if self._content is not None:
            data, self._content = self._content[:size], self._content[size:]
            return data
        if self._eof or size <= 0:
            return b""
        with map_errors("read"):
            if self._http is not None:
                data = self._http.read(size)
            else:
                data = self._raw.read(size, decode_content=self._decode)
        if not data:
            self._check_complete()
        return data

    def readinto(self, buf: memoryview) -> int:
        """Fill `buf` from the body (fully unless the body ends); 0 once it is over.

        Raises:
            ChunkedEncodingError: the connection closed before Content-Length bytes arrived.
        """
        if self._http is None or self._content is not None:
            data = self.read(len(buf))
            buf[: len(data)] = data
            return len(data)
        if self._eof or not buf:
            return 0
        with map_errors("read"):
            n = self._http.readinto(buf)
        if n == 0:
            self._check_complete()
        return n

    def read_all(self) -> bytes:
        """The rest of the body as one `bytes` (one copy when the length is known)."""
        if self._content is not None:
            data, self._content = self._content, b""
            return data
        if self._eof:
            return b""
        with map_errors("read"):
            if self._http is not None:
                data = self._http.read()
            else:
                data = self._raw.read(decode_content=self._decode)
        self._finish()
        return data

    def _check_complete(self) -> None:
        # http.client ends a short Content-Length body with an empty read, not an error.
        missing = self._http.length if self._http is not None else None
        if missing:
            raise ChunkedEncodingError(http.client.IncompleteRead(b"", missing))
        self._finish()

    def _finish(self) -> None:
        self._eof = True
        # The body is fully read: the connection is clean and may serve the next request.
        self._raw.release_conn()

    def close(self, drain: int = 0) -> None:
        """Release the response, after reading up to `drain` bytes left; idempotent."""
        if drain and not self._eof:
            try:
                scratch = memoryview(bytearray(min(drain, 64 << 10)))
                left = drain
                while left > 0 and (n := self.readinto(scratch[: min(left, len(scratch))])):
                    left -= n
            except requests.RequestException:
                pass  # draining keeps a connection; closing is the point
        self._resp.close()


def as_response(reply: Reply, method: str, url: str) -> requests.Response:
    """`reply` as the `requests.Response` the official SDK's calls return, its body read and
    the reply closed: the reply itself when `requests` sent it, else a response built from
    its status, headers and body (no `raw` stream: nothing is left to read; its `request`
    holds the method and URL only)."""
    if isinstance(reply, BodyReader):
        return reply.response
    response = requests.Response()
    response.request = requests.PreparedRequest()
    response.request.method, response.request.url = method, url
    response.status_code = reply.status
    response.headers = CaseInsensitiveDict(reply.headers)
    try:
        response._content = reply.read_all()
    finally:
        reply.close()
    response.url = url
    try:
        response.reason = http.HTTPStatus(reply.status).phrase
    except ValueError:
        response.reason = ""
    response.encoding = requests.utils.get_encoding_from_headers(response.headers)
    return response
