"""A byte stream that survives broken connections: `ResumableStream`, the one resume policy.

The stream reopens its source after a transport error or a clean EOF that comes before the
source's announced end. It reopens at the delivered position when the server can serve that
offset (`can_get_at_offset`), else from the start, and then drops the bytes the caller
already holds. A 200 reply to a ranged request means the server ignored the range: the
source then reports `start == 0` and the replayed prefix is dropped the same way.

Both of the SDK's resuming readers are this stream: `ObjectFileReader` fills buffers from it,
and `aistore.sdk.obj.obj_file.stream.ResumableStream` (the official chunk iterator) reads it a
chunk at a time through `ChunkIterSource`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from requests.exceptions import ChunkedEncodingError, ReadTimeout
from requests.exceptions import ConnectionError as RequestsConnectionError
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from aistore._internal.file_errors import (
    ObjectFileReaderMaxResumeError,
    ObjectFileReaderUnexpectedEOF,
)

logger = logging.getLogger(__name__)

# Errors after which a stream is reopened; anything else ends the read.
STREAM_ERRORS: tuple[type[BaseException], ...] = (
    RequestsConnectionError,
    ChunkedEncodingError,
    ProtocolError,
    ReadTimeout,
    ReadTimeoutError,
)

# Replayed bytes are read into this much scratch space at a time.
_SKIP_BUFFER_SIZE = 1 << 20


class ByteSource(Protocol):
    """One open stream of object bytes.

    `start` is the logical position of its first byte and `expected_end` the position after
    its last byte when the reply announced a length (None otherwise); both are valid once
    the source exists.
    """

    start: int
    expected_end: int | None

    def read(self, size: int) -> bytes:
        """At least one and at most `size` bytes; b"" only at the end."""
        ...

    def readinto(self, buf: memoryview) -> int: ...

    def close(self) -> None: ...


class ResumableStream:
    """Reads a sequence of bytes through sources that may break.

    Args:
        open_source: opens a source whose bytes begin at the given logical offset (or at 0
            when the server ignores the offset). Called lazily, on the first read.
        can_get_at_offset: whether the server can serve a reopened stream at an offset;
            may issue a request.
        max_resume: reopenings allowed before giving up.
        path: what is being read, for log messages.
    """

    def __init__(
        self,
        open_source: Callable[[int], ByteSource],
        can_get_at_offset: Callable[[], bool],
        max_resume: int,
        path: str = "",
    ) -> None:
        self._open_source = open_source
        self._can_get_at_offset = can_get_at_offset
        self._max_resume = max_resume
        self._path = path
        self._source: ByteSource | None = None
        self._open_offset = 0
        self._stream_consumed = 0
        self._delivered = 0
        self._resumes = 0
        self._scratch: memoryview | None = None

    @property
    def path(self) -> str:
        """What is being read."""
        return self._path

    @property
    def delivered_position(self) -> int:
        """Bytes delivered to the caller since the start (or the last `restart`)."""
        return self._delivered

    @property
    def resumes(self) -> int:
        """Reopenings since the start (or the last `restart`)."""
        return self._resumes

    def remaining(self) -> int | None:
        """Bytes left before the announced end, opening a source if needed; None if unknown."""
        while True:
            try:
                source = self._ready_source()
                break
            except STREAM_ERRORS as err:
                self._resume(err)
        if source.expected_end is None:
            return None
        return max(source.expected_end - self._delivered, 0)

    def restart(self) -> None:
        """Forget all progress; the next read starts at byte 0."""
        self.close()
        self._open_offset = 0
        self._delivered = 0
        self._resumes = 0

    def close(self) -> None:
        """Release the current source; a later read opens a new one."""
        source, self._source = self._source, None
        if source is not None:
            source.close()

    def readinto(self, buf: memoryview) -> int:
        """Fill `buf` with the next bytes (fully unless the data ends); 0 at the end.

        Raises:
            ObjectFileReaderMaxResumeError: more than `max_resume` reopenings were needed.
        """
        if not buf:
            return 0
        while True:
            try:
                source = self._ready_source()
                n = source.readinto(buf)
            except STREAM_ERRORS as err:
                self._resume(err)
                continue
            if n or self._finished(source):
                self._advance(n)
                return n

    def read(self, size: int) -> bytes:
        """The next bytes, at most `size`: as many as the source gives in one read (a body
        gives `size` unless it ends, a `ChunkIterSource` at most one chunk); b"" at the end.

        Raises:
            ObjectFileReaderMaxResumeError: more than `max_resume` reopenings were needed.
        """
        if size <= 0:
            return b""
        while True:
            try:
                source = self._ready_source()
                data = source.read(size)
            except STREAM_ERRORS as err:
                self._resume(err)
                continue
            if data or self._finished(source):
                self._advance(len(data))
                return data

    def _advance(self, n: int) -> None:
        self._stream_consumed += n
        self._delivered += n

    def _ready_source(self) -> ByteSource:
        """The open source, positioned at the delivered position."""
        source = self._source
        if source is None:
            source = self._source = self._open_source(self._open_offset)
            self._stream_consumed = 0
        gap = self._delivered - (source.start + self._stream_consumed)
        if gap > 0:
            if self._scratch is None:
                self._scratch = memoryview(bytearray(_SKIP_BUFFER_SIZE))
            while gap > 0:
                n = source.readinto(self._scratch[: min(gap, _SKIP_BUFFER_SIZE)])
                if n == 0:
                    break  # the caller's read sees the end; _finished() decides
                self._stream_consumed += n
                gap -= n
        return source

    def _finished(self, source: ByteSource) -> bool:
        """At a clean end of `source`: True if the data is complete, else resume and False."""
        position = source.start + self._stream_consumed
        expected = source.expected_end
        if position < self._delivered:
            # A reopened stream must at least reach what was delivered before.
            expected = max(expected or 0, self._delivered)
        if expected is None or position >= expected:
            return True
        self._resume(ObjectFileReaderUnexpectedEOF(position, expected))
        return False

    def _resume(self, err: BaseException) -> None:
        self._resumes += 1
        if self._resumes > self._max_resume:
            self.close()
            raise ObjectFileReaderMaxResumeError(err, self._resumes) from err
        logger.warning(
            "Resuming '%s' after %s (%d/%d)", self._path, err, self._resumes, self._max_resume
        )
        self.close()
        self._open_offset = self._delivered if self._can_get_at_offset() else 0


class ChunkIterSource:
    """A `ByteSource` over a chunk generator and the bounds object it fills when started.

    The generator is started at construction so that `start` and `expected_end` are known,
    as `ResumableStream` needs them before the first byte is consumed. `read` never joins
    chunks: it returns (part of) the current one, a whole `bytes` chunk without a copy.
    """

    def __init__(self, chunks: Iterator[bytes], bounds: Any) -> None:
        self._chunks = chunks
        try:
            first = next(chunks)
        except StopIteration:
            first = b""
        self._pending = memoryview(first)
        self.start: int = bounds.start
        self.expected_end: int | None = bounds.expected_end

    def _next_piece(self) -> memoryview:
        while not self._pending:
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                break
        return self._pending

    def readinto(self, buf: memoryview) -> int:
        filled = 0
        while filled < len(buf):
            piece = self._next_piece()
            if not piece:
                break
            n = min(len(piece), len(buf) - filled)
            buf[filled : filled + n] = piece[:n]
            self._pending = piece[n:]
            filled += n
        return filled

    def read(self, size: int) -> bytes:
        piece = self._next_piece()
        n = min(len(piece), size)
        self._pending = piece[n:]
        whole = piece.obj
        if isinstance(whole, bytes) and n == len(whole):
            return whole
        return piece[:n].tobytes()

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
