"""`AISPlanDataset`: an iterable dataset that delivers an epoch plan batch by batch, split across
torch.distributed ranks and DataLoader workers by global position, and resumes from a
checkpoint of a few bytes on any number of ranks, workers and batch size.

Example:
    >>> from aistore.pytorch.plan import DatasetSnapshot  # doctest: +SKIP
    >>> from aistore.pytorch.plan_dataset import AISPlanDataset  # doctest: +SKIP
    >>> ds = AISPlanDataset(DatasetSnapshot.from_sources(bucket), batch_size=32)  # doctest: +SKIP
    >>> loader = ds.track(DataLoader(ds, batch_size=None, num_workers=4))  # doctest: +SKIP
    >>> names, contents = next(loader); ds.state_dict()["consumed"]  # doctest: +SKIP
    32
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from torch.utils.data import IterableDataset, default_collate, get_worker_info

from aistore.pytorch._fetch import read_ahead
from aistore.pytorch._sharding import (
    Consumer,
    current_consumer,
    process_group_rank,
    resolve_rank,
)
from aistore.pytorch._shards import webdataset_key
from aistore.pytorch.base_iter_dataset import _EpochCell
from aistore.pytorch.plan import (
    _CHECKPOINT_VERSION,
    DEFAULT_WINDOW,
    DatasetChangedError,
    DatasetSnapshot,
    EpochPlan,
    PlanCheckpoint,
    SampleKey,
    ShuffleMode,
    num_steps,
    reader_steps,
    step_span,
)
from aistore.sdk.batch.batch import Batch
from aistore.sdk.provider import Provider

__all__ = ["AISPlanDataset"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Items per GetBatch request: a step of a larger batch is sent as several requests.
DEFAULT_MAX_REQUEST = 1024


@dataclass
class _Progress:
    """One iteration of the plan in one process: from position `start` of epoch `epoch`, the
    layout (`world_size`, `batch_size`) and `steps` = 1 + the last step handed out (0: none).
    `finished` once the iteration ran to its end."""

    epoch: int
    start: int
    world_size: int
    batch_size: int
    steps: int = 0
    finished: bool = False

    def consumed(self, samples: int) -> int:
        if self.finished:
            return samples
        return min(samples, self.start + self.steps * self.world_size * self.batch_size)


class AISPlanDataset(IterableDataset[Any]):
    """Delivers the samples of a `DatasetSnapshot` in the order of its epoch plan, one collated
    batch per item, each sample exactly once per epoch across all ranks and workers.

    **Order and split.** Epoch `e` (`set_epoch`) has one global order (`EpochPlan`): a full
    permutation of the objects, or for shards the shards shuffled and the samples shuffled
    within a window. Global step `s` covers the next `world_size * batch_size` positions; rank
    `r` takes its `batch_size` of them and DataLoader worker `w` of `W` makes the steps
    `w, w+W, ...`, in the order DataLoader hands batches out. Use `batch_size=None` in the
    DataLoader: items already are batches.

    **Checkpoints.** `state_dict()` is `PlanCheckpoint.to_dict()`: the plan's fingerprint, the
    epoch and the positions delivered globally - the same few bytes on every rank, whatever the
    layout. `load_state_dict()` continues with the rest of the epoch under any world size,
    worker count and batch size. Where the count is kept:

    - `DataLoader(num_workers=0)`: the dataset itself counts what it hands out.
    - `DataLoader(num_workers>0)`: iterate `ds.track(loader)`, which counts the batches the
      loader delivered (the workers run ahead of the training step).
    - torchdata `StatefulDataLoader`: it keeps each worker's state; `loader.state_dict()`
      resumes the same layout, and `PlanCheckpoint.from_loader_state(loader.state_dict())`
      gives the run's checkpoint for `load_state_dict` under another layout.

    A checkpoint of another dataset (fingerprint) raises `DatasetChangedError`; keep the
    snapshot (`DatasetSnapshot.save`) to learn which objects changed or to resume over its names.

    **Reading.** The samples of `request_steps` consecutive steps of this reader are fetched
    together with GetBatch (shard files by archpath), `read_ahead` such requests ahead of the
    step being handed out. On remote buckets, this reader asks the cluster to prefetch the
    objects of its coming steps, `prefetch_steps` steps per prefetch job, one window ahead of
    the window being read.

    Items: `collate_fn([transform(sample), ...])` per step, a sample being `(name, bytes)` for
    objects and `(key, {field: bytes})` for shards.

    Example:
        >>> snap = DatasetSnapshot.from_sources(bucket)  # doctest: +SKIP
        >>> ds = AISPlanDataset(snap, batch_size=32, seed=7)  # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=None, num_workers=4)  # doctest: +SKIP
        >>> for step, (names, data) in enumerate(ds.track(loader)):  # doctest: +SKIP
        ...     torch.save({"data": ds.state_dict()}, "ckpt.pt")

    Args:
        snapshot: the dataset (`DatasetSnapshot.from_sources` or `DatasetSnapshot.load`).
        batch_size: samples per rank per step.
        seed: the plan's seed (non-negative).
        shuffle: "full" (default for objects), "shards" (default for shards) or "none".
        window: positions per window of the "shards" shuffle.
        transform: applied to each sample in the reading process.
        collate_fn: makes a step's item from its list of samples (`None`: the list itself).
        rank, world_size: this process among the distributed ranks (both or neither; default:
            the process group, else `RANK`/`WORLD_SIZE`, else 0 of 1).
        read_ahead: requests fetched ahead of the step handed out (0: fetch on demand).
        request_steps: this reader's consecutive steps fetched together (one GetBatch request
            up to `max_request` items): fewer, larger requests; memory is
            `request_steps * (read_ahead + 1)` batches.
        max_request: items per GetBatch request.
        prefetch_steps: remote buckets: steps of this reader per prefetch job, sent a window
            ahead (0: no prefetch).
        key: shards mode: file name -> `(sample key, field)`, as the snapshot was listed with.
        drop_last: leave out the short last step of the epoch (under the layout in effect), so
            every rank gets the same number of full batches (DDP collectives hang when one
            rank runs out first); those samples are not delivered in this epoch.

    Raises:
        ValueError: batch_size < 1, a negative seed, an unknown shuffle, or only one of rank and
            world_size.
    """

    def __init__(
        self,
        snapshot: DatasetSnapshot,
        batch_size: int,
        *,
        seed: int = 0,
        shuffle: ShuffleMode | None = None,
        window: int = DEFAULT_WINDOW,
        transform: Callable[[Any], Any] | None = None,
        collate_fn: Callable[[list[Any]], Any] | None = default_collate,
        rank: int | None = None,
        world_size: int | None = None,
        read_ahead: int = 1,
        request_steps: int = 4,
        max_request: int = DEFAULT_MAX_REQUEST,
        prefetch_steps: int = 16,
        key: SampleKey = webdataset_key,
        drop_last: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither")
        if rank is not None:
            resolve_rank(rank, world_size)
        if request_steps < 1:
            raise ValueError(f"request_steps must be at least 1, got {request_steps}")
        if max_request < 1:
            raise ValueError(f"max_request must be at least 1, got {max_request}")
        self.snapshot = snapshot
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle: ShuffleMode = shuffle or ("shards" if snapshot.is_sharded else "full")
        self.window = window
        self.transform = transform
        self.collate_fn = collate_fn
        self.read_ahead = read_ahead
        self.request_steps = request_steps
        self.max_request = max_request
        self.prefetch_steps = prefetch_steps
        self.key = key
        self.drop_last = drop_last
        self._rank = rank
        self._world_size = world_size
        self._seen_rank: tuple[int, int] | None = None
        self._rank_world()
        self._plan_cache: EpochPlan | None = None  # this process's plan of one epoch
        # Validates seed, shuffle and window, and gives the plan's fingerprint.
        self.plan_fingerprint = self._plan(0).fingerprint
        self._epoch = _EpochCell()
        # Set to 1 by a DataLoader worker that hands out a batch (shared with workers forked
        # from this process): the main process then knows it cannot count on its own.
        self._worker_read = _EpochCell()
        self._pending: dict[str, Any] | None = None  # loaded, for the next iteration
        self._live: _Progress | None = None  # the iteration running in this process
        self._tracked: _Progress | None = None  # batches counted by `track` (main process)

    def __len__(self) -> int:
        """Batches this rank delivers in the current epoch, from the resume point if a state is
        loaded (the last one may be short; a rank may have one batch fewer than others when the
        epoch's last step has fewer samples than ranks)."""
        rank, world = self._rank_world()
        n, start = len(self.snapshot), self._resume_start()
        steps = self._num_steps(n, start, world)
        if steps and not self.drop_last:
            a, b = step_span(n, start, steps - 1, rank, world, self.batch_size)
            if a == b:  # this rank has no share of the short last step
                return steps - 1
        return steps

    # --- epochs and state -------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        """The epoch the next iteration delivers."""
        return self._epoch.value

    def set_epoch(self, epoch: int) -> None:
        """Deliver epoch `epoch` next (call on every rank with the same value). A loaded state of
        another epoch is dropped: the new epoch starts at its beginning. Persistent workers
        forked from this process see the new value.

        Raises:
            ValueError: a negative epoch.
        """
        if epoch < 0:
            raise ValueError(f"epoch must be non-negative, got {epoch}")
        if self._pending is not None and int(self._pending["epoch"]) != epoch:
            self._pending = None
        self._epoch.value = epoch
        self._worker_read.value = 0

    def __getstate__(self) -> dict[str, Any]:
        # A spawned worker builds its own plan (cheaper than receiving it).
        return {**self.__dict__, "_plan_cache": None}

    def plan(self, epoch: int | None = None) -> EpochPlan:
        """The plan of `epoch` (default: the current one)."""
        return self._plan(self.epoch if epoch is None else epoch)

    def _plan(self, epoch: int) -> EpochPlan:
        cached = self._plan_cache
        if cached is None or cached.epoch != epoch:
            cached = EpochPlan.for_snapshot(
                self.snapshot, seed=self.seed, epoch=epoch, shuffle=self.shuffle, window=self.window
            )
            self._plan_cache = cached
        return cached

    def state_dict(self) -> dict[str, Any]:
        """Where the run is (see the class docstring): `PlanCheckpoint.to_dict()` in the main
        process; inside a DataLoader worker (torchdata's `StatefulDataLoader` asks there), the
        worker's own progress, which `PlanCheckpoint.from_loader_state` combines."""
        n = len(self.snapshot)
        info = get_worker_info()
        if info is not None:
            live = self._live
            if live is None:
                if self._pending is not None and self._pending.get("consumed") is None:
                    return dict(self._pending)
                live = _Progress(
                    self.epoch, self._resume_start(), self._rank_world()[1], self.batch_size
                )
            return self._worker_state(live, current_consumer(*self._rank_world()))
        progress = self._tracked or self._live
        if progress is not None and progress.epoch == self.epoch:
            return self._checkpoint(progress.epoch, progress.consumed(n)).to_dict()
        if self._worker_read.value:
            raise RuntimeError(
                "DataLoader workers handed out batches this process did not count: iterate "
                "ds.track(loader) to checkpoint with state_dict(), or use torchdata's "
                "StatefulDataLoader and PlanCheckpoint.from_loader_state(loader.state_dict())"
            )
        if self._pending is not None:
            return dict(self._pending)
        return self._checkpoint(self.epoch, 0).to_dict()

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Continue from `state_dict` at the next iteration: a `state_dict()` of the main
        process (any world size, workers and batch size) or, inside a worker, that worker's
        state under the same layout (as `StatefulDataLoader` restores it).

        Raises:
            DatasetChangedError: the state is of another dataset snapshot.
            ValueError: not an epoch-plan state, or one of another seed/shuffle/window.
        """
        if state_dict.get("ais_plan") != _CHECKPOINT_VERSION:
            raise ValueError(f"not an epoch-plan state: {dict(state_dict)!r}")
        n = len(self.snapshot)
        if state_dict["dataset"] != self.snapshot.fingerprint:
            raise DatasetChangedError(
                f"the checkpoint is of dataset snapshot {state_dict['dataset']} "
                f"({state_dict['samples']} samples), this dataset is {self.snapshot.fingerprint} "
                f"({n} samples): objects were added, removed or rewritten. Load the saved "
                "snapshot (DatasetSnapshot.load) and call check_unchanged() with the current "
                "one to see which, or build the dataset from the saved snapshot to resume over "
                "its names"
            )
        if state_dict["plan"] != self.plan_fingerprint:
            raise ValueError(
                f"the checkpoint is of plan {state_dict['plan']}, this dataset's plan is "
                f"{self.plan_fingerprint}: seed, shuffle or window differ (seed={self.seed}, "
                f"shuffle={self.shuffle!r}, window={self.window})"
            )
        if state_dict.get("consumed") is not None:
            PlanCheckpoint.from_dict(state_dict)  # validates the fields
        self._pending = dict(state_dict)
        self._live = self._tracked = None
        self._worker_read.value = 0
        self._epoch.value = int(state_dict["epoch"])

    def _checkpoint(self, epoch: int, consumed: int) -> PlanCheckpoint:
        return PlanCheckpoint(
            plan=self.plan_fingerprint,
            dataset=self.snapshot.fingerprint,
            samples=len(self.snapshot),
            epoch=epoch,
            consumed=consumed,
        )

    def _worker_state(self, live: _Progress, consumer: Consumer) -> dict[str, Any]:
        state = self._checkpoint(live.epoch, 0).to_dict()
        state.update(
            consumed=None,
            start=live.start,
            steps=live.steps,
            world_size=live.world_size,
            batch_size=live.batch_size,
            rank=consumer.rank,
            worker_id=consumer.worker_id,
            num_workers=consumer.num_workers,
        )
        if live.finished:
            # Every step, the short one too (even if dropped): the epoch is done.
            state["steps"] = num_steps(
                len(self.snapshot), live.start, live.world_size, live.batch_size
            )
        return state

    def _num_steps(self, n: int, start: int, world_size: int) -> int:
        if self.drop_last:
            return max(0, n - start) // (world_size * self.batch_size)
        return num_steps(n, start, world_size, self.batch_size)

    def _rank_world(self) -> tuple[int, int]:
        """This process's (rank, world size). A DataLoader worker has no process group of its
        own: it uses what its main process saw when the dataset was built or last asked."""
        if self._rank is not None and self._world_size is not None:
            return self._rank, self._world_size
        group = process_group_rank()
        if group is None and get_worker_info() is not None and self._seen_rank is not None:
            return self._seen_rank
        self._seen_rank = group or resolve_rank(None, None)
        return self._seen_rank

    def _resume_start(self) -> int:
        pending = self._pending
        if pending is None or int(pending["epoch"]) != self.epoch:
            return 0
        if pending.get("consumed") is not None:
            return int(pending["consumed"])
        return int(pending["start"])

    # --- iteration --------------------------------------------------------------------------

    def track(self, batches: Iterable[T]) -> Iterator[T]:
        """The batches of `batches` (a DataLoader over this dataset), counted as they are
        delivered, so that `state_dict()` in this process is exact while DataLoader workers
        read ahead. Starts the loader's iteration at once (its workers receive the loaded state).
        """
        progress = _Progress(
            self.epoch, self._resume_start(), self._rank_world()[1], self.batch_size
        )
        iterator = iter(batches)
        self._pending = None
        self._worker_read.value = 0
        self._tracked = progress
        return _counted(iterator, progress)

    def __iter__(self) -> Iterator[Any]:
        # Not a generator: the resume point is taken now, when the loader creates the iterator.
        consumer = current_consumer(*self._rank_world())
        n = len(self.snapshot)
        epoch = self.epoch
        pending, self._pending = self._pending, None
        start, steps_done = 0, 0
        if pending is not None and int(pending["epoch"]) == epoch:
            if pending.get("consumed") is not None:
                start = int(pending["consumed"])
            else:
                _check_same_layout(pending, consumer, self.batch_size)
                start, steps_done = int(pending["start"]), int(pending["steps"])
        live = _Progress(epoch, start, consumer.world_size, self.batch_size, steps_done)
        self._live = live
        plan = self._plan(epoch)
        total = self._num_steps(n, start, consumer.world_size)
        steps = reader_steps(total, consumer.worker_id, consumer.num_workers, steps_done)
        return self._deliver(plan, live, consumer, steps)

    def _deliver(
        self, plan: EpochPlan, live: _Progress, consumer: Consumer, steps: range
    ) -> Iterator[Any]:
        n = len(plan)

        def positions(step: int) -> tuple[int, npt.NDArray[Any]]:
            a, b = step_span(n, live.start, step, consumer.rank, live.world_size, self.batch_size)
            return step, plan.order[a:b]

        spans: Iterator[tuple[int, npt.NDArray[Any]]] = (positions(s) for s in steps)
        spans = (span for span in spans if len(span[1]))
        if self.prefetch_steps > 0 and self._has_remote():
            spans = self._prefetching(spans)
        in_worker = get_worker_info() is not None
        groups = _groups(spans, self.request_steps)
        for fetched in read_ahead(groups, self._fetch_group, self.read_ahead):
            for step, samples in fetched:
                live.steps = step + 1  # handed out: a state taken now resumes after it
                if in_worker:
                    self._worker_read.value = 1
                yield self.collate_fn(samples) if self.collate_fn is not None else samples
        live.finished = True

    def _fetch_group(
        self, group: list[tuple[int, npt.NDArray[Any]]]
    ) -> list[tuple[int, list[Any]]]:
        """The samples of a few consecutive steps of this reader, fetched together (requests
        of at most `max_request` items), transformed, and dealt back to their steps."""
        samples = np.concatenate([s for _, s in group]) if len(group) > 1 else group[0][1]
        out: list[Any] = []
        for i in range(0, len(samples), self.max_request):
            chunk = samples[i : i + self.max_request]
            if self.snapshot.is_sharded:
                out += self._fetch_shard_samples(chunk)
            else:
                out += self._fetch_objects(chunk)
        if self.transform is not None:
            out = [self.transform(sample) for sample in out]
        dealt: list[tuple[int, list[Any]]] = []
        j = 0
        for step, step_samples in group:
            dealt.append((step, out[j : j + len(step_samples)]))
            j += len(step_samples)
        return dealt

    def _new_batch(
        self, objects: npt.NDArray[np.int64], items: list[Any] | None = None
    ) -> tuple[Batch, bool]:
        """A GetBatch request for items of `objects` (`items`: its plain items, names when
        the flag returned is true, else filled by the caller), and whether the items may be
        named by object name alone (all in the request's bucket: the cheaper form)."""
        snap = self.snapshot
        ids = snap.bucket_ids(objects)
        bucket = snap.buckets[int(ids[0])]
        if bool((ids == ids[0]).all()):
            return Batch(bucket.client, objects=items, bucket=bucket, cont_on_err=False), True
        if items is not None:
            items = [snap.object(int(i)) for i in objects]
        return Batch(bucket.client, objects=items, cont_on_err=False), False

    def _fetch_objects(self, samples: npt.NDArray[Any]) -> list[tuple[str, bytes]]:
        snap = self.snapshot
        objects = np.asarray(samples, dtype=np.int64)
        names = [snap.object_name(int(i)) for i in objects]
        batch, _ = self._new_batch(objects, names)
        result: Any = batch.get()
        items = [(info.obj_name, data) for info, data in result]
        if len(items) != len(names):
            raise RuntimeError(f"GetBatch returned {len(items)} of {len(names)} objects")
        return items

    def _fetch_shard_samples(self, samples: npt.NDArray[Any]) -> list[tuple[str, dict[str, bytes]]]:
        snap = self.snapshot
        shards = snap.object_of_sample(np.asarray(samples, dtype=np.int64))
        batch, by_name = self._new_batch(shards)
        layout: list[tuple[str, list[str]]] = []  # per sample: key, fields
        targets: list[Any] = []  # per file: its shard (name or Object), and its path in it
        archpaths: list[str] = []
        for sample, shard in zip(samples, shards, strict=True):
            members = snap.sample_members(int(sample))
            target: Any = snap.object_name(int(shard)) if by_name else snap.object(int(shard))
            parsed = [self.key(member) for member in members]
            fields = [p[1] if p else member for p, member in zip(parsed, members, strict=True)]
            layout.append((parsed[0][0] if parsed[0] else members[0], fields))
            targets += [target] * len(members)
            archpaths += members
        batch._add_plain(targets, archpaths)  # snapshot names and member paths: no checks due
        result: Any = batch.get()
        contents = [data for _, data in result]
        expected = sum(len(fields) for _, fields in layout)
        if len(contents) != expected:
            raise RuntimeError(f"GetBatch returned {len(contents)} of {expected} files")
        out: list[tuple[str, dict[str, bytes]]] = []
        j = 0
        for key, fields in layout:
            out.append((key, dict(zip(fields, contents[j : j + len(fields)], strict=True))))
            j += len(fields)
        return out

    def _has_remote(self) -> bool:
        return any(b.provider != Provider.AIS for b in self.snapshot.buckets)

    def _prefetching(
        self, spans: Iterator[tuple[int, npt.NDArray[Any]]]
    ) -> Iterator[tuple[int, npt.NDArray[Any]]]:
        """`spans` unchanged, pulled up to two windows of `prefetch_steps` ahead: each window
        gets one prefetch job (remote buckets only) when it is pulled, so the next window is
        being fetched into the cluster while this one is read."""
        ahead: deque[tuple[int, npt.NDArray[Any]]] = deque()
        window: list[tuple[int, npt.NDArray[Any]]] = []
        exhausted = False
        while True:
            while not exhausted and len(ahead) < 2 * self.prefetch_steps:
                span = next(spans, None)
                if span is None:
                    exhausted = True
                    break
                ahead.append(span)
                window.append(span)
                if len(window) == self.prefetch_steps:
                    self._prefetch(window)
                    window = []
            if exhausted and window:
                self._prefetch(window)
                window = []
            if not ahead:
                return
            yield ahead.popleft()

    def _prefetch(self, window: list[tuple[int, npt.NDArray[Any]]]) -> None:
        snap = self.snapshot
        samples = np.concatenate([samples for _, samples in window]).astype(np.int64)
        objects = np.unique(snap.object_of_sample(samples))
        by_bucket: dict[int, list[str]] = {}
        buckets = snap.buckets
        for i in objects:
            bucket = snap.bucket_of(int(i))
            if bucket.provider == Provider.AIS:
                continue
            by_bucket.setdefault(buckets.index(bucket), []).append(snap.object_name(int(i)))
        for b, names in by_bucket.items():
            try:
                buckets[b].objects(obj_names=names).prefetch(continue_on_error=True)
            except Exception as err:  # a hint: reading works without it
                logger.warning("prefetch of %d objects failed: %s", len(names), err)


def _groups(items: Iterator[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last may be shorter)."""
    while group := list(islice(items, size)):
        yield group


def _counted(iterator: Iterator[T], progress: _Progress) -> Iterator[T]:
    for item in iterator:
        progress.steps += 1
        yield item
    progress.finished = True


def _check_same_layout(state: Mapping[str, Any], consumer: Consumer, batch_size: int) -> None:
    saved = (
        state["rank"],
        state["world_size"],
        state["worker_id"],
        state["num_workers"],
        state["batch_size"],
    )
    now = (
        consumer.rank,
        consumer.world_size,
        consumer.worker_id,
        consumer.num_workers,
        batch_size,
    )
    if saved != now:
        raise ValueError(
            f"a DataLoader worker's state (rank, world_size, worker, workers, batch_size) = "
            f"{saved} cannot resume reader {now}: for another layout, take the run's checkpoint "
            "with PlanCheckpoint.from_loader_state(loader.state_dict()) and load that"
        )
