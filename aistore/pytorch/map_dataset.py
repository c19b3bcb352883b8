"""`AISMapDataset`: map-style dataset whose items are `(object name, content bytes)`.

Example:
    >>> from aistore.pytorch import AISMapDataset  # doctest: +SKIP
    >>> ds = AISMapDataset(client.bucket("imgs"), prefix_map={bucket: "train/"})  # doctest: +SKIP
    >>> name, data = ds[0]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

from aistore.pytorch._fetch import EtlName, fetch_bytes, read_ahead
from aistore.pytorch.base_map_dataset import AISBaseMapDataset, PrefixMap
from aistore.sdk.ais_source import AISSource
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig

__all__ = ["AISMapDataset"]


class AISMapDataset(AISBaseMapDataset):
    """Map-style dataset over AIS objects: item `i` is `(name, bytes)` of the `i`-th listed
    object, read with one GET (through the ETL `etl_name`, which must exist on the cluster).

    With a batching DataLoader, `__getitems__` reads a batch's objects on up to `max_concurrency`
    threads (default 1: one GET after the other, as upstream); the items and their order do not
    change.

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
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        super().__init__(ais_source_list, prefix_map)
        self._etl = EtlName(etl_name) if etl_name else None
        self._max_concurrency = max_concurrency

    def __getitem__(self, index: int) -> tuple[str, bytes]:
        obj = self._get_object(index)
        return obj.name, fetch_bytes(obj, self._etl)

    def __getitems__(self, indices: list[int]) -> list[tuple[str, bytes]]:
        threads = min(self._max_concurrency, len(indices))
        if threads < 2:
            return [self.__getitem__(index) for index in indices]
        self._listing.ensure_pool_size(threads)
        return list(read_ahead(iter(indices), self.__getitem__, threads))
