"""Reading a multipart body part by part as it streams in (GetBatch `strm: false` replies).

A part's body is a `ByteSource`: it ends where the next delimiter (`CRLF--boundary`) starts,
which is found with `bytearray.find` over the buffered bytes, keeping back only as many bytes
as a delimiter split across two reads could hide. Nothing is held beyond one buffer.

Example:
    >>> import io
    >>> body = b"--B\\r\\n\\r\\nhello\\r\\n--B\\r\\nX: y\\r\\n\\r\\nworld\\r\\n--B--\\r\\n"
    >>> mp = MultipartStream(ReaderSource(io.BytesIO(body)), b"B")
    >>> headers, part = mp.next_part()
    >>> part.read()
    b'hello'
    >>> headers, part = mp.next_part()
    >>> headers, part.read()
    ({'x': 'y'}, b'world')
    >>> mp.next_part() is None
    True
"""

from __future__ import annotations

import re

from aistore._internal.byte_stream import ByteSource, ReaderSource, StreamBuffer

__all__ = ["MultipartError", "MultipartStream", "PartReader", "ReaderSource", "boundary_of"]

_MAX_HEADERS = 64 << 10
_BOUNDARY_RE = re.compile(r"boundary=([^;,\s]+)")


class MultipartError(ValueError):
    """The body is not the multipart document its Content-Type announced."""


def boundary_of(content_type: str) -> bytes:
    """The boundary of a `multipart/...; boundary=B` Content-Type (quotes stripped).

    Raises:
        MultipartError: not multipart, or no boundary.
    """
    if "multipart" not in content_type:
        raise MultipartError(f"not a multipart response (Content-Type {content_type!r})")
    m = _BOUNDARY_RE.search(content_type)
    if not m:
        raise MultipartError(f"no boundary in Content-Type {content_type!r}")
    return m.group(1).strip("\"'").encode()


class PartReader:
    """The body of one part: a `ByteSource` (and `read()`) ending at the next delimiter."""

    def __init__(self, stream: MultipartStream) -> None:
        self._s = stream
        self.done = False

    def readinto(self, buf: memoryview) -> int:
        if self.done or not len(buf):
            return 0
        b, delim = self._s.buf, self._s.delim
        while True:
            idx = b.buf.find(delim, b.pos, b.end)
            if idx >= 0:
                n = min(len(buf), idx - b.pos)
                if n == 0:
                    b.pos += len(delim)
                    self.done = True
                    return 0
            else:
                # Keep back what could be the start of a delimiter cut by the read.
                n = min(len(buf), b.available - (len(delim) - 1))
                if n <= 0:
                    grew = b.ensure(b.available + max(len(delim), 64 << 10))
                    if not grew and b.buf.find(delim, b.pos, b.end) < 0:
                        raise MultipartError("multipart: body ends inside a part")
                    continue
            buf[:n] = b.mv[b.pos : b.pos + n]
            b.pos += n
            return n

    def read(self) -> bytes:
        """The rest of the part."""
        chunks: list[bytes] = []
        piece = bytearray(1 << 20)
        mv = memoryview(piece)
        while True:
            n = self.readinto(mv)
            if n == 0:
                return b"".join(chunks)
            chunks.append(bytes(mv[:n]))


class MultipartStream:
    """The parts of a multipart body, in order.

    REQUIRES: each part is read to its end before `next_part()` is called again (or the rest
    of it is skipped by `next_part()` itself).
    """

    def __init__(self, source: ByteSource, boundary: bytes) -> None:
        self.buf = StreamBuffer(source, 1 << 20)
        self.delim = b"\r\n--" + boundary
        self._first = b"--" + boundary
        self._part: PartReader | None = None
        self._finished = False

    def next_part(self) -> tuple[dict[str, str], PartReader] | None:
        """Headers (lower-case names) and body of the next part; None after the last one.

        Raises:
            MultipartError: malformed framing.
        """
        if self._finished:
            return None
        b = self.buf
        if self._part is None:
            self._skip_preamble()
        else:
            while not self._part.done:  # skip what the caller left unread
                scratch = memoryview(bytearray(1 << 16))
                self._part.readinto(scratch)
        if not b.ensure(2):
            raise MultipartError("multipart: body ends after a delimiter")
        tail = bytes(b.mv[b.pos : b.pos + 2])
        if tail == b"--":
            self._finished = True
            return None
        headers = self._headers()
        self._part = PartReader(self)
        return headers, self._part

    def _skip_preamble(self) -> None:
        b = self.buf
        while True:
            b.ensure(len(self._first))
            idx = b.buf.find(self._first, b.pos, b.end)
            if idx >= 0:
                b.pos = idx + len(self._first)
                return
            if b.eof or b.available > _MAX_HEADERS:
                raise MultipartError("multipart: no opening delimiter")
            b.ensure(b.available + 1)

    def _headers(self) -> dict[str, str]:
        b = self.buf
        # The delimiter line may carry transport padding before its CRLF.
        while True:
            idx = b.buf.find(b"\r\n", b.pos, b.end)
            if idx >= 0:
                b.pos = idx + 2
                break
            if not b.ensure(b.available + 1) or b.available > _MAX_HEADERS:
                raise MultipartError("multipart: bad delimiter line")
        if not b.ensure(2):
            raise MultipartError("multipart: body ends in part headers")
        if bytes(b.mv[b.pos : b.pos + 2]) == b"\r\n":  # no headers at all
            b.pos += 2
            return {}
        while True:
            idx = b.buf.find(b"\r\n\r\n", b.pos, b.end)
            if idx >= 0:
                break
            if not b.ensure(b.available + 1) or b.available > _MAX_HEADERS:
                raise MultipartError("multipart: part headers do not end")
        raw = bytes(b.mv[b.pos : idx]).decode("latin-1")
        b.pos = idx + 4
        headers: dict[str, str] = {}
        for line in raw.split("\r\n"):
            if ":" in line:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
        return headers
