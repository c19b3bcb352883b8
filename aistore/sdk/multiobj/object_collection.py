"""What every selection of objects offers: its names, and its wire form.

Example:
    >>> from aistore.sdk.multiobj import ObjectNames
    >>> ObjectNames(["a", "b"]).get_value()
    {'objnames': ['a', 'b']}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

__all__ = ["ObjectCollection"]


class ObjectCollection(ABC):
    """A set of object names: a list, a range or a template.

    Example:
        >>> from aistore.sdk.multiobj import ObjectTemplate
        >>> list(ObjectTemplate("x{1..2}"))
        ['x1', 'x2']
    """

    @abstractmethod
    def get_value(self) -> dict[str, Any]:
        """The selection as the API takes it: `{"objnames": [...]}` or `{"template": "..."}`."""

    @abstractmethod
    def __iter__(self) -> Iterator[str]:
        """Every name of the selection."""
