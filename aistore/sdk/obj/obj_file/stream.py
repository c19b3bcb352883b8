"""An object's bytes as chunks, reopening the stream whenever it breaks or ends early.

`ObjectFileReader` reads through the buffer-filling stream of `aistore._internal.resumable`;
this module is the official SDK's chunk-iterator form of the same behaviour, for code that
iterates over chunks directly.

Example:
    >>> stream = ResumableStream(object_reader._content_provider, max_resume=3)  # doctest: +SKIP
    >>> data = b"".join(stream)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Generator

from aistore._internal.resumable import STREAM_ERRORS
from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, StreamBounds
from aistore.sdk.obj.obj_file.errors import (
    ObjectFileReaderMaxResumeError,
    ObjectFileReaderUnexpectedEOF,
)
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["STREAM_ERRORS", "ResumableStream", "logger"]

logger = logging.getLogger(__name__)


class ResumableStream:
    """Iterates over an object's content in chunks, surviving broken and short streams.

    After one of `STREAM_ERRORS`, or a clean end before the announced length, the stream is
    reopened (at most `max_resume` times per pass): at the delivered position when the
    server serves offsets, else from the start, dropping the bytes already delivered. Every
    byte is delivered once, in order.

    Example:
        >>> stream = ResumableStream(provider, max_resume=5)  # doctest: +SKIP
        >>> total = sum(len(chunk) for chunk in stream)  # doctest: +SKIP

    Args:
        content_provider: opens streams of the object from an offset (`create_iter`).
        max_resume: reopenings allowed per pass over the object.
    """

    def __init__(self, content_provider: BaseContentIterProvider, max_resume: int) -> None:
        self._content_provider = content_provider
        self._max_resume = max_resume
        self._chunks: Generator[bytes, None, None] | None = None
        self._bounds = StreamBounds()
        self._consumed = 0  # bytes the current stream has yielded
        self._delivered = 0
        self._resumes = 0
        self.restart()

    @property
    def path(self) -> str:
        """Path of the object."""
        return self._content_provider.client.path

    @property
    def delivered_position(self) -> int:
        """Bytes delivered to the caller so far in this pass."""
        return self._delivered

    @property
    def resumes(self) -> int:
        """Reopenings so far in this pass."""
        return self._resumes

    def restart(self) -> None:
        """Start a new pass: a fresh stream at byte 0, no progress, no resumes."""
        self._open(0)
        self._delivered = 0
        self._resumes = 0

    def close(self) -> None:
        """Close the current stream."""
        chunks, self._chunks = self._chunks, None
        if chunks is not None:
            chunks.close()

    def __iter__(self) -> ResumableStream:
        return self

    def __next__(self) -> memoryview:
        """The next chunk.

        Raises:
            StopIteration: the whole object has been delivered.
            ObjectFileReaderMaxResumeError: more than `max_resume` reopenings were needed.
        """
        while True:
            if self._chunks is None:
                raise StopIteration
            try:
                chunk = memoryview(next(self._chunks))
            except STREAM_ERRORS as err:
                self._resume(err)
                continue
            except StopIteration:
                short = self._short_by()
                if short is None:
                    raise
                self._resume(ObjectFileReaderUnexpectedEOF(*short))
                continue
            position = self._bounds.start + self._consumed
            self._consumed += len(chunk)
            replayed = self._delivered - position  # bytes of this chunk the caller has
            if replayed > 0:
                chunk = chunk[replayed:]
            if chunk:
                self._delivered += len(chunk)
                return chunk

    def _open(self, offset: int) -> None:
        self.close()
        self._bounds = StreamBounds()  # each stream fills its own
        self._chunks = self._content_provider.create_iter(offset=offset, bounds=self._bounds)
        self._consumed = 0

    def _short_by(self) -> tuple[int, int] | None:
        """(position, expected end) if the ended stream stopped short, else None."""
        position = self._bounds.start + self._consumed
        expected = self._bounds.expected_end
        if position < self._delivered:
            # A reopened stream must at least reach what was delivered before.
            expected = max(expected or 0, self._delivered)
        if expected is None or position >= expected:
            return None
        return position, expected

    def _resume(self, err: BaseException) -> None:
        self._resumes += 1
        if self._resumes > self._max_resume:
            self.close()
            raise ObjectFileReaderMaxResumeError(err, self._resumes) from err
        logger.warning(
            "Resuming '%s' after %s (%d/%d)", self.path, err, self._resumes, self._max_resume
        )
        offset = self._delivered if self._content_provider.client.can_get_at_offset() else 0
        self._open(offset)
