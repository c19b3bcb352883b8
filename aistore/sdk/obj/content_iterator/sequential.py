"""Sequential content: one GET per stream.

Example:
    >>> from aistore.sdk.obj.content_iterator.sequential import ContentIterProvider
    >>> provider = ContentIterProvider(object_client, chunk_size=1 << 20)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Generator

from aistore._internal.body import BodyReader
from aistore.sdk.const import HEADER_CONTENT_ENCODING as HEADER_CONTENT_ENCODING
from aistore.sdk.const import HEADER_CONTENT_LENGTH as HEADER_CONTENT_LENGTH
from aistore.sdk.const import STATUS_PARTIAL_CONTENT as STATUS_PARTIAL_CONTENT
from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, StreamBounds

__all__ = ["ContentIterProvider"]


class ContentIterProvider(BaseContentIterProvider):
    """Reads an object with single GET requests; each byte is copied once on its way in.

    Example:
        >>> provider = ContentIterProvider(object_client, chunk_size=1 << 20)  # doctest: +SKIP
        >>> size = sum(len(c) for c in provider.create_iter())  # doctest: +SKIP
    """

    def read_all(self) -> bytes:
        """The whole content (or the reader's byte range) as one `bytes`."""
        return self._client.read_all()

    def create_iter(
        self, offset: int = 0, bounds: StreamBounds | None = None
    ) -> Generator[bytes, None, None]:
        """Chunks of at most `chunk_size` bytes from logical position `offset`.

        The GET goes out on the first `next()`. A 206 reply starts at `offset`; a 200 reply
        means the server sent everything from position 0.
        """
        source = self._open_source(offset)
        if bounds is not None:
            bounds.start, bounds.expected_end = source.start, source.expected_end
        try:
            while data := source.read(self._chunk_size):
                yield data
        finally:
            source.close()

    def _open_source(self, offset: int) -> BodyReader:
        return self._client._open_source(offset)
