"""Bucket providers (`Provider`) and their short aliases, under the official names.

Defined in `aistore._internal.provider`, below the error classification that uses them.

Example:
    >>> from aistore.sdk.provider import Provider
    >>> Provider.parse("s3").value
    'aws'
"""

from __future__ import annotations

from aistore._internal.provider import ALIAS_GS, ALIAS_S3, Provider, provider_aliases
from aistore.sdk.errors import InvalidBckProvider as InvalidBckProvider

Provider.__module__ = __name__

__all__ = ["ALIAS_GS", "ALIAS_S3", "Provider", "provider_aliases"]
