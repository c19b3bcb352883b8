"""A selection given as a numbered range: prefix, first..last index (step, padding), suffix.

Example:
    >>> from aistore.sdk.multiobj import ObjectRange
    >>> str(ObjectRange("img-", 0, 99, pad_width=3, suffix=".jpg"))
    'img-{000..099..1}.jpg'
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistore.sdk import utils
from aistore.sdk.errors import InvalidObjectRangeIndex
from aistore.sdk.multiobj.object_collection import ObjectCollection

__all__ = ["ObjectRange"]

_RANGE = re.compile(
    r"(?P<prefix>.*)\{(?P<min_index>\d+)\.\.(?P<max_index>\d+)(?:\.\.(?P<step>\d+))?\}(?P<suffix>.*)?"
)


class ObjectRange(ObjectCollection):
    """`prefix{min..max..step}suffix`, indices left-padded with zeros to `pad_width`; without
    indices, just the prefix (the server then selects by prefix).

    Args:
        prefix: text before the index.
        min_index: first index (with `max_index`, or neither).
        max_index: last index, greater than `min_index`.
        pad_width: zero-pad indices to this width (0: no padding).
        step: index increment.
        suffix: text after the index (only with indices).

    Raises:
        InvalidObjectRangeIndex: only one index given, min >= max, or min wider than pad_width.
        ValueError: a suffix without indices.

    Example:
        >>> list(ObjectRange("s-", 1, 5, step=2))
        ['s-1', 's-3', 's-5']
    """

    def __init__(
        self,
        prefix: str,
        min_index: int | None = None,
        max_index: int | None = None,
        pad_width: int = 0,
        step: int = 1,
        suffix: str = "",
    ) -> None:
        self._prefix = prefix
        self._step = step
        self._suffix = suffix
        self._validate_indices(min_index, max_index, pad_width)
        has_min = isinstance(min_index, int)
        if suffix and not has_min:
            raise ValueError("Suffix cannot be used without indices")
        self._min_index = str(min_index).zfill(pad_width) if has_min else None
        self._max_index = str(max_index).zfill(pad_width) if has_min else None

    @classmethod
    def from_string(cls, range_string: str) -> ObjectRange:
        """Parse `prefix{00..99[..step]}suffix` (padding = width of the first index).

        Raises:
            ValueError: not such a string.
        """
        match = _RANGE.match(range_string)
        if not match:
            raise ValueError(f"Invalid range string format: {range_string}")
        parts = match.groupdict()
        return cls(
            parts["prefix"],
            int(parts["min_index"]),
            int(parts["max_index"]),
            len(parts["min_index"]),
            int(parts["step"]) if parts["step"] else 1,
            parts["suffix"] or "",
        )

    @staticmethod
    def _validate_indices(min_index: int | None, max_index: int | None, pad_width: int) -> None:
        given = [isinstance(min_index, int), isinstance(max_index, int)]
        if not all(given):
            if any(given):
                raise InvalidObjectRangeIndex("Provide both min_index and max_index or neither")
            return
        assert min_index is not None and max_index is not None
        if min_index >= max_index:
            raise InvalidObjectRangeIndex(f"{min_index} must be less than {max_index}")
        if pad_width != 0 and len(str(min_index)) > pad_width:
            raise InvalidObjectRangeIndex(
                f"Number of digits in min index {min_index} must not be greater than pad width "
                f"{pad_width}"
            )

    def _indices_set(self) -> bool:
        return bool(self._min_index and self._max_index)

    def __str__(self) -> str:
        if self._indices_set():
            return (
                f"{self._prefix}{{{self._min_index}..{self._max_index}..{self._step}}}"
                f"{self._suffix}"
            )
        return self._prefix

    def __iter__(self) -> Iterator[str]:
        if not self._indices_set():
            raise RuntimeError("Cannot iterate over object range with no indices")
        return utils.expand_braces(str(self))

    def get_value(self) -> dict[str, str]:
        """`{"template": ...}`."""
        return {"template": str(self)}
