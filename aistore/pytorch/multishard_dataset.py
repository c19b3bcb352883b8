"""`AISMultiShardStream`: an iterable dataset that walks several sets of shards side by side
and yields one tuple of file contents (one file from each set) at a time.

Example:
    >>> from aistore.sdk.dataset.data_shard import DataShard  # doctest: +SKIP
    >>> images = DataShard("http://localhost:8080", "images")  # doctest: +SKIP
    >>> labels = DataShard("http://localhost:8080", "labels")  # doctest: +SKIP
    >>> for image, label in AISMultiShardStream([images, labels]):  # doctest: +SKIP
    ...     train_step(image, label)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

from torch.utils.data import IterableDataset

from aistore.pytorch._sharding import resolve_rank
from aistore.pytorch._shards import EtlName, reading_consumer, share_of_consumers
from aistore.sdk.archive_config import ArchiveConfig
from aistore.sdk.bucket import Bucket as Bucket
from aistore.sdk.dataset.data_shard import DataShard
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.list_object_flag import ListObjectFlag

__all__ = ["AISMultiShardStream"]

Member = tuple[str, str]
"""`(shard object name, path of the file inside it)`."""

_STATE_VERSION = "aistore.AISMultiShardStream/1"


class AISMultiShardStream(IterableDataset[tuple[bytes, ...]]):
    """Yields tuples of `bytes`, one per data source: the i-th tuple holds the i-th file of
    every source, files ordered by shard name, then by their names inside the shard (the
    listing order). The stream stops at the end of the shortest source.

    Every DataLoader worker of every torch.distributed rank yields its own round-robin share
    of the tuples, so each tuple is yielded exactly once in all (the official class yields the
    whole stream from every worker). Shards are listed lazily on each `__iter__` by every
    worker. `state_dict()` / `load_state_dict()` resume at the next tuple (the tuples before
    it are listed again, not fetched); call them in the process that iterates, as with
    `AISBaseIterDataset`.

    Files are fetched server-side out of their shards, `max_batch_size` tuples per GetBatch
    request and source (in request order, so the output is the same as one GET per file).
    A source with an `etl_name`, or `max_batch_size=None`, fetches each file with its own
    GET, as the official class does.

    Example:
        >>> sources = [DataShard(url, "images"), DataShard(url, "masks")]  # doctest: +SKIP
        >>> loader = DataLoader(AISMultiShardStream(sources), batch_size=16)  # doctest: +SKIP
        >>> images, masks = next(iter(loader))  # 16 images, their 16 masks  # doctest: +SKIP

    Args:
        data_sources: where each stream's shards are (cluster, bucket, prefix, ETL).
        max_batch_size: tuples fetched per GetBatch request; None: one GET per file.

    Raises:
        ValueError: `max_batch_size` below 1.
        aistore.sdk.errors.AISError: (while iterating) a file could not be fetched.
    """

    def __init__(self, data_sources: Sequence[DataShard], max_batch_size: int | None = 64) -> None:
        if max_batch_size is not None and max_batch_size < 1:
            raise ValueError(f"max_batch_size must be at least 1 or None, got {max_batch_size}")
        self._data_sources = list(data_sources)
        self._max_batch_size = max_batch_size
        self._rank_world: tuple[int, int] | None = None  # the main process's, in workers
        self._live: dict[str, Any] | None = None  # the running iteration's state
        self._resume: dict[str, Any] | None = None  # a loaded state, for the next iteration

    def __getstate__(self) -> dict[str, Any]:
        # Pickled in the main process for spawned workers, which have no process group.
        state = self.__dict__.copy()
        state["_rank_world"] = resolve_rank(None, None)
        state["_live"] = None
        return state

    def __iter__(self) -> Iterator[tuple[bytes, ...]]:
        state = self._start()
        # zip stops at the shortest source, as the official class does.
        rows = zip(*(_members(ds) for ds in self._data_sources), strict=False)
        members = islice(share_of_consumers(rows, self._rank_world), state["done"], None)
        for item in self._contents(members):
            state["done"] += 1  # before the yield: a state taken after this tuple includes it
            yield item

    def _contents(self, members: Iterator[tuple[Member, ...]]) -> Iterator[tuple[bytes, ...]]:
        if self._max_batch_size is None:
            for row in members:
                yield tuple(_get(ds, m) for ds, m in zip(self._data_sources, row, strict=True))
            return
        while chunk := list(islice(members, self._max_batch_size)):
            columns = [
                _fetch(ds, [row[i] for row in chunk]) for i, ds in enumerate(self._data_sources)
            ]
            yield from zip(*columns, strict=True)

    def state_dict(self) -> dict[str, Any]:
        """Where this reader is in the stream: the tuples of its share it has handed out."""
        if self._resume is not None:
            return dict(self._resume)
        fresh = self._fresh_state()
        if self._live is not None and self._live["consumer"] == fresh["consumer"]:
            return dict(self._live)
        return fresh

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Continue from `state_dict` (from `state_dict()`) at the next iteration.

        Raises:
            ValueError: the state is not one of ours.
        """
        if state_dict.get("version") != _STATE_VERSION:
            raise ValueError(f"not an AISMultiShardStream state: {dict(state_dict)!r}")
        self._resume = {**state_dict, "consumer": dict(state_dict["consumer"])}

    def _start(self) -> dict[str, Any]:
        """This iteration's state (also `self._live`), from a loaded state if any.

        Raises:
            ValueError: the state was saved by another reader (the split must not change).
        """
        state = self._fresh_state()
        consumer = state["consumer"]
        resume, self._resume = self._resume, None
        if resume is not None:
            if resume["consumer"] != consumer:
                raise ValueError(
                    f"state saved by reader {resume['consumer']}, resumed by {consumer}: "
                    "the split must not change"
                )
            state["done"] = int(resume["done"])
        self._live = state
        return state

    def _fresh_state(self) -> dict[str, Any]:
        """The state at the start of the stream, for the calling reader."""
        consumer = dataclasses.asdict(reading_consumer(self._rank_world))
        return {"version": _STATE_VERSION, "done": 0, "consumer": consumer}

    def __len__(self) -> int:
        """The number of tuples in the whole stream (not a worker's share): the shortest
        source's file count, from listings only."""
        if not self._data_sources:
            return 0
        return min(sum(1 for _ in _members(ds)) for ds in self._data_sources)


