"""A selection given as a bash brace-expansion template, e.g. `shard-{0000..0999}.tar`.

Example:
    >>> from aistore.sdk.multiobj import ObjectTemplate
    >>> list(ObjectTemplate("a-{0..2}"))
    ['a-0', 'a-1', 'a-2']
"""

from __future__ import annotations

from collections.abc import Iterator

from aistore.sdk import utils
from aistore.sdk.multiobj.object_collection import ObjectCollection

__all__ = ["ObjectTemplate"]


class ObjectTemplate(ObjectCollection):
    """The objects `template` names; a template without braces is a prefix for the server.

    Example:
        >>> ObjectTemplate("logs/{a,b}.txt").get_value()
        {'template': 'logs/{a,b}.txt'}
    """

    def __init__(self, template: str) -> None:
        self._template = template

    def __str__(self) -> str:
        return self._template

    def __iter__(self) -> Iterator[str]:
        return utils.expand_braces(self._template)

    def get_value(self) -> dict[str, str]:
        """`{"template": ...}`."""
        return {"template": self._template}
