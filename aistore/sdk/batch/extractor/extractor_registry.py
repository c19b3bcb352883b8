"""Which extractor reads which output format.

Example:
    >>> type(get_extractor(".ZIP")).__name__
    'ZipStreamExtractor'
"""

from __future__ import annotations

from types import MappingProxyType

from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.extractor.tar_stream_extractor import TarStreamExtractor
from aistore.sdk.batch.extractor.zip_stream_extractor import ZipStreamExtractor

__all__ = ["get_extractor"]

_FORMATS: MappingProxyType[str, ArchiveStreamExtractor] = MappingProxyType(
    {
        fmt: extractor
        for extractor in (TarStreamExtractor(), ZipStreamExtractor())
        for fmt in extractor.get_supported_formats()
    }
)


def get_extractor(output_format: str | None) -> ArchiveStreamExtractor:
    """The extractor for `output_format` (".tar", ".tgz", ".tar.gz", ".tar.lz4", ".zip").

    Raises:
        ValueError: an unsupported format.
    """
    if output_format is not None:
        extractor = _FORMATS.get(output_format.lower())
        if extractor is not None:
            return extractor
    raise ValueError(f"Unsupported output format type {output_format}")
