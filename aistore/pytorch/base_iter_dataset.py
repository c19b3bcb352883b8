"""`AISBaseIterDataset`: the iterable-style base class. Splits its objects across DataLoader
workers and torch.distributed ranks, can shuffle them per epoch, and can resume mid-epoch.

A subclass implements `__iter__` as the built-in datasets do: `_start_epoch()` gives this
reader's progress record and its objects for the epoch (split, shuffled, from the resume point),
and the subclass counts each object it has finished in `progress.done` before handing out its
last sample, so that `state_dict()` resumes exactly.

Example:
    >>> class Names(AISBaseIterDataset):  # doctest: +SKIP
    ...     def __iter__(self):
    ...         progress, objects = self._start_epoch()
    ...         for obj in objects:
    ...             progress.done += 1
    ...             yield obj.name
"""

from __future__ import annotations

import mmap
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from torch.utils.data import IterableDataset

from aistore.pytorch._listing import ListingBuilder, ObjectListing, source_prefixes
from aistore.pytorch._sharding import (
    Consumer,
    consumer_positions,
    current_consumer,
    epoch_order,
    process_group_rank,
    resolve_rank,
)
from aistore.sdk.ais_source import AISSource
from aistore.sdk.obj.object import Object

__all__ = ["AISBaseIterDataset"]

# Keyed by source instances. `Any`, not `AISSource`: a Mapping is invariant in its key type, and
# users pass e.g. `dict[Bucket, str]`.
PrefixMap = Mapping[Any, str | Sequence[str] | None]

# The keys of a state dict, and the settings that must match between saving and loading.
_STATE_VERSION = 1
_SETTINGS = ("shuffle", "seed", "even_split", "partition_sources_by_worker")
_CONSUMER = ("rank", "world_size", "worker_id", "num_workers")


@dataclass
class _Epoch:
    """Progress of one consumer through one epoch.

    `done` counts the consumer's objects (in its order) that are consumed; `part` counts the
    items already handed out of the next object, for readers that make several items of one
    object (shards); `total` and `fingerprint` are known once the listing is complete (`None`
    while it streams).
    """

    epoch: int
    consumer: Consumer
    done: int = 0
    part: int = 0
    total: int | None = None
    fingerprint: str | None = None


class _EpochCell:
    """An epoch number in 8 bytes of anonymous shared memory: DataLoader workers forked from
    the process that calls `set_epoch` read the value it sets later, so persistent workers
    shuffle each epoch differently. Pickles as its value (a spawned worker gets a copy)."""

    def __init__(self, value: int = 0) -> None:
        self._cell = mmap.mmap(-1, 8)  # MAP_SHARED | MAP_ANONYMOUS: shared across fork
        self.value = value

    @property
    def value(self) -> int:
        return int.from_bytes(self._cell[:8], "little", signed=True)

    @value.setter
    def value(self, value: int) -> None:
        self._cell[:8] = value.to_bytes(8, "little", signed=True)

    def __getstate__(self) -> tuple[int]:
        return (self.value,)

    def __setstate__(self, state: tuple[int]) -> None:
        self._cell = mmap.mmap(-1, 8)
        self.value = state[0]


