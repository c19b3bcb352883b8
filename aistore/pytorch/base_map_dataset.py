"""`AISBaseMapDataset`: the map-style base class; lists its sources once, at construction.

A subclass implements `__getitem__` as the built-in datasets do, with `_get_object(index)`
(an SDK `Object` built from the compact listing); `len()` is the number of objects.

Example:
    >>> class Names(AISBaseMapDataset):  # doctest: +SKIP
    ...     def __getitem__(self, index):
    ...         return self._get_object(index).name
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from torch.utils.data import Dataset

from aistore.pytorch._listing import ObjectListing, list_sources
from aistore.sdk.ais_source import AISSource
from aistore.sdk.obj.object import Object

__all__ = ["AISBaseMapDataset"]

# Keyed by source instances. `Any`, not `AISSource`: a Mapping is invariant in its key type, and
# users pass e.g. `dict[Bucket, str]`.
PrefixMap = Mapping[Any, str | Sequence[str] | None]


class AISBaseMapDataset(ABC, Dataset[Any]):
    """Map-style dataset over the objects of one or more `AISSource`s (buckets, object groups).

    The sources are listed once, in the constructor, in source order, then prefix order, then
    listing order; index `i` is the `i`-th object. The listing is held compactly (names in one
    buffer, sizes in an array, see `aistore.pytorch._listing`), so DataLoader workers neither copy
    a list of Python objects nor receive one; `get_obj_list()` builds the SDK `Object`s on demand.
    Object groups are listed by name, without the HEAD per object upstream sends; their sizes are
    fetched (concurrently) only when something asks for them (`get_obj_list()`,
    `DynamicBatchSampler`), and a missing object fails there or at its `__getitem__`.

    **Subclassing.** Implement `__getitem__` with `_get_object(index)`, as every built-in
    dataset does; `__len__` is the number of objects. `get_obj_list()` and `_obj_list` (the
    official SDK's) still work, but `get_obj_list()` builds every object on each call.

    Example:
        >>> class Sizes(AISBaseMapDataset):  # doctest: +SKIP
        ...     def __getitem__(self, index):
        ...         return self._get_object(index).props_cached.size

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
        self._listing: ObjectListing = list_sources(self._ais_source_list, self._prefix_map)

    def get_obj_list(self) -> list[Object]:
        """The objects of the dataset, in index order: a new list of new SDK `Object`s on each
        call, each with name and size in `props_cached` (HEADs the unknown sizes first).

        The list costs memory in proportion to the dataset; indexing the dataset does not need it.
        """
        self._listing.fill_sizes()
        return [self._listing.object(i) for i in range(len(self._listing))]

    @property
    def _obj_list(self) -> Sequence[Object]:
        """The objects as a lazy read-only sequence (the attribute upstream subclasses index)."""
        return _ObjectsView(self._listing)

    def _get_object(self, index: int) -> Object:
        """The object at `index` (negative counts from the end).

        Raises:
            IndexError: out of bounds.
        """
        try:
            return self._listing.object(index)
        except IndexError:
            raise IndexError(
                f"<{type(self).__name__}> index must be in bounds of dataset"
            ) from None

    def _object_sizes(self) -> npt.NDArray[np.int64]:
        """Size in bytes of every object, in index order (HEADs the unknown ones first)."""
        self._listing.fill_sizes()
        return self._listing.sizes

    def __len__(self) -> int:
        """The number of objects."""
        return len(self._listing)

    @abstractmethod
    def __getitem__(self, index: int) -> Any:
        """The sample at `index`."""

    def __getitems__(self, indices: list[int]) -> list[Any]:
        return [self.__getitem__(index) for index in indices]


class _ObjectsView(Sequence[Object]):
    """A listing seen as a sequence of SDK `Object`s, each built when indexed."""

    def __init__(self, listing: ObjectListing) -> None:
        self._listing = listing

    def __len__(self) -> int:
        return len(self._listing)

    @overload
    def __getitem__(self, index: int) -> Object: ...

    @overload
    def __getitem__(self, index: slice) -> list[Object]: ...

    def __getitem__(self, index: int | slice) -> Object | list[Object]:
        if isinstance(index, slice):
            return [self._listing.object(i) for i in range(*index.indices(len(self._listing)))]
        return self._listing.object(index)
