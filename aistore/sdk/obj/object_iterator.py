"""Lazy iteration over a bucket listing, one page at a time.

Example:
    >>> names = [entry.name for entry in bucket.list_objects_iter(prefix="a/")]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

from aistore.sdk.types import BucketEntry, BucketList

__all__ = ["ObjectIterator"]


class ObjectIterator:
    """Yields the entries of successive pages fetched with `list_objects(uuid=, token=)`.

    The page whose continuation token is empty is the last one. (The official iterator also
    needs a non-empty listing uuid to stop, and relists forever without one.)

    Example:
        >>> it = ObjectIterator(lambda uuid, token: BucketList("u", "", 0, []))
        >>> list(it)
        []
    """

    def __init__(self, list_objects: Callable[..., BucketList]) -> None:
        self._list_objects = list_objects
        self._token = ""
        self._uuid = ""
        self._last_page = False
        self._fetched: list[BucketEntry] = []

    def __iter__(self) -> ObjectIterator:
        return self

    def __next__(self) -> BucketEntry:
        while not self._fetched:
            if self._last_page:
                raise StopIteration
            page = self._list_objects(uuid=self._uuid, token=self._token)
            # Reversed once so pop() yields in order without shifting the list.
            self._fetched = list(reversed(page.entries))
            self._uuid = page.uuid
            self._token = page.continuation_token
            self._last_page = self._token == ""
        return self._fetched.pop()
