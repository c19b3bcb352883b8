"""Errors of the Batch (GetBatch) API.

Example:
    >>> from aistore.sdk.batch.errors import MultipartDecodeError
    >>> issubclass(MultipartDecodeError, Exception)
    True
"""

from __future__ import annotations

__all__ = ["MultipartDecodeError"]


class MultipartDecodeError(Exception):
    """A multipart GetBatch reply could not be decoded."""