class AISBaseIterDataset(ABC, IterableDataset[Any]):
    """Iterable dataset over the objects of one or more `AISSource`s (buckets, object groups).

    **Listing.** The sources are listed in source order, then prefix order, then listing order
    (object groups by name, without a HEAD per object). A process lists once and keeps the
    listing in compact form (`aistore.pytorch._listing`) for later epochs; `refresh_listing()`
    makes the next epoch list again. The first epoch streams: samples flow while the listing is
    still arriving, unless shuffling or `even_split` need the whole listing first. Calling
    `len(dataset)` in the main process before the DataLoader starts its workers lists there
    once, and forked workers share that listing instead of each listing on their own.

    **Split.** Every sample of an epoch is read exactly once across all DataLoader workers of all
    torch.distributed ranks (the rank comes from `rank`/`world_size`, else an initialized
    process group, else the `RANK`/`WORLD_SIZE` environment variables, else 0 of 1). Rank `r` of
    `R` owns listing positions `r, r+R, ...`; its worker `w` of `W` takes every `W`-th of those
    (with one rank this is upstream's round robin). With `even_split`, the last `n % R` positions
    are left out of the epoch so every rank reads exactly `n // R` objects: DDP collectives hang
    when one rank runs out of batches first. With `partition_sources_by_worker`, reader `k` of `K`
    (all workers of all ranks) lists and reads only `sources[k::K]`.

    **Shuffle.** With `shuffle`, positions index a permutation of the listing that depends only
    on `seed` and the epoch (`set_epoch`), identical on every rank and worker.

    **Resume.** `state_dict()` in the process that iterates (the main process with
    `num_workers=0`, or each worker under torchdata's `StatefulDataLoader`) records the epoch and
    how many of this reader's objects were consumed; after `load_state_dict()` the next iteration
    continues with the next object. Loading needs the same settings, world size and worker count,
    and the same listing.

    **Subclassing.** Implement `__iter__` with `_start_epoch()`, as every built-in dataset
    does: it returns `(progress, objects)`, this reader's objects for the epoch from the resume
    point on; add 1 to `progress.done` for each object finished, before its last sample is
    handed out (a reader that makes several samples of one object also counts them in
    `progress.part`, and skips `progress.part` samples of its first object after a resume; see
    `AISShardReader`). `progress.consumer.name` names the reader for progress bars. The hooks of
    the official SDK's base class (`_create_objects_iter`, `_reset_iterator`,
    `_get_worker_iter_info`) still work for subclasses written against it, and resume at the
    object they were reading (its samples may repeat).

    Example:
        >>> class Sizes(AISBaseIterDataset):  # doctest: +SKIP
        ...     def __iter__(self):
        ...         progress, objects = self._start_epoch()
        ...         for obj in objects:
        ...             progress.done += 1
        ...             yield obj.props_cached.size

    Args:
        ais_source_list: one source or a list of them.
        prefix_map: per source (the same instance as in `ais_source_list`), a prefix or a list
            of prefixes to list instead of the whole source; `None` means the whole source.
        partition_sources_by_worker: give each reader `sources[k::K]` to list and read.
        shuffle: a seeded permutation of the listing per epoch (keyword only).
        seed: the permutation's seed, a non-negative integer (keyword only).
        rank, world_size: this process among the distributed ranks (keyword only; both or
            neither).
        even_split: the same number of objects on every rank, leaving out the remainder
            (keyword only).

    Raises:
        ValueError: no source given, a negative seed, only one of rank and world_size, or
            `even_split` with `partition_sources_by_worker`.
    """

    def __init__(
        self,
        ais_source_list: AISSource | Sequence[AISSource],
        prefix_map: PrefixMap | None = None,
        partition_sources_by_worker: bool = False,
        *,
        shuffle: bool = False,
        seed: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
        even_split: bool = False,
    ) -> None:
        if not ais_source_list:
            raise ValueError(f"<{type(self).__name__}> ais_source_list must be provided")
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither")
        if rank is not None:
            resolve_rank(rank, world_size)
        if even_split and partition_sources_by_worker:
            raise ValueError("even_split cannot be combined with partition_sources_by_worker")
        self._ais_source_list: list[AISSource] = (
            [ais_source_list] if isinstance(ais_source_list, AISSource) else list(ais_source_list)
        )
        self._prefix_map: PrefixMap = prefix_map or {}
        self._partition_sources_by_worker = partition_sources_by_worker
        self._shuffle = shuffle
        self._seed = seed
        self._rank = rank
        self._world_size = world_size
        self._even_split = even_split
        self._epoch = _EpochCell()
        self._obj_iterator: Iterator[Object] | None = None
        # Per process: listings by the indices of the sources they cover.
        self._listings: dict[tuple[int, ...], ObjectListing] = {}
        self._live: _Epoch | None = None  # the latest iteration started in this process
        self._resume: dict[str, Any] | None = None  # loaded, for the next iteration

    # --- the official SDK's hooks, for subclasses written against it ----------------------

    def _create_objects_iter(self, sources: Sequence[AISSource] | None = None) -> Iterator[Object]:
        """A fresh lazy listing of `sources` (all by default), as SDK `Object`s: source order,
        then prefix order, then listing order. Not split, not shuffled, not cached."""
        for source in self._ais_source_list if sources is None else sources:
            for prefix in source_prefixes(self._prefix_map, source):
                yield from source.list_all_objects_iter(prefix=prefix)

    def _reset_iterator(self) -> None:
        """Start a fresh listing in `_obj_iterator` (lazy: nothing is sent until it is read).
        `_get_worker_iter_info()` starts a new epoch iteration either way."""
        self._obj_iterator = self._create_objects_iter()

    def _get_worker_iter_info(self) -> tuple[Iterable[Object], str]:
        """The objects this worker of this rank reads in the current epoch (from the resume
        point, if a state was loaded), and its name for progress bars (`""` when it is the only
        reader). Each call starts a new iteration."""
        epoch, objects = self._start_epoch()

        def counted() -> Iterator[Object]:
            for obj in objects:
                yield obj
                epoch.done += 1  # the consumer asked for the next one: this one is finished

        return counted(), epoch.consumer.name

    # --- epochs, listing, state ------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the shuffle of the next iteration (call it on every rank with the
        same value, before creating the epoch's DataLoader iterator). Persistent workers forked
        from this process see the new value too; spawned ones keep the epoch they started with.

        Raises:
            ValueError: a negative epoch.
        """
        if epoch < 0:
            raise ValueError(f"epoch must be non-negative, got {epoch}")
        self._epoch.value = epoch

    def refresh_listing(self) -> None:
        """Forget this process's listing: the next iteration (or `len()`) lists again."""
        self._listings.clear()

    def state_dict(self) -> dict[str, Any]:
        """Where this reader is in the epoch: call it in the process that iterates (see the
        class docstring). Before the epoch's iteration starts (none yet, or `set_epoch` moved
        on), a loaded state or the start of the epoch."""
        if self._resume is not None:
            return dict(self._resume)
        live = self._live
        if live is None or live.epoch != self._epoch.value:
            live = _Epoch(self._epoch.value, current_consumer(self._rank, self._world_size))
        state: dict[str, Any] = {
            "version": _STATE_VERSION,
            "epoch": live.epoch,
            "done": live.done,
            "part": live.part,
            "total": live.total,
            "fingerprint": live.fingerprint,
        }
        state.update(self._settings())
        state.update({key: getattr(live.consumer, key) for key in _CONSUMER})
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Continue from `state_dict` (from `state_dict()`) at the next iteration.

        Raises:
            ValueError: the state is not one of ours, or was saved with other settings.
        """
        if state_dict.get("version") != _STATE_VERSION:
            raise ValueError(f"not a {type(self).__name__} state: {dict(state_dict)!r}")
        for key, value in self._settings().items():
            if state_dict.get(key) != value:
                raise ValueError(
                    f"state saved with {key}={state_dict.get(key)!r}, dataset has {value!r}"
                )
        self._epoch.value = int(state_dict["epoch"])
        self._resume = dict(state_dict)

    def _settings(self) -> dict[str, Any]:
        return {
            "shuffle": self._shuffle,
            "seed": self._seed,
            "even_split": self._even_split,
            "partition_sources_by_worker": self._partition_sources_by_worker,
        }

    def _my_sources(self, consumer: Consumer) -> tuple[int, ...]:
        """Indices of the sources this reader lists."""
        indices = range(len(self._ais_source_list))
        if self._partition_sources_by_worker:
            return tuple(indices[consumer.index :: consumer.count])
        return tuple(indices)

    def _listing(self, key: tuple[int, ...]) -> ObjectListing:
        """The listing of the sources `key`, from this process's cache or listed now."""
        listing = self._listings.get(key)
        if listing is None:
            builder = ListingBuilder()
            for _ in builder.extend([self._ais_source_list[i] for i in key], self._prefix_map):
                pass
            listing = self._listings[key] = builder.finish()
        return listing

    def _start_epoch(self) -> tuple[_Epoch, Iterator[Object]]:
        """Begin an iteration (the way to implement `__iter__`, see the class docstring): this
        reader's progress record (also `self._live`) and its objects from the resume point on.
        The iterator does not update `done`: the caller counts what it has finished."""
        consumer = current_consumer(self._rank, self._world_size)
        resume, self._resume = self._resume, None
        epoch = _Epoch(self._epoch.value, consumer)
        if resume is not None:
            epoch.epoch = int(resume["epoch"])
            saved = tuple(resume.get(key) for key in _CONSUMER)
            now = tuple(getattr(consumer, key) for key in _CONSUMER)
            if saved != now:
                raise ValueError(
                    f"state saved by reader {dict(zip(_CONSUMER, saved, strict=True))}, resumed "
                    f"by {dict(zip(_CONSUMER, now, strict=True))}: the split must not change"
                )
            epoch.done = int(resume["done"])
            epoch.part = int(resume.get("part", 0))
        self._live = epoch
        key = self._my_sources(consumer)
        need_all = self._shuffle or self._even_split or (resume or {}).get("fingerprint")
        if key not in self._listings and not need_all:
            return epoch, self._stream(key, epoch, epoch.done)
        listing = self._listing(key)
        if resume is not None and resume.get("fingerprint") not in (None, listing.fingerprint()):
            raise ValueError("the sources list differently than when the state was saved")
        return epoch, self._from_listing(listing, epoch, epoch.done)

    def _positions(self, n: int, consumer: Consumer) -> range:
        if self._partition_sources_by_worker:
            return range(n)  # the reader's own sources: all of it
        return consumer_positions(
            n,
            consumer.rank,
            consumer.world_size,
            consumer.worker_id,
            consumer.num_workers,
            self._even_split,
        )

    def _from_listing(self, listing: ObjectListing, epoch: _Epoch, start: int) -> Iterator[Object]:
        positions = self._positions(len(listing), epoch.consumer)
        epoch.total = len(positions)
        epoch.fingerprint = listing.fingerprint()
        order = epoch_order(len(listing), self._seed, epoch.epoch) if self._shuffle else None
        for position in positions[start:]:
            yield listing.object(int(order[position]) if order is not None else position)

    def _stream(self, key: tuple[int, ...], epoch: _Epoch, start: int) -> Iterator[Object]:
        """Read while listing; the complete listing is kept for the next epochs."""
        consumer = epoch.consumer
        first, step = (
            (0, 1)
            if self._partition_sources_by_worker
            else (
                consumer.index,
                consumer.count,
            )
        )
        builder = ListingBuilder()
        mine = 0
        for index in builder.extend([self._ais_source_list[i] for i in key], self._prefix_map):
            if index % step == first:
                if mine >= start:
                    yield builder.object(index)
                mine += 1
        listing = self._listings[key] = builder.finish()
        epoch.total = mine
        epoch.fingerprint = listing.fingerprint()

    @abstractmethod
    def __iter__(self) -> Iterator[Any]:
        """The samples."""

    def __len__(self) -> int:
        """The number of objects this rank reads in an epoch (all its workers together; with one
        rank, every object of the sources). Lists once per process (then cached)."""
        rank, world_size = resolve_rank(self._rank, self._world_size)
        if self._partition_sources_by_worker:
            # Reader k = rank + R*w reads sources[k::R*W]; together a rank's readers read
            # sources[rank::R] whatever W is.
            return len(self._listing(tuple(range(len(self._ais_source_list)))[rank::world_size]))
        n = len(self._listing(tuple(range(len(self._ais_source_list)))))
        return len(consumer_positions(n, rank, world_size, 0, 1, self._even_split))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_obj_iterator"] = None  # a live listing cannot cross to a worker process
        state["_live"] = None
        group = process_group_rank() if self._rank is None else None
        if group is not None:
            # A spawned worker has no process group: it takes this process's rank along.
            state["_rank"], state["_world_size"] = group
        return state
