"""Streaming extraction of `.tar`, `.tgz`/`.tar.gz` and `.tar.lz4` GetBatch archives.

Example:
    >>> TarStreamExtractor().get_supported_formats()
    ('.tar.gz', '.tgz', '.tar', '.tar.lz4')
"""

from __future__ import annotations

import logging
from typing import Any

from aistore._internal.archive_stream import DEFAULT_READ_BUFFER
from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.types import MossOut as MossOut
from aistore.sdk.batch.types import MossReq as MossReq
from aistore.sdk.batch.types import MossResp as MossResp
from aistore.sdk.const import EXT_TAR, EXT_TARGZ, EXT_TARLZ4, EXT_TGZ
from aistore.sdk.const import KIB as KIB
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["TarStreamExtractor"]

# Module logger, as in the official SDK (configure it through `logging`).
logger = logging.getLogger(__name__)


class TarStreamExtractor(ArchiveStreamExtractor):
    """Reads tar archives as they stream in; compression is recognized by its magic bytes.

    Option `buffer_size`: bytes asked of the reply per read (`Batch.get(tar_buffer_size=...)`).

    Example:
        >>> ".tgz" in TarStreamExtractor().get_supported_formats()
        True
    """

    _supported_fmts = (EXT_TARGZ, EXT_TGZ, EXT_TAR, EXT_TARLZ4)
    _archive_type = "tar"

    def _read_buffer(self, **options: Any) -> int:
        size = options.get("buffer_size", DEFAULT_READ_BUFFER)
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError("buffer_size must be a positive integer")
        return size
