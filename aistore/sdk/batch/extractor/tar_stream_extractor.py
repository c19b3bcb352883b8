"""Streaming extraction of `.tar`, `.tgz`/`.tar.gz` and `.tar.lz4` GetBatch archives.

Example:
    >>> TarStreamExtractor().get_supported_formats()
    ('.tar.gz', '.tgz', '.tar', '.tar.lz4')
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistore._internal.archive_stream import (
    ByteSource,
    GzipSource,
    Lz4Source,
    Member,
    TarStream,
)
from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.types import MossReq
from aistore.sdk.const import EXT_TAR, EXT_TARGZ, EXT_TARLZ4, EXT_TGZ, KIB

__all__ = ["TarStreamExtractor"]

_GZIP_MAGIC = b"\x1f\x8b"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_DEFAULT_BUFFER = 4096 * KIB


class _Sniffed:
    """A `ByteSource` that looked at its first bytes and gives them back first."""

    def __init__(self, source: ByteSource, head: bytes) -> None:
        self._src = source
        self._head = head

    def readinto(self, buf: memoryview) -> int:
        if self._head:
            n = min(len(buf), len(self._head))
            buf[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._src.readinto(buf)


def _sniff(source: ByteSource) -> tuple[bytes, ByteSource]:
    head = bytearray(4)
    got = 0
    mv = memoryview(head)
    while got < 4:
        n = source.readinto(mv[got:])
        if n == 0:
            break
        got += n
    data = bytes(head[:got])
    return data, _Sniffed(source, data)


class TarStreamExtractor(ArchiveStreamExtractor):
    """Reads tar archives as they stream in; compression is recognized by its magic bytes.

    Example:
        >>> ".tgz" in TarStreamExtractor().get_supported_formats()
        True
    """

    _supported_fmts = (EXT_TARGZ, EXT_TGZ, EXT_TAR, EXT_TARLZ4)
    _archive_type = "tar"

    def _members(self, source: ByteSource, moss_req: MossReq, **options: Any) -> Iterator[Member]:
        size = options.get("buffer_size", _DEFAULT_BUFFER)
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError("buffer_size must be a positive integer")
        head, source = _sniff(source)
        if head.startswith(_GZIP_MAGIC):
            source = GzipSource(source)
        elif head.startswith(_LZ4_MAGIC):
            source = Lz4Source(source)
        return TarStream(source, max(size, 64 * KIB)).files()
