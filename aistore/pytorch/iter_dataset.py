"""`AISIterDataset`: iterable dataset whose items are `(object name, content bytes)`.

Example:
    >>> from aistore.pytorch import AISIterDataset  # doctest: +SKIP
    >>> for name, data in AISIterDataset(client.bucket("imgs")):  # doctest: +SKIP
    ...     print(name, len(data))
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from aistore.pytorch._fetch import EtlName, fetch_bytes, progress, read_ahead
from aistore.pytorch.base_iter_dataset import AISBaseIterDataset, PrefixMap
from aistore.sdk.ais_source import AISSource
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.obj.object import Object

__all__ = ["AISIterDataset"]

# The connection pool of a session keeps at least this many sockets (the SDK default).
_DEFAULT_POOL = 10


class AISIterDataset(AISBaseIterDataset):
    """Iterable dataset over AIS objects: yields `(name, bytes)` for each object this DataLoader
    worker of this rank reads (see `AISBaseIterDataset` for the split, shuffle, listing cache
    and resume), read with one GET each (through the ETL `etl_name`, which must exist on the
    cluster).

    `prefetch` objects are read ahead of the consumer by as many threads of the iterating
    process (0: one GET after the other, as upstream). The order of the items never changes,
    and `state_dict()` counts only items already yielded, so resuming is exact either way.

    Example:
        >>> ds = AISIterDataset(bucket, shuffle=True, seed=7, prefetch=4)  # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=32, num_workers=4)  # doctest: +SKIP
        >>> for epoch in range(3):  # doctest: +SKIP
        ...     ds.set_epoch(epoch)
        ...     for names, contents in loader:
        ...         ...

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source, a prefix or list of prefixes (see `AISBaseIterDataset`).
        etl_name: an ETL to apply to every object on the server.
        show_progress: a progress bar per worker (tqdm).
        partition_sources_by_worker: each reader lists and reads only its share of the sources.
        prefetch: objects read ahead, on that many threads (keyword only).
        shuffle, seed, rank, world_size, even_split: see `AISBaseIterDataset` (keyword only).

    Raises:
        ValueError: no source given, a negative `prefetch`, or see `AISBaseIterDataset`.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource],
        prefix_map: PrefixMap | None = None,
        etl_name: str | None = None,
        show_progress: bool = False,
        partition_sources_by_worker: bool = False,
        *,
        prefetch: int = 0,
        shuffle: bool = False,
        seed: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
        even_split: bool = False,
    ) -> None:
        if prefetch < 0:
            raise ValueError(f"prefetch must be non-negative, got {prefetch}")
        super().__init__(
            ais_source_list,
            prefix_map,
            partition_sources_by_worker,
            shuffle=shuffle,
            seed=seed,
            rank=rank,
            world_size=world_size,
            even_split=even_split,
        )
        self._etl = EtlName(etl_name) if etl_name else None
        self._show_progress = show_progress
        self._prefetch = prefetch

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        epoch, objects = self._start_epoch()
        if self._show_progress:
            objects = progress(objects, "AISIterDataset" + epoch.consumer.name, "obj")
        if self._prefetch >= _DEFAULT_POOL:
            for source in self._ais_source_list:
                source.client.session_manager.ensure_pool_size(self._prefetch + 1)
        for name, content in read_ahead(objects, self._fetch, self._prefetch):
            epoch.done += 1  # before the yield: a state taken after this item includes it
            yield name, content

    def _fetch(self, obj: Object) -> tuple[str, bytes]:
        return obj.name, fetch_bytes(obj, self._etl)
