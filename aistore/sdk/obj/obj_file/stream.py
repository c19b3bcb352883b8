"""An object's bytes as chunks, reopening the stream whenever it breaks or ends early.

The official SDK's chunk-iterator form of the one resume policy,
`aistore._internal.resumable.ResumableStream` (which `ObjectFileReader` reads through too):
this class only opens its streams with the provider's `create_iter` and hands their chunks on.

Example:
    >>> stream = ResumableStream(object_reader._content_provider, max_resume=3)  # doctest: +SKIP
    >>> data = b"".join(stream)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import sys
from functools import partial

from aistore._internal import resumable
from aistore._internal.resumable import STREAM_ERRORS
from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, _chunk_source
from aistore.sdk.obj.content_iterator.base import StreamBounds as StreamBounds
from aistore.sdk.obj.obj_file.errors import (
    ObjectFileReaderMaxResumeError as ObjectFileReaderMaxResumeError,
)
from aistore.sdk.obj.obj_file.errors import (
    ObjectFileReaderUnexpectedEOF as ObjectFileReaderUnexpectedEOF,
)
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["STREAM_ERRORS", "ResumableStream", "logger"]

logger = logging.getLogger(__name__)

# A read size no chunk reaches: each read hands on one chunk (or what is left of it).
_ANY_CHUNK = sys.maxsize


class ResumableStream:
    """Iterates over an object's content in chunks, surviving broken and short streams.

    After one of `STREAM_ERRORS`, or a clean end before the announced length, the stream is
    reopened (at most `max_resume` times per pass): at the delivered position when the
    server serves offsets, else from the start, dropping the bytes already delivered. Every
    byte is delivered once, in order; chunks are the provider's, whole except after a resume.

    Example:
        >>> stream = ResumableStream(provider, max_resume=5)  # doctest: +SKIP
        >>> total = sum(len(chunk) for chunk in stream)  # doctest: +SKIP

    Args:
        content_provider: opens streams of the object from an offset (`create_iter`).
        max_resume: reopenings allowed per pass over the object.
    """

    def __init__(self, content_provider: BaseContentIterProvider, max_resume: int) -> None:
        self._content_provider = content_provider
        client = content_provider.client
        self._stream = resumable.ResumableStream(
            open_source=partial(_chunk_source, content_provider),
            can_get_at_offset=client.can_get_at_offset,
            max_resume=max_resume,
            path=client.path,
        )

    @property
    def path(self) -> str:
        """Path of the object."""
        return self._content_provider.client.path

    @property
    def delivered_position(self) -> int:
        """Bytes delivered to the caller so far in this pass."""
        return self._stream.delivered_position

    @property
    def resumes(self) -> int:
        """Reopenings so far in this pass."""
        return self._stream.resumes

    def restart(self) -> None:
        """Start a new pass: a fresh stream at byte 0, no progress, no resumes."""
        self._stream.restart()

    def close(self) -> None:
        """Close the current stream (a later `next()` opens another where this one stopped)."""
        self._stream.close()

    def __iter__(self) -> ResumableStream:
        return self

    def __next__(self) -> memoryview:
        """The next chunk.

        Raises:
            StopIteration: the whole object has been delivered.
            ObjectFileReaderMaxResumeError: more than `max_resume` reopenings were needed.
        """
        chunk = self._stream.read(_ANY_CHUNK)
        if not chunk:
            raise StopIteration
        return memoryview(chunk)
