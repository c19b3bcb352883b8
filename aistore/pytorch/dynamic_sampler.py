"""`DynamicBatchSampler`: batches of indices whose objects fit a byte budget.

Example:
    >>> from aistore.pytorch import AISMapDataset, DynamicBatchSampler  # doctest: +SKIP
    >>> sampler = DynamicBatchSampler(ds, 4_000_000, shuffle=True, seed=1)  # doctest: +SKIP
    >>> loader = DataLoader(ds, batch_sampler=sampler)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import Sampler

from aistore.pytorch._sharding import epoch_order
from aistore.pytorch.base_map_dataset import AISBaseMapDataset

__all__ = ["SATURATION_FACTOR", "DynamicBatchSampler"]

logger = logging.getLogger(__name__)

SATURATION_FACTOR = 0.8
"""How full (of `max_batch_size`) a last batch must be to be kept when `drop_last` is set."""


def plan_batches(
    order: Sequence[int] | np.ndarray[Any, Any],
    sizes: Sequence[int] | np.ndarray[Any, Any],
    max_batch_size: float,
    drop_last: bool = False,
    allow_oversized_samples: bool = False,
    saturation_factor: float = SATURATION_FACTOR,
) -> list[list[int]]:
    """The batches of one pass over `order` (indices into `sizes`), greedy and in order.

    A sample joins the open batch while the batch total stays below `max_batch_size`; one that
    brings it to exactly `max_batch_size` joins and closes it; one that would exceed it closes
    the batch and opens the next. Zero-size samples are skipped; a sample larger than
    `max_batch_size` is a batch of its own (emitted at once, the open batch stays open) with
    `allow_oversized_samples`, else skipped. The last open batch is kept unless `drop_last`,
    and then only when it is more than `saturation_factor` full.
    """
    batches: list[list[int]] = []
    batch: list[int] = []
    total = 0
    for raw in order:
        index = int(raw)
        size = int(sizes[index])
        if size == 0:
            logger.warning("Skipping sample %d: its size is 0 bytes", index)
            continue
        if size > max_batch_size:
            if allow_oversized_samples:
                batches.append([index])
            else:
                logger.warning(
                    "Skipping sample %d: %d bytes > max batch size %s", index, size, max_batch_size
                )
            continue
        if total + size > max_batch_size:
            batches.append(batch)
            batch, total = [], 0
        batch.append(index)
        total += size
        if total == max_batch_size:
            batches.append(batch)
            batch, total = [], 0
    if batch and (not drop_last or total / max_batch_size > saturation_factor):
        batches.append(batch)
    return batches


class DynamicBatchSampler(Sampler[list[int]]):
    """Yields lists of dataset indices whose objects together stay within `max_batch_size`
    bytes (sizes from the listing: no request per sample). Use it as a DataLoader
    `batch_sampler`.

    Differences from upstream, all additive: `len()` is the number of batches the next
    iteration yields (upstream returns the number of samples, which makes `len(loader)` wrong);
    `seed` makes `shuffle` a permutation that depends only on `(seed, epoch)` (`set_epoch`), where
    upstream draws from torch's global generator (still the behaviour without a seed);
    `state_dict()`/`load_state_dict()` resume mid-epoch (seeded or unshuffled only).

    Example:
        >>> ds = AISMapDataset(bucket)  # doctest: +SKIP
        >>> sampler = DynamicBatchSampler(ds, max_batch_size=3_000_000)  # doctest: +SKIP
        >>> [len(b) for b in sampler]  # doctest: +SKIP
        [3, 3, 3, 1]

    Args:
        data_source: the map-style dataset whose indices to batch.
        max_batch_size: the byte budget of a batch.
        drop_last: drop the last batch unless it is more than `saturation_factor` full.
        allow_oversized_samples: a sample over the budget is a batch of its own (else skipped).
        saturation_factor: see `drop_last`; in [0, 1].
        shuffle: a new sample order every iteration.
        seed: makes the shuffle reproducible (keyword only; a non-negative integer).

    Raises:
        ValueError: `saturation_factor` outside [0, 1], or a negative seed.
    """

    def __init__(
        self,
        data_source: AISBaseMapDataset,
        max_batch_size: float,
        drop_last: bool = False,
        allow_oversized_samples: bool = False,
        saturation_factor: float = SATURATION_FACTOR,
        shuffle: bool = False,
        *,
        seed: int | None = None,
    ) -> None:
        if not 0 <= saturation_factor <= 1:
            raise ValueError("`saturation_factor` must be between 0 and 1")
        if seed is not None and seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self._data_source = data_source
        self._max_batch_size = max_batch_size
        self._drop_last = drop_last
        self._allow_oversized_samples = allow_oversized_samples
        self._saturation_factor = saturation_factor
        self._shuffle = shuffle
        self._seed = seed
        self._sizes = _sizes_of(data_source)
        self._epoch = 0
        self._plan: tuple[int | None, list[list[int]]] | None = None  # (epoch key, batches)
        self._yielded = 0  # batches of the current iteration handed out
        self._skip = 0  # batches to skip at the next iteration (a loaded state)

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the next iteration's seeded shuffle."""
        self._epoch = epoch

    def _key(self) -> int | None:
        return self._epoch if self._shuffle and self._seed is not None else None

    def _order(self) -> np.ndarray[Any, Any]:
        n = len(self._sizes)
        if not self._shuffle:
            return np.arange(n)
        if self._seed is None:
            return torch.randperm(n).numpy()
        return epoch_order(n, self._seed, self._epoch)

    def _batches(self) -> list[list[int]]:
        """The plan of the next iteration, computed once (so `len()` and the iteration after it
        agree, even for an unseeded shuffle)."""
        if self._plan is None or self._plan[0] != self._key():
            batches = plan_batches(
                self._order(),
                self._sizes,
                self._max_batch_size,
                self._drop_last,
                self._allow_oversized_samples,
                self._saturation_factor,
            )
            self._plan = (self._key(), batches)
        return self._plan[1]

    def __iter__(self) -> Iterator[list[int]]:
        batches = self._batches()
        if self._shuffle and self._seed is None:
            self._plan = None  # the next iteration draws a new order
        start, self._skip = self._skip, 0
        self._yielded = start
        for batch in batches[start:]:
            self._yielded += 1
            yield list(batch)

    def __len__(self) -> int:
        """The number of batches of the next iteration."""
        return len(self._batches())

    def state_dict(self) -> dict[str, Any]:
        """The epoch and the batches handed out so far."""
        return {"epoch": self._epoch, "yielded": self._yielded, "seed": self._seed}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """The next iteration continues after the batches `state_dict` had handed out.

        Raises:
            ValueError: an unseeded shuffle (its order cannot be drawn again), or another seed.
        """
        if self._shuffle and self._seed is None:
            raise ValueError("resuming a shuffled DynamicBatchSampler needs a seed")
        if state_dict.get("seed") != self._seed:
            raise ValueError(f"state saved with seed {state_dict.get('seed')}, not {self._seed}")
        self._epoch = int(state_dict["epoch"])
        self._skip = int(state_dict["yielded"])


def _sizes_of(data_source: AISBaseMapDataset) -> np.ndarray[Any, Any]:
    """Object sizes in index order: from the compact listing, unless a subclass redefines
    `get_obj_list`."""
    if type(data_source).get_obj_list is AISBaseMapDataset.get_obj_list:
        return data_source._object_sizes()
    sizes = []
    for obj in data_source.get_obj_list():
        props = obj.props_cached if obj.props_cached is not None else obj.head()
        sizes.append(props.size)
    return np.asarray(sizes, dtype=np.int64)
