"""Object metadata parsed from response headers (GET, HEAD).

Example:
    >>> from aistore.sdk.obj.object_attributes import ObjectAttributes
    >>> ObjectAttributes({"Content-Length": "5", "ais-present": "true"}).size
    5
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from requests.structures import CaseInsensitiveDict

from aistore.sdk.const import (
    AIS_ACCESS_TIME,
    AIS_CHECKSUM_TYPE,
    AIS_CHECKSUM_VALUE,
    AIS_CHUNKS_COUNT,
    AIS_CHUNKS_MAX_CHUNK_SIZE,
    AIS_CUSTOM_MD,
    AIS_EC_DATA,
    AIS_EC_GENERATION,
    AIS_EC_PARITY,
    AIS_EC_REPLICATED,
    AIS_LOCATION,
    AIS_MIRROR_COPIES,
    AIS_MIRROR_PATHS,
    AIS_PRESENT,
    AIS_VERSION,
    HEADER_CONTENT_LENGTH,
    HEADER_ETAG,
    HEADER_LAST_MODIFIED,
)

__all__ = ["ChunksInfo", "ECInfo", "ObjectAttributes"]

_EC_HEADERS = (AIS_EC_GENERATION, AIS_EC_DATA, AIS_EC_PARITY, AIS_EC_REPLICATED)


@dataclass
class ECInfo:
    """Erasure-coding layout of an object.

    Example:
        >>> ECInfo(generation=1, data_slices=2, parity_slices=1).is_ec_copy
        False
    """

    generation: int = 0
    data_slices: int = 0
    parity_slices: int = 0
    is_ec_copy: bool = False


@dataclass
class ChunksInfo:
    """How a chunked object is stored: number of chunks and size of the largest.

    Example:
        >>> ChunksInfo(chunk_count=3, max_chunk_size=1 << 20).chunk_count
        3
    """

    chunk_count: int = 0
    max_chunk_size: int = 0


class ObjectAttributes:
    """Typed view of an object's metadata headers; absent or malformed integers read as 0.

    Example:
        >>> attrs = ObjectAttributes({"ais-custom-md": "k1=v1,k2=a=b"})
        >>> attrs.custom_metadata
        {'k1': 'v1', 'k2': 'a=b'}
    """

    def __init__(self, response_headers: Mapping[str, Any]) -> None:
        # Header names are case-insensitive on the wire; keep lookups so.
        if not isinstance(response_headers, CaseInsensitiveDict):
            response_headers = CaseInsensitiveDict(response_headers)
        self._response_headers: CaseInsensitiveDict[Any] = response_headers

    # The 1.25 SDK's `Object.head()` returned the response headers themselves; scripts of that
    # era index the result by header name. Those reads still work, with a DeprecationWarning.

    def __getitem__(self, header: str) -> Any:
        _warn_dict_access()
        return self._response_headers[header]

    def __contains__(self, header: object) -> bool:
        _warn_dict_access()
        return header in self._response_headers

    def __iter__(self) -> Iterator[str]:
        _warn_dict_access()
        return iter(self._response_headers.keys())

    def get(self, header: str, default: Any = None) -> Any:
        """Deprecated: a response header by name; use the properties instead."""
        _warn_dict_access()
        return self._response_headers.get(header, default)

    def keys(self) -> Iterator[str]:
        """Deprecated: the response header names; use the properties instead."""
        _warn_dict_access()
        return iter(self._response_headers.keys())

    def items(self) -> Iterator[tuple[str, Any]]:
        """Deprecated: (header, value) pairs; use the properties instead."""
        _warn_dict_access()
        return iter(self._response_headers.items())

    def _str(self, name: str) -> str:
        return str(self._response_headers.get(name, ""))

    def _int(self, name: str) -> int:
        try:
            return int(self._response_headers.get(name, 0))
        except (TypeError, ValueError):
            return 0

    @property
    def size(self) -> int:
        """Size in bytes (`Content-Length`)."""
        return self._int(HEADER_CONTENT_LENGTH)

    @property
    def checksum_type(self) -> str:
        """Checksum algorithm, e.g. `xxhash`."""
        return self._str(AIS_CHECKSUM_TYPE)

    @property
    def checksum_value(self) -> str:
        """Checksum value in hex."""
        return self._str(AIS_CHECKSUM_VALUE)

    @property
    def access_time(self) -> str:
        """Last access, Unix nanoseconds as a string."""
        return self._str(AIS_ACCESS_TIME)

    @property
    def obj_version(self) -> str:
        """Object version."""
        return self._str(AIS_VERSION)

    @property
    def custom_metadata(self) -> dict[str, str]:
        """User metadata: the header split on `,`, each item on its first `=`."""
        result: dict[str, str] = {}
        for item in self._str(AIS_CUSTOM_MD).split(","):
            key, sep, value = item.strip().partition("=")
            if sep:
                result[key] = value
        return result

    @property
    def present(self) -> bool:
        """Whether the object is present in the cluster (`Ais-Present: true`)."""
        return self._str(AIS_PRESENT) == "true"

    @property
    def location(self) -> str:
        """Where the object is stored on its target."""
        return self._str(AIS_LOCATION)

    @property
    def mirror_paths(self) -> list[str]:
        """Mountpaths holding copies."""
        value = self._str(AIS_MIRROR_PATHS).strip("[]")
        return value.split(",") if value else []

    @property
    def mirror_copies(self) -> int:
        """Number of copies."""
        return self._int(AIS_MIRROR_COPIES)

    @property
    def ec(self) -> ECInfo | None:
        """Erasure-coding layout, or None when the object is not erasure coded."""
        if not any(self._str(name) for name in _EC_HEADERS):
            return None
        return ECInfo(
            generation=self._int(AIS_EC_GENERATION),
            data_slices=self._int(AIS_EC_DATA),
            parity_slices=self._int(AIS_EC_PARITY),
            is_ec_copy=self._str(AIS_EC_REPLICATED) == "true",
        )

    @property
    def last_modified(self) -> str:
        """Modification time, RFC 1123."""
        return self._str(HEADER_LAST_MODIFIED)

    @property
    def etag(self) -> str:
        """Entity tag without quotes."""
        return self._str(HEADER_ETAG).strip('"')

    @property
    def chunks(self) -> ChunksInfo | None:
        """Chunk layout; None for a monolithic object (or when not asked for)."""
        if not self._str(AIS_CHUNKS_COUNT) and not self._str(AIS_CHUNKS_MAX_CHUNK_SIZE):
            return None
        return ChunksInfo(
            chunk_count=self._int(AIS_CHUNKS_COUNT),
            max_chunk_size=self._int(AIS_CHUNKS_MAX_CHUNK_SIZE),
        )


def _warn_dict_access() -> None:
    warnings.warn(
        "dict-style access to head() results (1.25 API) is deprecated; use the "
        "ObjectAttributes/ObjectProps properties (size, obj_version, checksum_value, ...)",
        DeprecationWarning,
        stacklevel=3,
    )
