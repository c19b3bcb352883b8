"""One part of every sample of a dataset (an image, a label, ...).

Example:
    >>> from aistore.sdk.dataset.label_attribute import LabelAttribute
    >>> LabelAttribute("cls", lambda name: name[0]).get_data_for_entry("cat01")
    ('cls', 'c')
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["ConfigAttribute"]


class ConfigAttribute(ABC):
    """Produces one part of a sample from the sample's file name (stem).

    Example:
        >>> class Length(ConfigAttribute):
        ...     def get_data_for_entry(self, filename):
        ...         return "len", len(filename)
        >>> Length().get_data_for_entry("abc")
        ('len', 3)
    """

    @abstractmethod
    def get_data_for_entry(self, filename: str) -> tuple[str, Any]:
        """(the part's key in the sample, its data or None when missing)."""
