"""Buffered reading from a byte stream that fills buffers (`readinto`), for parsers that look
ahead: the multipart decoder finds its delimiters in a `StreamBuffer`.

    source (readinto) ─► StreamBuffer (one buffer; ensure(n) / take(n) / skip(n))

Example:
    >>> import io
    >>> b = StreamBuffer(ReaderSource(io.BytesIO(b"header:body")), 1024)
    >>> b.ensure(7), b.take(7)
    (True, b'header:')
    >>> b.release()
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["ByteSource", "ReaderSource", "StreamBuffer"]

_DEFAULT_BUFFER = 4 << 20
_READ_PIECE = 256 << 10  # a read returns after this much, so parsers see bytes early
_MIN_BUFFER = 1024


class ByteSource(Protocol):
    """Anything that fills a buffer: returns the number of bytes written, 0 at the end."""

    def readinto(self, buf: memoryview) -> int: ...


class ReaderSource:
    """A `ByteSource` over a file-like object (`readinto` if it has one, else `read`)."""

    def __init__(self, fileobj: Any) -> None:
        self._f = fileobj
        self._readinto = getattr(fileobj, "readinto", None)

    def readinto(self, buf: memoryview) -> int:
        if self._readinto is not None:
            n = self._readinto(buf)
            return int(n or 0)
        data = self._f.read(len(buf))
        buf[: len(data)] = data
        return len(data)


# Released buffers by size, for the next StreamBuffer of that size: a new 4 MiB bytearray
# costs about a millisecond (zeroing, page faults, and unmapping when freed), which is most of
# the client's cost of a batch of a hundred small objects. Bounded: at most _POOL_KEEP each.
_POOL: dict[int, list[bytearray]] = {}
_POOL_KEEP = 4


def _take_buffer(size: int) -> bytearray:
    try:
        return _POOL[size].pop()
    except (KeyError, IndexError):  # none free (pop is atomic: no lock needed)
        return bytearray(size)


def _give_buffer(buf: bytearray) -> None:
    free = _POOL.setdefault(len(buf), [])
    if len(free) < _POOL_KEEP:
        free.append(buf)


class StreamBuffer:
    """One growable buffer over a `ByteSource`: `ensure(n)` makes n bytes available at `pos`.

    Bytes before `pos` are consumed and may be overwritten by the next refill; memory is the
    buffer (4 MiB by default), more only while a larger request is served. `release()`
    hands the buffer to the next StreamBuffer; nothing may be read after it.
    """

    def __init__(self, source: ByteSource, size: int = _DEFAULT_BUFFER) -> None:
        self._src = source
        self._default = max(size, _MIN_BUFFER)
        self.buf = _take_buffer(self._default)
        self.mv = memoryview(self.buf)
        self.pos = 0
        self.end = 0
        self.eof = False

    @property
    def available(self) -> int:
        return self.end - self.pos

    def ensure(self, n: int) -> bool:
        """Make `n` bytes available from `pos`; False if the source ends first."""
        if self.end - self.pos >= n:
            return True
        if self.pos + n > len(self.buf):
            self._make_room(n)
        while self.end - self.pos < n:
            if self.eof:
                return False
            room = len(self.buf) - self.end
            got = self._src.readinto(self.mv[self.end : self.end + min(room, max(_READ_PIECE, n))])
            if got == 0:
                self.eof = True
                return False
            self.end += got
        return True

    def _make_room(self, n: int) -> None:
        have = self.end - self.pos
        if n > len(self.buf) or (len(self.buf) > self._default and n <= self._default):
            size = max(self._default, n)
            new = bytearray(size)
            new[:have] = self.mv[self.pos : self.end]
            self.mv.release()
            self.buf, self.mv = new, memoryview(new)
        else:
            self.buf[:have] = self.mv[self.pos : self.end]
        self.pos, self.end = 0, have

    def take(self, n: int) -> bytes:
        """The next n bytes as `bytes` (one copy). REQUIRES: ensure(n)."""
        out = bytes(self.mv[self.pos : self.pos + n])
        self.pos += n
        return out

    def skip(self, n: int) -> bool:
        """Drop n bytes; False if the source ends first."""
        while n > 0:
            if self.available == 0 and not self.ensure(1):
                return False
            k = min(n, self.available)
            self.pos += k
            n -= k
        return True

    def at_eof(self) -> bool:
        return self.available == 0 and not self.ensure(1)

    def release(self) -> None:
        """Give the buffer back for reuse; the StreamBuffer is empty and at its end after."""
        buf, self.buf = self.buf, bytearray()
        self.mv.release()
        self.mv = memoryview(self.buf)
        self.pos = self.end = 0
        self.eof = True
        if len(buf) == self._default:
            _give_buffer(buf)
