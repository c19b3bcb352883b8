"""`AISParallelMapDataset`: large objects, each read by concurrent range GETs into shared memory.

Works in the main process and inside DataLoader worker processes: the range readers are threads
(the official SDK's process pool cannot start in a daemonic worker), and the `ParallelBuffer`
an item carries goes back to the main process as a file descriptor, without a copy.

Example:
    >>> ds = AISParallelMapDataset(client.bucket("videos"), num_workers=8)  # doctest: +SKIP
    >>> loader = DataLoader(ds, batch_size=4, num_workers=2)  # doctest: +SKIP
    >>> for names, buffers in loader:  # doctest: +SKIP
    ...     for buf in buffers:
    ...         consume(buf.buf)
    ...         buf.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from torch.utils.data._utils.collate import default_collate_fn_map

from aistore.pytorch.base_map_dataset import AISBaseMapDataset, PrefixMap
from aistore.sdk.ais_source import AISSource
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer

__all__ = ["AISParallelMapDataset"]


def _collate_parallel_buffers(batch: Sequence[ParallelBuffer], **_: Any) -> list[ParallelBuffer]:
    return list(batch)


# Let torch's default collate keep ParallelBuffers as a list (it cannot stack them), so
# DataLoader(dataset, batch_size=B) works without a custom collate_fn.
default_collate_fn_map.setdefault(ParallelBuffer, _collate_parallel_buffers)


class AISParallelMapDataset(AISBaseMapDataset):
    """Map-style dataset whose items are `(object_name, ParallelBuffer)`.

    Each object is read with `num_workers` concurrent range GETs straight into one shared-memory
    buffer. The consumer should `close()` each buffer when done (its memory is freed anyway
    when it is garbage collected or its process exits).

    Example:
        >>> ds = AISParallelMapDataset(client.bucket("big"), num_workers=16)  # doctest: +SKIP
        >>> name, buf = ds[0]  # doctest: +SKIP
        >>> with buf:  # doctest: +SKIP
        ...     tensor = torch.frombuffer(buf.buf, dtype=torch.uint8)

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source, a prefix or list of prefixes (see `AISBaseMapDataset`).
        num_workers: concurrent range reads per object (at least 2).

    Raises:
        ValueError: no source given, or `num_workers` < 2.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource] | None = None,
        prefix_map: PrefixMap | None = None,
        num_workers: int = 16,
    ) -> None:
        if num_workers < 2:
            raise ValueError("`num_workers` must be at least 2.")
        super().__init__(ais_source_list or [], prefix_map or {})
        self._num_workers = num_workers

    @property
    def num_workers(self) -> int:
        """Concurrent range reads per object."""
        return self._num_workers

    def __getitem__(self, index: int) -> tuple[str, ParallelBuffer]:
        obj = self._get_object(index)
        content = obj.get_reader(num_workers=self._num_workers).read_all()
        return obj.name, cast(ParallelBuffer, content)
