"""Settings of the blob downloader, which fetches large remote objects in parallel chunks.

Example:
    >>> from aistore.sdk.blob_download_config import BlobDownloadConfig
    >>> cfg = BlobDownloadConfig(chunk_size="4MiB", num_workers="8")
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BlobDownloadConfig"]


@dataclass
class BlobDownloadConfig:
    """Chunk size (IEC/SI units or bytes, as a string) and worker count for a blob download.

    Example:
        >>> BlobDownloadConfig(num_workers="4").chunk_size is None
        True
    """

    chunk_size: str | None = None
    num_workers: str | None = None