def _members(source: DataShard) -> Iterator[Member]:
    """The files of every shard of `source`, in listing order."""
    bucket = source.bucket
    for shard in bucket.list_objects_iter(prefix=source.prefix, props="name"):
        inside = shard.name + "/"
        for entry in bucket.list_objects_iter(
            prefix=shard.name, props="name", flags=[ListObjectFlag.ARCH_DIR]
        ):
            if entry.name.startswith(inside):
                yield shard.name, entry.name[len(inside) :]


def _get(source: DataShard, member: Member) -> bytes:
    """One file with one GET (through the source's ETL, if any)."""
    shard, path = member
    etl = EtlName(source.etl_name) if source.etl_name else None
    reader = source.bucket.object(shard).get_reader(
        archive_config=ArchiveConfig(archpath=path), etl=etl
    )
    data = reader.read_all()
    assert isinstance(data, bytes)  # a sequential reader returns bytes
    return data


def _fetch(source: DataShard, members: list[Member]) -> list[bytes]:
    """The files `members` of `source`, in order: one GetBatch request (one GET each with an
    ETL, which GetBatch cannot apply)."""
    if source.etl_name:
        return [_get(source, m) for m in members]
    batch = source.client.batch(bucket=source.bucket, cont_on_err=False)
    for shard, path in members:
        batch.add(shard, archpath=path)
    result: Any = batch.get()  # items, not the raw response (raw=False)
    contents: list[bytes] = [data for _, data in result]
    if len(contents) != len(members):
        raise RuntimeError(
            f"GetBatch from bucket {source.bucket_name!r} returned {len(contents)} of "
            f"{len(members)} files"
        )
    return contents
