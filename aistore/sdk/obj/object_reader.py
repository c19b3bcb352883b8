"""Reading an object: all at once, as chunks, as a raw stream or as a file.

Example:
    >>> reader = bucket.object("x").get_reader()  # doctest: +SKIP
    >>> data = reader.read_all()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from aistore.sdk.const import DEFAULT_CHUNK_SIZE
from aistore.sdk.obj.content_iterator import BaseContentIterProvider, ContentIterProvider
from aistore.sdk.obj.obj_file.object_file import ObjectFileReader
from aistore.sdk.obj.object_attributes import ObjectAttributes
from aistore.sdk.obj.object_client import ObjectClient

__all__ = ["ObjectReader"]


class ObjectReader:
    """Access to one object's content and attributes; made by `Object.get_reader()`.

    Example:
        >>> reader = bucket.object("x").get_reader(chunk_size=1 << 20)  # doctest: +SKIP
        >>> total = sum(len(chunk) for chunk in reader)  # doctest: +SKIP

    Args:
        object_client: client of the object, with the reader's options.
        chunk_size: size of the chunks iteration yields (32 KiB by default).
        num_workers: parallel range reads; not supported yet (see `Object.get_reader`).
    """

    def __init__(
        self,
        object_client: ObjectClient,
        chunk_size: int | None = None,
        num_workers: int | None = None,
    ) -> None:
        if num_workers:
            raise NotImplementedError("parallel download: not yet implemented")
        self._object_client = object_client
        self._chunk_size = chunk_size
        self._attributes: ObjectAttributes | None = None
        self._content_provider: BaseContentIterProvider = ContentIterProvider(
            object_client, chunk_size or DEFAULT_CHUNK_SIZE
        )

    def head(self) -> ObjectAttributes:
        """Fetch and cache the object's attributes (checksum, atime, version, custom)."""
        self._attributes = self._object_client.head()
        return self._attributes

    @property
    def attributes(self) -> ObjectAttributes:
        """Cached attributes, fetched with `head()` when there are none yet."""
        if self._attributes is None:
            return self.head()
        return self._attributes

    def read_all(self) -> bytes:
        """The whole content (or the requested byte range) as one `bytes`."""
        result: bytes = self._content_provider.read_all()
        return result

    def raw(self) -> Any:
        """The raw (urllib3) stream of a GET; attributes come from its headers."""
        resp = self._object_client.get(stream=True)
        self._attributes = ObjectAttributes(resp.headers)
        return resp.raw

    def as_file(self, buffer_size: int | None = None, max_resume: int = 5) -> ObjectFileReader:
        """A file-like reader that resumes after broken connections.

        Args:
            buffer_size: unused; kept for compatibility.
            max_resume: reopenings allowed per pass over the object.

        Raises:
            ValueError: `max_resume` is negative.
        """
        if max_resume < 0:
            raise ValueError(f"Invalid max_resume (must be a non-negative integer): {max_resume}.")
        return ObjectFileReader(self._content_provider, max_resume=max_resume)

    def __iter__(self) -> Generator[bytes, None, None]:
        """Chunks of the content; the GET goes out on the first `next()`."""
        return self._content_provider.create_iter()
