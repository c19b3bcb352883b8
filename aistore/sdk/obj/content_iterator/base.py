"""The interface of content providers: where an object reader gets its bytes.

Example:
    >>> from aistore.sdk.obj.content_iterator.base import StreamBounds
    >>> StreamBounds(start=100).expected_end is None
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from aistore._internal.resumable import ByteSource, ChunkIterSource
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer as ParallelBuffer
from aistore.sdk.obj.object_client import ObjectClient as ObjectClient

__all__ = ["BaseContentIterProvider", "StreamBounds"]


@dataclass
class StreamBounds:
    """Logical byte positions of one stream, filled in when the stream opens.

    Example:
        >>> bounds = StreamBounds()
        >>> bounds.start, bounds.expected_end
        (0, None)

    Attributes:
        start: position of the stream's first byte (0 when the server ignored an offset).
        expected_end: position after its last byte, when the reply announced a length.
    """

    start: int = 0
    expected_end: int | None = None


class BaseContentIterProvider(ABC):
    """Produces an object's content: all at once or as a stream from an offset.

    Example:
        >>> provider = ContentIterProvider(object_client, chunk_size=1 << 20)  # doctest: +SKIP
        >>> data = b"".join(provider.create_iter())  # doctest: +SKIP

    Args:
        client: client of the object.
        chunk_size: size of the chunks `create_iter` yields.
    """

    def __init__(self, client: ObjectClient, chunk_size: int) -> None:
        self._client = client
        self._chunk_size = chunk_size

    @property
    def client(self) -> ObjectClient:
        """Client of the object."""
        return self._client

    @abstractmethod
    def read_all(self) -> Any:
        """The whole content in memory."""

    @abstractmethod
    def create_iter(
        self, offset: int = 0, bounds: StreamBounds | None = None
    ) -> Generator[bytes, None, None]:
        """Chunks of the content from logical position `offset`.

        Args:
            offset: first byte wanted.
            bounds: receives the positions of this stream once it opens; each concurrent
                stream needs its own.
        """

    def _open_source(self, offset: int) -> ByteSource:
        """A byte source from `offset` for the file reader; providers that can fill caller
        buffers directly override this."""
        return _chunk_source(self, offset)


def _chunk_source(provider: BaseContentIterProvider, offset: int) -> ChunkIterSource:
    """A byte source over `provider.create_iter(offset)`, its chunks as they come."""
    bounds = StreamBounds()
    return ChunkIterSource(provider.create_iter(offset=offset, bounds=bounds), bounds)
