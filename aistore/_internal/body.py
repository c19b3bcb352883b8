"""Reading a streamed response body so that each byte is copied once, kernel → destination.

`requests.Response.content` joins 10 KiB pieces (two copies and many calls) and urllib3's
`readinto` reads into a temporary and copies. Below the decoding layer,
`http.client.HTTPResponse.readinto` lands bytes straight in the caller's buffer and
`read(n)` fills one new `bytes` object. We use those when the body is not content-encoded
(AIS never encodes object bytes) and fall back to urllib3 otherwise.

Socket, TLS and framing errors are translated here into the `requests` exceptions that the
retry and resume logic know, in the same way `requests.Response.iter_content` does.

Both readers, of a `requests` reply (`BodyReader`) and of one the native client streams
(`NativeBodyReader`), are a `StreamedReply`: what the parallel range engine reads.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

import requests
from requests.exceptions import (
    ChunkedEncodingError,
    ContentDecodingError,
    ReadTimeout,
)
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import SSLError as RequestsSSLError
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError
from urllib3.exceptions import SSLError as Urllib3SSLError

from aistore import _native
from aistore._internal.transport import header_dict
from aistore.sdk.const import (
    HEADER_CONTENT_ENCODING,
    HEADER_CONTENT_LENGTH,
    STATUS_PARTIAL_CONTENT,
)


@contextmanager
def translate_stream_errors() -> Iterator[None]:
    """Map urllib3, http.client and socket errors met while reading a body to `requests` ones."""
    try:
        yield
    except ProtocolError as err:
        raise ChunkedEncodingError(err) from err
    except DecodeError as err:
        raise ContentDecodingError(err) from err
    except ReadTimeoutError as err:
        raise RequestsConnectionError(err) from err
    except Urllib3SSLError as err:
        raise RequestsSSLError(err) from err
    except TimeoutError as err:
        raise ReadTimeout(err) from err
    except http.client.HTTPException as err:
        raise ChunkedEncodingError(err) from err
    except OSError as err:
        if isinstance(err, requests.RequestException):
            raise
        raise RequestsConnectionError(err) from err


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


class StreamedReply(Protocol):
    """A successful reply whose body is read as it arrives; its reader OWNS it."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Header fields, names case-insensitive."""
        ...

    def readinto(self, buf: memoryview) -> int:
        """Body bytes into `buf` (at least one unless the body is over); 0 once it is over."""
        ...

    def abort(self) -> None:
        """From another thread: make a read blocked on the connection fail at once; the
        connection is then dropped, not reused. Never raises."""
        ...

    def close(self) -> None:
        """End the reply; idempotent."""
        ...


class BodyReader:
    """Consumes one streamed response; a `ByteSource` for `ResumableStream`.

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
        self._eof = False

    @property
    def status_code(self) -> int:
        """Status of the reply."""
        return self._resp.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        """Header fields of the reply."""
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
        if self._eof or size <= 0:
            return b""
        with translate_stream_errors():
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
        if self._eof or not buf:
            return 0
        if self._http is None:
            data = self.read(len(buf))
            buf[: len(data)] = data
            return len(data)
        with translate_stream_errors():
            n = self._http.readinto(buf)
        if n == 0:
            self._check_complete()
        return n

    def read_all(self) -> bytes:
        """The rest of the body as one `bytes` (one copy when the length is known)."""
        if self._eof:
            return b""
        with translate_stream_errors():
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

    def close(self) -> None:
        """Release the response; idempotent."""
        self._resp.close()


class NativeBodyReader:
    """The body of a reply the native client streams (`Transport.open_stream`), as a byte
    source: `readinto` raises the `requests` exceptions `BodyReader` would.

    OWNS `stream`: `close()` reads up to `drain` bytes left (the end of an archive, a chunked
    coding's end) so that the connection is kept, and drops it when more are left.
    """

    def __init__(self, stream: _native.HttpResponse, drain: int = 0) -> None:
        self._stream = stream
        self._drain = drain
        self._headers: Mapping[str, str] | None = None

    @property
    def status_code(self) -> int:
        """Status of the reply."""
        return self._stream.status

    @property
    def headers(self) -> Mapping[str, str]:
        """Header fields of the reply, built on first use."""
        if self._headers is None:
            self._headers = header_dict(self._stream.fields)
        return self._headers

    def abort(self) -> None:
        """Shut the connection down, from any thread: a read blocked on it fails at once, and
        the connection is never reused; a no-op once closed."""
        self._stream.abort()

    def readinto(self, buf: memoryview) -> int:
        """Body bytes into `buf` (at least one unless the body is over); 0 once it is over.

        Raises:
            ChunkedEncodingError: the connection failed or closed before the body's end.
            ReadTimeout: nothing arrived within the read timeout.
        """
        try:
            return self._stream.readinto(buf)
        except _native.ReadTimeout as err:
            raise ReadTimeout(err) from err
        except _native.HttpError as err:
            raise ChunkedEncodingError(err) from err

    def close(self) -> None:
        """End the reply; idempotent."""
        self._stream.close(self._drain)
