"""The body of one multipart part as a read-only binary file.

Example:
    >>> from aistore.sdk.batch.multipart.multipart_stream_buffer import MultipartStreamBuffer
    >>> buf = MultipartStreamBuffer(iter([b"--B\\r\\n\\r\\nbody\\r\\n--B--"]), b"B", 1 << 20)
    >>> _ = buf.next_part()
    >>> BodyStreamReader(buf).read()
    b'body'
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from aistore._internal.multipart import MultipartError, PartReader
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.multipart.multipart_stream_buffer import (
    MultipartStreamBuffer as MultipartStreamBuffer,
)

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["BodyStreamReader"]

_READ_PIECE = 1 << 20


class BodyStreamReader(io.BufferedIOBase):
    """Reads the current part of a `MultipartStreamBuffer` up to the next delimiter.

    REQUIRES: the part is read before the buffer moves on to the next part; what is left
    unread then is skipped and this reader returns b"".

    Example:
        >>> reader = BodyStreamReader(stream_buffer)  # doctest: +SKIP
        >>> first_kib = reader.read(1024)  # doctest: +SKIP

    Args:
        buffer_reader: the stream, positioned at the body of the part to read.
    """

    def __init__(self, buffer_reader: MultipartStreamBuffer) -> None:
        super().__init__()
        self._buffer_reader = buffer_reader
        self._part: PartReader | None = buffer_reader.current_part

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill `buffer` with the next body bytes; 0 at the end of the part.

        Raises:
            MultipartDecodeError: the body ends inside the part.
        """
        view = memoryview(buffer).cast("B")
        part = self._part
        if part is None or part is not self._buffer_reader.current_part:
            return 0
        filled = 0
        try:
            while filled < len(view):
                n = part.readinto(view[filled:])
                if n == 0:
                    break
                filled += n
        except MultipartError as err:
            raise MultipartDecodeError(str(err)) from err
        return filled

    def read(self, size: int | None = -1) -> bytes:
        """Up to `size` bytes of the body (the rest when negative or None); b"" at its end."""
        if size is not None and size >= 0:
            buf = bytearray(size)
            n = self.readinto(buf)
            del buf[n:]
            return bytes(buf)
        pieces: list[bytes] = []
        while piece := self.read(_READ_PIECE):
            pieces.append(piece)
        return b"".join(pieces)

    def read1(self, size: int = -1) -> bytes:
        return self.read(size if size >= 0 else _READ_PIECE)
