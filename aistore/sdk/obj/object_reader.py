"""Reading an object: all at once, as chunks, as a raw stream or as a file; with
`num_workers`, by concurrent range reads into shared memory.

Example:
    >>> reader = bucket.object("x").get_reader()  # doctest: +SKIP
    >>> data = reader.read_all()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from typing import Any

from aistore._internal.progress import ProgressBar
from aistore.sdk.const import DEFAULT_CHUNK_SIZE
from aistore.sdk.obj.content_iterator import (
    BaseContentIterProvider,
    ContentIterProvider,
    ParallelBuffer,
    ParallelContentIterProvider,
)
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
        num_workers: read with this many concurrent range GETs (threads); the HEAD that
            sizes the object is sent now. `chunk_size` is then the range size.
    """

    def __init__(
        self,
        object_client: ObjectClient,
        chunk_size: int | None = None,
        num_workers: int | None = None,
    ) -> None:
        self._object_client = object_client
        self._chunk_size = chunk_size
        self._attributes: ObjectAttributes | None = None
        self._content_provider: BaseContentIterProvider
        self._parallel: ParallelContentIterProvider | None = None
        if num_workers:
            self._parallel = ParallelContentIterProvider(object_client, chunk_size, num_workers)
            self._content_provider = self._parallel
        else:
            self._content_provider = ContentIterProvider(
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

    def read_all(self) -> bytes | ParallelBuffer:
        """The whole content (or the requested byte range).

        Returns:
            `bytes` for a sequential reader; with `num_workers`, a `ParallelBuffer` in shared
            memory (no copy on return), which the caller should `close()` or use in `with`.
        """
        result: bytes | ParallelBuffer = self._content_provider.read_all()
        return result

    def read_into(self, buffer: Any) -> int:
        """Read the whole content into `buffer`, any writable C-contiguous buffer (bytearray,
        numpy array, mmap, a tensor's memoryview), at its start. Not in the official SDK.

        Returns:
            Number of bytes written.

        Raises:
            ValueError: `buffer` is read-only or smaller than the content.
        """
        if self._parallel is not None:
            return self._parallel.read_into(buffer)
        with memoryview(buffer) as view:
            dest = view.cast("B") if view.format != "B" or view.ndim != 1 else view
            if dest.readonly:
                raise ValueError("read_into needs a writable buffer")
            source = self._object_client._open_source(0)
            try:
                got = 0
                while n := source.readinto(dest[got:]):
                    got += n
                    if got == dest.nbytes and source.read(1):
                        raise ValueError(f"buffer of {dest.nbytes} bytes is too small")
            finally:
                source.close()
        return got

    def download_to(
        self, path: str | os.PathLike[str], *, show_progress: bool | None = None
    ) -> int:
        """Write the whole content to the file `path` without holding it in memory; with
        `num_workers`, ranges are written at their offsets concurrently. The file appears
        complete or not at all (written as `<path>.part`, then renamed). Not in the official
        SDK.

        Args:
            path: the file.
            show_progress: a tqdm bar of bytes written; None (default): only when stderr is a
                terminal. With `num_workers` the bar moves once, when every range is in.

        Returns:
            Number of bytes written.
        """
        final = os.fspath(path)
        with ProgressBar(
            show_progress, desc=os.path.basename(final), unit="B", unit_scale=True
        ) as bar:
            if self._parallel is not None:
                size = self._parallel.download_to(path)
                bar.set_total(size)
                bar.update(size)
                return size
            return self._download_serial(final, bar)

    def _download_serial(self, final: str, bar: ProgressBar) -> int:
        part = final + ".part"
        try:
            with open(part, "wb") as f:
                for chunk in self._content_provider.create_iter():
                    f.write(chunk)
                    bar.update(len(chunk))
                size = f.tell()
            os.replace(part, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)
            raise
        return size

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
