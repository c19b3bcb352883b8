"""`AISMapDataset`: map-style dataset whose items are `(object name, content bytes)`.

Example:
    >>> from aistore.pytorch import AISMapDataset  # doctest: +SKIP
    >>> ds = AISMapDataset(client.bucket("imgs"), prefix_map={bucket: "train/"})  # doctest: +SKIP
    >>> name, data = ds[0]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

from aistore.pytorch._fetch import EtlName, fetch_bytes, read_ahead, read_batch, single_target
from aistore.pytorch.base_map_dataset import AISBaseMapDataset, PrefixMap
from aistore.sdk.ais_source import AISSource
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig

__all__ = ["AISMapDataset"]


class AISMapDataset(AISBaseMapDataset):
    """Map-style dataset over AIS objects: item `i` is `(name, bytes)` of the `i`-th listed
    object, read with one GET (through the ETL `etl_name`, which must exist on the cluster).

    With a batching DataLoader, `__getitems__` reads a batch's objects in one GetBatch request
    where that is the faster way (`batch_get`), else on up to `max_concurrency` threads (default
    1: one GET after the other, as upstream); the items and their order do not change.

    Example:
        >>> ds = AISMapDataset([bucket_a, bucket_b])  # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)  # doctest: +SKIP
        >>> for names, contents in loader:  # doctest: +SKIP
        ...     ...

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source, a prefix or list of prefixes (see `AISBaseMapDataset`).
        etl_name: an ETL to apply to every object on the server.
        max_concurrency: GETs in flight while reading one batch (keyword only, at least 1).
        batch_get: read a DataLoader batch with one GetBatch request (keyword only). None (the
            default) decides by the cluster map: yes on a single target (an embedded server,
            where a batch costs a fraction of its GETs), no across targets (where AIS assembles
            a batch from its peers, slower than GETs straight to each owner). Never with
            `etl_name`. A batch whose GetBatch fails (a missing object, say) is read GET by GET,
            so its errors are the per-object ones.

    Raises:
        ValueError: no source given, or `max_concurrency` < 1.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource] = (),
        prefix_map: PrefixMap | None = None,
        etl_name: str | None = None,
        *,
        max_concurrency: int = 1,
        batch_get: bool | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        super().__init__(ais_source_list, prefix_map)
        self._etl = EtlName(etl_name) if etl_name else None
        self._max_concurrency = max_concurrency
        self._batch_get = False if etl_name else batch_get

    def __getitem__(self, index: int) -> tuple[str, bytes]:
        obj = self._get_object(index)
        return obj.name, fetch_bytes(obj, self._etl)

    def __getitems__(self, indices: list[int]) -> list[tuple[str, bytes]]:
        if len(indices) > 1 and self._batch_get is not False:
            objects = [self._get_object(index) for index in indices]
            if self._batch_get is None:
                self._batch_get = single_target(objects[0])
            if self._batch_get:
                items = read_batch(objects)
                if items is not None:
                    return items
        threads = min(self._max_concurrency, len(indices))
        if threads < 2:
            return [self.__getitem__(index) for index in indices]
        self._listing.ensure_pool_size(threads)
        return list(read_ahead(iter(indices), self.__getitem__, threads))
