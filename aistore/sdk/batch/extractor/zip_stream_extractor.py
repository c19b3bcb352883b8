"""Streaming extraction of `.zip` GetBatch archives, from the local headers (no central
directory needed, nothing held beyond one buffer).

Example:
    >>> ZipStreamExtractor().get_supported_formats()
    ('.zip',)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistore._internal.archive_stream import ByteSource, Member, ZipStream
from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.types import MossReq
from aistore.sdk.const import EXT_ZIP

__all__ = ["ZipStreamExtractor"]


class ZipStreamExtractor(ArchiveStreamExtractor):
    """Reads zip archives (stored or deflated members) as they stream in.

    Example:
        >>> ZipStreamExtractor().get_supported_formats()
        ('.zip',)
    """

    _supported_fmts = (EXT_ZIP,)
    _archive_type = "zip"

    def _members(self, source: ByteSource, moss_req: MossReq, **options: Any) -> Iterator[Member]:
        return ZipStream(source).files()
