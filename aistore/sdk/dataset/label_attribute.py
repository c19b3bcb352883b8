"""A sample part computed from the sample's name, e.g. its class label.

Example:
    >>> LabelAttribute("cls", lambda name: name.split("_")[0]).get_data_for_entry("dog_1")
    ('cls', 'dog')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aistore.sdk.dataset.config_attribute import ConfigAttribute

__all__ = ["LabelAttribute"]


class LabelAttribute(ConfigAttribute):
    """`label_identifier(name)` under the key `name`.

    Example:
        >>> LabelAttribute("cls", str.upper).get_data_for_entry("cat")
        ('cls', 'CAT')

    Args:
        name: the attribute's name (sample key).
        label_identifier: maps a sample name to its label.
    """

    def __init__(self, name: str, label_identifier: Callable[[str], Any]) -> None:
        self.name = name
        self.label_identifier = label_identifier

    def get_data_for_entry(self, filename: str) -> tuple[str, Any]:
        """(`name`, the label)."""
        return self.name, self.label_identifier(filename)
