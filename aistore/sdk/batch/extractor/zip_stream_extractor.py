"""Streaming extraction of `.zip` GetBatch archives, from the local headers (no central
directory needed, nothing held beyond one buffer).

Example:
    >>> ZipStreamExtractor().get_supported_formats()
    ('.zip',)
"""

from __future__ import annotations

import logging

from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.types import MossOut as MossOut
from aistore.sdk.batch.types import MossReq as MossReq
from aistore.sdk.batch.types import MossResp as MossResp
from aistore.sdk.const import EXT_ZIP
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["ZipStreamExtractor"]

# Module logger, as in the official SDK (configure it through `logging`).
logger = logging.getLogger(__name__)


class ZipStreamExtractor(ArchiveStreamExtractor):
    """Reads zip archives (stored or deflated members) as they stream in.

    Example:
        >>> ZipStreamExtractor().get_supported_formats()
        ('.zip',)
    """

    _supported_fmts = (EXT_ZIP,)
    _archive_type = "zip"
