"""A selection given as a list of object names.

Example:
    >>> from aistore.sdk.multiobj import ObjectNames
    >>> list(ObjectNames(["a", "b"]))
    ['a', 'b']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistore.sdk.multiobj.object_collection import ObjectCollection

__all__ = ["ObjectNames"]


class ObjectNames(ObjectCollection):
    """The objects named in `names`.

    Example:
        >>> ObjectNames(["x"]).get_value()
        {'objnames': ['x']}
    """

    def __init__(self, names: list[str]) -> None:
        self._names = names

    def __str__(self) -> str:
        return str(self._names)

    def get_value(self) -> dict[str, Any]:
        """`{"objnames": [...]}`."""
        return {"objnames": self._names}

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)
