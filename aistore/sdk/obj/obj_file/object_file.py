"""File-like access to objects: a resuming reader and an appending writer.

Example:
    >>> with bucket.object("big.bin").get_reader().as_file() as f:  # doctest: +SKIP
    ...     header = f.read(512)
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from aistore._internal.resumable import ResumableStream
from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider
from aistore.sdk.utils import get_logger as get_logger

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

    from aistore.sdk.obj.object_writer import ObjectWriter

__all__ = ["ObjectFileReader", "ObjectFileWriter"]

logger = logging.getLogger(__name__)

# Piece size of reads whose total size is not announced by the server.
_UNSIZED_READ = 1 << 20


class ObjectFileReader(io.BufferedIOBase):
    """A read-only, non-seekable file over an object that survives broken connections.

    A broken or short stream is reopened up to `max_resume` times; it continues at the
    delivered position when the server can serve offsets (`Ais-Present: true`), otherwise it
    starts over and drops the bytes already delivered. `readinto` lands bytes straight in
    the caller's buffer; `read(n)` copies each byte once.

    Entering a `with` block starts over from byte 0, even after `close()`.

    Example:
        >>> f = bucket.object("x").get_reader().as_file(max_resume=3)  # doctest: +SKIP
        >>> n = f.readinto(bytearray(1 << 20))  # doctest: +SKIP

    Args:
        content_provider: where the bytes come from.
        max_resume: reopenings allowed per pass over the object.
    """

    def __init__(self, content_provider: BaseContentIterProvider, max_resume: int) -> None:
        self._stream = ResumableStream(
            open_source=content_provider._open_source,
            can_get_at_offset=content_provider.client.can_get_at_offset,
            max_resume=max_resume,
            path=content_provider.client.path,
        )
        self._closed = False

    def __enter__(self) -> ObjectFileReader:
        self._stream.restart()
        self._closed = False
        return self

    @property
    def closed(self) -> bool:
        return self._closed

    def readable(self) -> bool:
        """True until closed."""
        return not self._closed

    def read(self, size: int | None = -1) -> bytes:
        """Up to `size` bytes (all remaining when negative or None); b"" at the end.

        Raises:
            ObjectFileReaderMaxResumeError: the stream broke more than `max_resume` times.
            ValueError: the file is closed.
        """
        self._check_open()
        if size == 0:
            return b""
        with self._closing_on_error():
            if size is None or size < 0:
                return self._read_rest()
            return self._read_exactly(size)

    def read1(self, size: int = -1) -> bytes:
        """Up to `size` bytes with at most one read from the stream."""
        self._check_open()
        with self._closing_on_error():
            return self._stream.read(size if size > 0 else _UNSIZED_READ)

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill `buffer` from the object, directly; returns the byte count (0 at the end)."""
        self._check_open()
        view = memoryview(buffer).cast("B")
        filled = 0
        with self._closing_on_error():
            while filled < len(view):
                n = self._stream.readinto(view[filled:])
                if n == 0:
                    break
                filled += n
        return filled

    def readinto1(self, buffer: WriteableBuffer) -> int:
        """Like `readinto`, with at most one read from the stream."""
        self._check_open()
        with self._closing_on_error():
            return self._stream.readinto(memoryview(buffer).cast("B"))

    def close(self) -> None:
        """Close the file and its connection."""
        self._closed = True
        self._stream.close()

    def _read_exactly(self, size: int) -> bytes:
        first = self._stream.read(size)
        if len(first) in (0, size):
            return first
        parts = [first]
        remaining = size - len(first)
        while remaining and (data := self._stream.read(remaining)):
            parts.append(data)
            remaining -= len(data)
        return b"".join(parts)

    def _read_rest(self) -> bytes:
        parts = []
        while True:
            # With a known length a body source gives the rest as one object: no join, one
            # copy (a chunk source gives it a chunk at a time).
            remaining = self._stream.remaining()
            data = self._stream.read(remaining or _UNSIZED_READ)
            if not data:
                break
            parts.append(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on closed file.")

    @contextmanager
    def _closing_on_error(self) -> Iterator[None]:
        try:
            yield
        except Exception as err:
            logger.error(
                "Error while reading object at '%s': %s. Closing file.", self._stream.path, err
            )
            self.close()
            raise


class ObjectFileWriter(io.BufferedIOBase):
    """A write-only file over an object; each `write()` appends through the append API.

    Appended data becomes visible at `flush()` or `close()`. Mode `"w"` empties the object
    first (again on entering a `with` block); mode `"a"` keeps what is there.

    Example:
        >>> with bucket.object("log.txt").get_writer().as_file(mode="a") as f:  # doctest: +SKIP
        ...     f.write(b"line\\n")

    Args:
        obj_writer: writer of the object.
        mode: `"w"` or `"a"`.
    """

    def __init__(self, obj_writer: ObjectWriter, mode: str) -> None:
        self._obj_writer = obj_writer
        self._mode = mode
        self._handle = ""
        self._closed = False
        if mode == "w":
            obj_writer.put_content(b"")

    def __enter__(self) -> ObjectFileWriter:
        if self._mode == "w":
            self._obj_writer.put_content(b"")
        return self

    @property
    def closed(self) -> bool:
        return self._closed

    def writable(self) -> bool:
        """True until closed."""
        return not self._closed

    def write(self, buffer: ReadableBuffer) -> int:
        """Append `buffer` to the object; returns its length.

        Raises:
            ValueError: the file is closed.
        """
        if self._closed:
            raise ValueError("I/O operation on closed file.")
        data = bytes(buffer) if not isinstance(buffer, bytes) else buffer
        self._handle = self._obj_writer.append_content(data, handle=self._handle)
        return len(data)

    def flush(self) -> None:
        """Make everything appended so far visible.

        Raises:
            ValueError: the file is closed.
        """
        if self._closed:
            raise ValueError("I/O operation on closed file.")
        if self._handle:
            self._obj_writer.append_content(b"", handle=self._handle, flush=True)
            self._handle = ""

    def close(self) -> None:
        """Flush and close."""
        if not self._closed:
            self.flush()
            self._closed = True
