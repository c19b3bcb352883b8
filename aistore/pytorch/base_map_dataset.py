"""`AISBaseMapDataset`: the map-style base class; lists its sources once, at construction.

Example:
    >>> class Names(AISBaseMapDataset):  # doctest: +SKIP
    ...     def __getitem__(self, index):
    ...         return self.get_obj_list()[index].name
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from torch.utils.data import Dataset

from aistore.sdk.ais_source import AISSource
from aistore.sdk.obj.object import Object

__all__ = ["AISBaseMapDataset"]

PrefixMap = Mapping[AISSource, str | Sequence[str] | None]


class AISBaseMapDataset(ABC, Dataset[Any]):
    """Map-style dataset over the objects of one or more `AISSource`s (buckets, object groups).

    The object list is built once, in the constructor (DataLoader workers receive it with the
    dataset); subclasses implement `__getitem__`.

    Example:
        >>> class Sizes(AISBaseMapDataset):  # doctest: +SKIP
        ...     def __getitem__(self, index):
        ...         return self.get_obj_list()[index].props_cached.size

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source (the same instance as in `ais_source_list`), a prefix or a list
            of prefixes to list instead of the whole source; `None` means the whole source.

    Raises:
        ValueError: no source given.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource],
        prefix_map: PrefixMap | None = None,
    ) -> None:
        if not ais_source_list:
            raise ValueError(f"<{type(self).__name__}> ais_source_list must be provided")
        self._ais_source_list: list[AISSource] = (
            [ais_source_list] if isinstance(ais_source_list, AISSource) else list(ais_source_list)
        )
        self._prefix_map: PrefixMap = prefix_map or {}
        self._obj_list: list[Object] = self._create_objects_list()

    def _create_objects_list(self) -> list[Object]:
        """Every object of every source, in source order, then prefix order, then listing order."""
        objects: list[Object] = []
        for source in self._ais_source_list:
            prefixes = self._prefix_map.get(source)
            if prefixes is None:
                prefixes = [""]
            elif isinstance(prefixes, str):
                prefixes = [prefixes]
            for prefix in prefixes:
                objects.extend(source.list_all_objects_iter(prefix=prefix))
        return objects

    def get_obj_list(self) -> list[Object]:
        """The objects of the dataset, in index order."""
        return self._obj_list

    @abstractmethod
    def __getitem__(self, index: int) -> Any:
        """The sample at `index`."""

    def __getitems__(self, indices: list[int]) -> list[Any]:
        return [self.__getitem__(index) for index in indices]
