"""`AISBaseIterDataset`: the iterable-style base class; lists its sources lazily, per iteration
and per DataLoader worker.

Example:
    >>> class Names(AISBaseIterDataset):  # doctest: +SKIP
    ...     def __iter__(self):
    ...         self._reset_iterator()
    ...         objects, _ = self._get_worker_iter_info()
    ...         yield from (obj.name for obj in objects)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

from torch.utils.data import IterableDataset, get_worker_info

from aistore.sdk.ais_source import AISSource
from aistore.sdk.obj.object import Object

__all__ = ["AISBaseIterDataset"]

PrefixMap = Mapping[AISSource, str | Sequence[str] | None]


class AISBaseIterDataset(ABC, IterableDataset[Any]):
    """Iterable dataset over the objects of one or more `AISSource`s (buckets, object groups).

    Sources are listed lazily on every `__iter__`. With several DataLoader workers each worker
    takes every n-th object of the full listing (round robin), or - with
    `partition_sources_by_worker` - lists only its share of the sources.

    Example:
        >>> class Sizes(AISBaseIterDataset):  # doctest: +SKIP
        ...     def __iter__(self):
        ...         self._reset_iterator()
        ...         objects, _ = self._get_worker_iter_info()
        ...         return (o.props_cached.size for o in objects)

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source (the same instance as in `ais_source_list`), a prefix or a list
            of prefixes to list instead of the whole source; `None` means the whole source.
        partition_sources_by_worker: give each worker `sources[id::num_workers]` to list.

    Raises:
        ValueError: no source given.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource],
        prefix_map: PrefixMap | None = None,
        partition_sources_by_worker: bool = False,
    ) -> None:
        if not ais_source_list:
            raise ValueError(f"<{type(self).__name__}> ais_source_list must be provided")
        self._ais_source_list: list[AISSource] = (
            [ais_source_list] if isinstance(ais_source_list, AISSource) else list(ais_source_list)
        )
        self._prefix_map: PrefixMap = prefix_map or {}
        self._partition_sources_by_worker = partition_sources_by_worker
        self._obj_iterator: Iterator[Object] | None = None

    def _create_objects_iter(self, sources: Sequence[AISSource] | None = None) -> Iterator[Object]:
        """The objects of `sources` (all by default): source order, then prefix order, then
        listing order."""
        for source in self._ais_source_list if sources is None else sources:
            prefixes = self._prefix_map.get(source)
            if prefixes is None:
                prefixes = [""]
            elif isinstance(prefixes, str):
                prefixes = [prefixes]
            for prefix in prefixes:
                yield from source.list_all_objects_iter(prefix=prefix)

    def _reset_iterator(self) -> None:
        """Start a fresh listing."""
        self._obj_iterator = self._create_objects_iter()

    def _get_worker_iter_info(self) -> tuple[Iterable[Object], str]:
        """This worker's objects and its name for progress bars (`""` without workers)."""
        if self._obj_iterator is None:
            self._reset_iterator()
        assert self._obj_iterator is not None
        info = get_worker_info()
        if info is None or info.num_workers == 1:
            return self._obj_iterator, ""
        name = f" (Worker {info.id})"
        if self._partition_sources_by_worker:
            mine = self._ais_source_list[info.id :: info.num_workers]
            return self._create_objects_iter(mine), name
        return islice(self._obj_iterator, info.id, None, info.num_workers), name

    @abstractmethod
    def __iter__(self) -> Iterator[Any]:
        """The samples."""

    def __len__(self) -> int:
        """The number of objects in all sources (lists them all: O(N) requests)."""
        return sum(1 for _ in self._create_objects_iter())

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_obj_iterator"] = None  # a live listing cannot cross to a worker process
        return state
