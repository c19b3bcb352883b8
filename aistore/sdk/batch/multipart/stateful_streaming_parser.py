"""A multipart parser that hands out each part's body as a stream, without buffering it.

Example:
    >>> chunks = iter([b"--B\\r\\nContent-Type: text/plain\\r\\n\\r\\nhi\\r\\n--B--\\r\\n"])
    >>> parser = StatefulStreamingParser(chunks, b"--B", 1 << 20)
    >>> headers, body = parser.get_next_part()
    >>> headers, body.read()
    (b'content-type: text/plain', b'hi')
    >>> parser.get_next_part() is None
    True
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from aistore.sdk.batch.errors import MultipartDecodeError as MultipartDecodeError
from aistore.sdk.batch.multipart.body_stream_reader import BodyStreamReader
from aistore.sdk.batch.multipart.multipart_stream_buffer import MultipartStreamBuffer
from aistore.sdk.const import MULTIPART_MARKER as MULTIPART_MARKER
from aistore.sdk.const import UNIX_LINE_END as UNIX_LINE_END
from aistore.sdk.const import WIN_LINE_END as WIN_LINE_END
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["StatefulStreamingParser", "logger"]

logger = logging.getLogger(__name__)


class StatefulStreamingParser:
    """Parts of a multipart response, in order, each body read as it streams in.

    Not thread-safe: one consumer at a time.

    Example:
        >>> chunks = resp.iter_content(1 << 20)  # doctest: +SKIP
        >>> parser = StatefulStreamingParser(chunks, b"--" + boundary, 1 << 20)  # doctest: +SKIP
        >>> while (part := parser.get_next_part()) is not None:  # doctest: +SKIP
        ...     headers, body = part

    Args:
        content_iter: the response body in chunks.
        boundary: the boundary marker (with or without its leading `--`).
        max_buffer_size: see `MultipartStreamBuffer`.
    """

    def __init__(
        self, content_iter: Iterator[bytes], boundary: bytes, max_buffer_size: int
    ) -> None:
        self._stream_buffer = MultipartStreamBuffer(content_iter, boundary, max_buffer_size)

    def get_next_part(self) -> tuple[bytes, BodyStreamReader] | None:
        """The next part's header block (`name: value` lines, names lower-cased, CRLF between
        lines) and a reader of its body; None after the last part.

        Raises:
            MultipartDecodeError: malformed framing.
        """
        part = self._stream_buffer.next_part()
        if part is None:
            return None
        headers = b"\r\n".join(f"{k}: {v}".encode("latin-1") for k, v in part[0].items())
        return headers, BodyStreamReader(self._stream_buffer)
