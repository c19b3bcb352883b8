"""The buffered multipart stream that `StatefulStreamingParser` and `BodyStreamReader` share.

It feeds chunks of a response (`Iterator[bytes]`) to our multipart reader
(`aistore._internal.multipart`), which finds each delimiter in one buffer and keeps back only
what a delimiter cut between two chunks could hide.

Example:
    >>> buf = MultipartStreamBuffer(iter([b"--B\\r\\n\\r\\nhi\\r\\n--B--"]), b"--B", 1 << 20)
    >>> headers, body = buf.next_part()
    >>> body.read()
    b'hi'
"""

from __future__ import annotations

from collections.abc import Iterator

from aistore._internal.multipart import MultipartError, MultipartStream, PartReader
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.multipart.sliding_window_buffer import (
    SlidingWindowBuffer as SlidingWindowBuffer,
)
from aistore.sdk.const import UNIX_LINE_END as UNIX_LINE_END
from aistore.sdk.const import WHITESPACE_CHARS as WHITESPACE_CHARS
from aistore.sdk.const import WIN_LINE_END as WIN_LINE_END

__all__ = ["BOUNDARY_MARGIN", "MultipartStreamBuffer"]

# Bytes beyond the boundary's length that a reader keeps in view so that a delimiter line
# (CRLF, dashes, boundary, padding) cut between two chunks is still found.
BOUNDARY_MARGIN = 8

_DASHES = b"--"


class IterSource:
    """A `ByteSource` over an iterator of byte chunks (a response's `iter_content`)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readinto(self, buf: memoryview) -> int:
        while not self._pending:
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        n = min(len(buf), len(self._pending))
        buf[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


class MultipartStreamBuffer:
    """Parts of a multipart body read from an iterator of chunks, one after the other.

    Example:
        >>> chunks = response.iter_content(1 << 20)  # doctest: +SKIP
        >>> buf = MultipartStreamBuffer(chunks, b"--B", 1 << 20)  # doctest: +SKIP
        >>> part = buf.next_part()  # doctest: +SKIP

    Args:
        content_iter: the body, in chunks of any size.
        boundary: the boundary marker, with or without its leading `--`.
        max_buffer_size: accepted as the official SDK does; our reader always holds one
            1 MiB buffer, more only while a header block needs it.
    """

    def __init__(
        self, content_iter: Iterator[bytes], boundary: bytes, max_buffer_size: int
    ) -> None:
        self._boundary = boundary
        self._max_buffer_size = max_buffer_size
        bare = boundary[len(_DASHES) :] if boundary.startswith(_DASHES) else boundary
        self._stream = MultipartStream(IterSource(content_iter), bare)
        self._part: PartReader | None = None
        self._exhausted = False

    @property
    def boundary(self) -> bytes:
        """The boundary marker as given."""
        return self._boundary

    @property
    def current_part(self) -> PartReader | None:
        """The body of the part last returned by `next_part()`."""
        return self._part

    def is_exhausted(self) -> bool:
        """True once the closing delimiter has been read."""
        return self._exhausted

    def next_part(self) -> tuple[dict[str, str], PartReader] | None:
        """Headers (lower-case names) and body of the next part; None after the last one.

        The rest of the previous part is skipped.

        Raises:
            MultipartDecodeError: malformed framing.
        """
        if self._exhausted:
            return None
        try:
            part = self._stream.next_part()
        except MultipartError as err:
            raise MultipartDecodeError(str(err)) from err
        if part is None:
            self._exhausted = True
            self._part = None
            return None
        self._part = part[1]
        return part
