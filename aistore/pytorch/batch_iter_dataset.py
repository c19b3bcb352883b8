"""`AISBatchIterDataset`: an iterable dataset that fetches its objects with GetBatch, many per
request, in order.

Example:
    >>> from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset  # doctest: +SKIP
    >>> ds = AISBatchIterDataset(client.bucket("imgs"), client, max_batch_size=64)  # doctest: +SKIP
    >>> for name, data in ds:  # doctest: +SKIP
    ...     print(name, len(data))
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from aistore.pytorch._fetch import progress, read_ahead
from aistore.pytorch.base_iter_dataset import AISBaseIterDataset, PrefixMap
from aistore.sdk.ais_source import AISSource
from aistore.sdk.client import Client
from aistore.sdk.const import EXT_TAR
from aistore.sdk.enums import Colocation
from aistore.sdk.obj.object import Object

__all__ = ["AISBatchIterDataset"]

logger = logging.getLogger(__name__)


class AISBatchIterDataset(AISBaseIterDataset):
    """Yields `(object name, bytes)` for the objects of its sources, fetched `max_batch_size`
    at a time with one GetBatch request each (no default bucket: every item names its own).

    Each DataLoader worker batches its own share of the objects; order within a worker is the
    listing order. One request runs ahead: the next batch is sent (on a thread) while the
    items of the current one are handed out, so the server assembles it meanwhile.

    Example:
        >>> ds = AISBatchIterDataset([bucket_a, bucket_b], client)  # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=None, num_workers=4)  # doctest: +SKIP

    Args:
        ais_source_list: one source or a list of them.
        client: the client that sends the GetBatch requests.
        prefix_map: per source, a prefix or prefixes to list (see `AISBaseIterDataset`).
        show_progress: a progress bar per worker (tqdm).
        max_batch_size: objects per GetBatch request.
        output_format: the archive format on the wire (".tar" is the fastest).
        streaming: streaming replies (True) or multipart with the server's per-item metadata.
        colocation: the placement hint of the requests.
        partition_sources_by_worker: each worker lists only its share of the sources.
        cont_on_err: skip (and log) objects the server could not deliver, instead of raising.
        shuffle, seed, rank, world_size, even_split: as in `AISBaseIterDataset` (opt-in
            per-epoch shuffle and the split across torch.distributed ranks).

    Raises:
        ValueError: no source, or `max_batch_size` < 1.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource],
        client: Client,
        prefix_map: PrefixMap | None = None,
        show_progress: bool = False,
        max_batch_size: int = 32,
        output_format: str = EXT_TAR,
        streaming: bool = True,
        colocation: Colocation = Colocation.NONE,
        partition_sources_by_worker: bool = False,
        cont_on_err: bool = False,
        *,
        shuffle: bool = False,
        seed: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
        even_split: bool = False,
    ) -> None:
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
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be at least 1, got {max_batch_size}")
        self.client = client
        self.max_batch_size = max_batch_size
        self.output_format = output_format
        self.streaming = streaming
        self.colocation = colocation
        self.cont_on_err = cont_on_err
        self._show_progress = show_progress

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        epoch, objects = self._start_epoch()
        if self._show_progress:
            objects = progress(objects, "AISBatchIterDataset" + epoch.consumer.name, "obj")
        # The next request is sent while this one's items are handed out, so the server
        # assembles it meanwhile.
        for result in read_ahead(_chunks(objects, self.max_batch_size), self._send, 1):
            for info, data in result:
                # Counted before the yield (and when skipped): a state taken after this item
                # resumes at the next one, although whole batches were requested ahead.
                epoch.done += 1
                if info.err_msg:
                    if not self.cont_on_err:
                        raise RuntimeError(f"{info.obj_name}: {info.err_msg}")
                    logger.warning("Skipping %s: %s", info.obj_name, info.err_msg)
                    continue
                yield info.obj_name, data

    def _send(self, objects: list[Object]) -> Any:
        """Send one GetBatch request for `objects`; its items come in order from the result."""
        batch = self.client.batch(
            objects=objects,
            output_format=self.output_format,
            streaming_get=self.streaming,
            colocation=self.colocation,
            cont_on_err=self.cont_on_err,
        )
        return batch.get()


def _chunks(objects: Iterable[Object], size: int) -> Iterator[list[Object]]:
    it = iter(objects)
    while chunk := list(islice(it, size)):
        yield chunk
