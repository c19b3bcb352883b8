"""Epoch plans: one deterministic global order of samples per epoch, dealt to ranks by global
position, and checkpoints of a few bytes that resume on any number of ranks and workers.

Three values and the arithmetic between them:

- `DatasetSnapshot`: what the dataset is - its objects (names, sizes, versions, checksums) and,
  for shards, the samples inside each shard - with a fingerprint. It can be saved next to the
  checkpoints and compared with a fresh listing (`check_unchanged`) to name what changed.
- `EpochPlan`: from a snapshot's sample counts, a seed, a shuffle mode and the epoch, the global
  order: `order[p]` is the sample at position `p`. Shuffle modes: `"none"` (snapshot order),
  `"full"` (a permutation of all samples, for objects) and `"shards"` (the shards in a shuffled
  order, then the samples shuffled within consecutive windows of `window` positions; a shard's
  samples therefore sit within `max(shard size, window) + window` consecutive positions, and all
  readers together fetch each shard during one short stretch of the epoch).
- `PlanCheckpoint`: `{plan, dataset, samples, epoch, consumed}` - the plan's fingerprint and how
  many positions of the epoch were delivered, globally. Identical on every rank.

The layout (pure arithmetic, see `step_span`): from the resume point `start`, step `s` covers
positions `start + s*G ... start + (s+1)*G` with `G = world_size * batch_size`; rank `r` takes the
`r`-th of `world_size` contiguous slices of the step (exactly `batch_size` positions in a full
step; the last, short step is shared as evenly as possible). DataLoader worker `w` of `W` makes
the steps `w, w+W, ...` of its rank, which is the order a DataLoader collects them in. Nothing in
a checkpoint depends on world size, workers or batch size, so a resume may change all three: the
rest of the epoch, positions `consumed ... samples`, is dealt with the new layout.

Example:
    >>> plan = EpochPlan.build(10, seed=1, epoch=0, shuffle="full")
    >>> sorted(plan.order.tolist()) == list(range(10))
    True
    >>> step_span(10, start=0, step=1, rank=1, world_size=2, batch_size=3)
    (8, 10)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from aistore.pytorch._listing import source_prefixes
from aistore.pytorch._shards import webdataset_key
from aistore.sdk.ais_source import AISSource
from aistore.sdk.bucket import Bucket
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object import Object
from aistore.sdk.request_client import RequestClient

# AIS apc.EntryInArch: a list entry that is a file inside the archive listed before it.
_ENTRY_IN_ARCHIVE = 1 << 7

__all__ = [
    "DatasetChangedError",
    "DatasetSnapshot",
    "EpochPlan",
    "PlanCheckpoint",
    "ShuffleMode",
    "SnapshotDiff",
    "num_steps",
    "reader_steps",
    "step_span",
]

ShuffleMode = Literal["none", "full", "shards"]
_SHUFFLE_MODES: tuple[str, ...] = ("none", "full", "shards")

# The format of `PlanCheckpoint.to_dict()`; a different number is refused on load.
_CHECKPOINT_VERSION = 1
# Samples per window of the "shards" shuffle, unless given.
DEFAULT_WINDOW = 1024
# How many changed names an error message spells out per kind.
_NAMES_SHOWN = 5

SampleKey = Callable[[str], "tuple[str, str] | None"]


class DatasetChangedError(ValueError):
    """The dataset is not the one a checkpoint or snapshot was taken of.

    `added`, `removed` and `rewritten` hold the object names that changed when they are known
    (a comparison of two snapshots); a checkpoint alone only knows that the fingerprint differs.

    Example:
        >>> str(DatasetChangedError("dataset changed", added=["a"]))
        'dataset changed'
    """

    def __init__(
        self,
        message: str,
        added: Sequence[str] = (),
        removed: Sequence[str] = (),
        rewritten: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.added = list(added)
        self.removed = list(removed)
        self.rewritten = list(rewritten)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.added, self.removed, self.rewritten))


@dataclass(frozen=True)
class SnapshotDiff:
    """What differs between two snapshots, by object name (sorted).

    Example:
        >>> SnapshotDiff(added=("b",), removed=(), rewritten=("a",)).describe()
        '1 object added (b), 1 rewritten (a)'
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    rewritten: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.rewritten)

    def describe(self) -> str:
        """One line naming the changes (the first few names of each kind)."""
        parts: list[str] = []
        for kind, names in (
            ("added", self.added),
            ("removed", self.removed),
            ("rewritten", self.rewritten),
        ):
            if not names:
                continue
            shown = ", ".join(names[:_NAMES_SHOWN]) + (", ..." if len(names) > _NAMES_SHOWN else "")
            noun = "" if parts else ("object " if len(names) == 1 else "objects ")
            parts.append(f"{len(names)} {noun}{kind} ({shown})")
        return ", ".join(parts) if parts else "no change"


class _Strings:
    """Many strings as one UTF-8 blob and an array of end offsets (compact, picklable)."""

    __slots__ = ("blob", "ends")

    def __init__(self, blob: bytes, ends: npt.NDArray[np.int64]) -> None:
        self.blob = blob
        self.ends = ends

    @classmethod
    def of(cls, strings: Iterable[str]) -> _Strings:
        encoded = [s.encode() for s in strings]
        ends = np.cumsum(np.fromiter((len(e) for e in encoded), np.int64, len(encoded)))
        return cls(b"".join(encoded), ends.astype(np.int64))

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> str:
        start = int(self.ends[i - 1]) if i else 0
        return self.blob[start : int(self.ends[i])].decode()

    def all(self) -> list[str]:
        return [self[i] for i in range(len(self))]


class DatasetSnapshot:
    """The dataset an epoch plan is made of: its objects, in listing order, with their sizes,
    versions and checksums, and - for a dataset of shards - the samples inside each shard.

    A sample is an object (objects mode) or, in shards mode, the files of one shard that share
    a key (`key`, WebDataset's convention by default), in the order the server lists them. The
    samples of a shard are consecutive in the snapshot. Memory: a few flat arrays, about the
    size of the names.

    `fingerprint` digests everything above: two snapshots with the same fingerprint describe the
    same samples. Save a snapshot next to the training checkpoints (`save`) to resume over the
    same names later or to learn what changed (`check_unchanged`).

    Example:
        >>> snap = DatasetSnapshot.from_sources(client.bucket("imgs"))  # doctest: +SKIP
        >>> len(snap), snap.num_objects, snap.fingerprint  # doctest: +SKIP
        (10000, 10000, '6c0f2d0b5e8f1a47')

    Not built directly: use `from_sources` or `load`.
    """

    def __init__(
        self,
        buckets: list[Bucket],
        names: _Strings,
        bucket_ids: npt.NDArray[np.int32],
        sizes: npt.NDArray[np.int64],
        tags: _Strings,
        shard_first: npt.NDArray[np.int64] | None = None,
        members: _Strings | None = None,
        sample_ends: npt.NDArray[np.int64] | None = None,
    ) -> None:
        self._buckets = buckets
        self._names = names
        self._bucket_ids = bucket_ids
        self._sizes = sizes
        self._tags = tags  # "version:checksum" per object
        # Shards mode: samples of object i are [shard_first[i], shard_first[i+1]); the member
        # files of sample j are members[sample_ends[j-1]:sample_ends[j]].
        self._shard_first = shard_first
        self._members = members
        self._sample_ends = sample_ends
        self._fingerprint: str | None = None

    # --- building ---------------------------------------------------------------------------

    @classmethod
    def from_sources(
        cls,
        sources: AISSource | Sequence[AISSource],
        prefix_map: Mapping[Any, str | Sequence[str] | None] | None = None,
        *,
        shards: bool = False,
        key: SampleKey = webdataset_key,
    ) -> DatasetSnapshot:
        """List `sources` (source order, then prefix order, then listing order) into a snapshot.

        Buckets are listed with one list-objects request per page (names, sizes, versions,
        checksums); other sources through `list_all_objects_iter`. With `shards`, each object
        is a shard and the server lists its files too: a bucket's in the same pages (each
        archive's files right after it), another source's with one request per shard; `key`
        maps a file name to `(sample key, field)` or None to skip it.

        Raises:
            ValueError: no source.
            aistore.sdk.errors.AISError: a listing failed.
        """
        source_list = [sources] if isinstance(sources, AISSource) else list(sources)
        if not source_list:
            raise ValueError("DatasetSnapshot needs at least one source")
        prefixes = prefix_map or {}
        buckets: list[Bucket] = []
        bucket_index: dict[tuple[str, str, str], int] = {}
        names: list[str] = []
        bucket_ids: list[int] = []
        sizes: list[int] = []
        tags: list[str] = []

        def bucket_id(bucket: Bucket) -> int:
            ident = _bucket_ident(bucket)
            if ident not in bucket_index:
                bucket_index[ident] = len(buckets)
                buckets.append(bucket)
            return bucket_index[ident]

        # Shards mode, bucket sources: the files of object i as its listing gave them.
        listed_files: dict[int, list[str]] = {}
        for source in source_list:
            for prefix in source_prefixes(prefixes, source):
                if isinstance(source, Bucket):
                    bid = bucket_id(source)
                    shard = ""  # the last archive listed: its files follow it
                    for entry in source.list_objects_iter(
                        prefix=prefix,
                        props="name,size,version,checksum",
                        flags=[ListObjectFlag.ARCH_DIR] if shards else None,
                    ):
                        if entry.f & _ENTRY_IN_ARCHIVE:
                            if shard and entry.n.startswith(shard):
                                listed_files[len(names) - 1].append(entry.n[len(shard) :])
                            continue
                        if shards:
                            shard = entry.n + "/"
                            listed_files[len(names)] = []
                        names.append(entry.n)
                        bucket_ids.append(bid)
                        sizes.append(entry.s)
                        tags.append(f"{entry.v}:{entry.cs}")
                    continue
                for obj in source.list_all_objects_iter(
                    prefix=prefix, props="name,size,version,checksum"
                ):
                    props = obj.props_cached
                    names.append(obj.name)
                    bucket_ids.append(bucket_id(_bucket_of(obj)))
                    sizes.append(props.size if props is not None else -1)
                    tag = f"{props.obj_version}:{props.checksum_value}" if props else ":"
                    tags.append(tag)
        snap = cls(
            buckets,
            _Strings.of(names),
            np.asarray(bucket_ids, dtype=np.int32),
            np.asarray(sizes, dtype=np.int64),
            _Strings.of(tags),
        )
        if shards:
            snap._list_shards(key, listed_files)
        return snap

    def _shard_files(self, i: int) -> list[str]:
        """The files of shard `i`, from one ARCH_DIR list request."""
        inside = self._names[i] + "/"
        bucket = self._buckets[int(self._bucket_ids[i])]
        return [
            entry.n[len(inside) :]
            for entry in bucket.list_objects_iter(
                prefix=inside[:-1], props="name", flags=[ListObjectFlag.ARCH_DIR]
            )
            if entry.f & _ENTRY_IN_ARCHIVE and entry.n.startswith(inside)
        ]

    def _list_shards(self, key: SampleKey, listed_files: Mapping[int, list[str]]) -> None:
        """Fill the shards-mode arrays from each shard's files: those in `listed_files`, else
        one list request per shard."""
        first = [0]
        members: list[str] = []
        sample_ends: list[int] = []
        for i in range(self.num_objects):
            files = listed_files.get(i)
            keys: dict[str, list[str]] = {}
            for member in files if files is not None else self._shard_files(i):
                parsed = key(member)
                if parsed is not None:
                    keys.setdefault(parsed[0], []).append(member)
            for sample_files in keys.values():
                members.extend(sample_files)
                sample_ends.append(len(members))
            first.append(len(sample_ends))
        self._shard_first = np.asarray(first, dtype=np.int64)
        self._members = _Strings.of(members)
        self._sample_ends = np.asarray(sample_ends, dtype=np.int64)
        self._fingerprint = None

    # --- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """Samples in the dataset."""
        if self._sample_ends is not None:
            return len(self._sample_ends)
        return len(self._names)

    def __repr__(self) -> str:
        kind = "shards" if self.is_sharded else "objects"
        return (
            f"DatasetSnapshot({len(self)} samples in {self.num_objects} {kind}, "
            f"fingerprint={self.fingerprint})"
        )

    @property
    def num_objects(self) -> int:
        """Objects (shards, in shards mode) in the dataset."""
        return len(self._names)

    @property
    def is_sharded(self) -> bool:
        """Whether samples are files inside shards."""
        return self._sample_ends is not None

    @property
    def buckets(self) -> list[Bucket]:
        """The buckets the objects are in (each once)."""
        return list(self._buckets)

    def object_name(self, i: int) -> str:
        """The name of object (shard) `i`."""
        return self._names[i]

    def object(self, i: int) -> Object:
        """An SDK `Object` for object (shard) `i`."""
        return self._buckets[int(self._bucket_ids[i])].object(self._names[i])

    def bucket_of(self, i: int) -> Bucket:
        """The bucket of object (shard) `i`."""
        return self._buckets[int(self._bucket_ids[i])]

    def bucket_ids(self, objects: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
        """The index in `buckets` of each object (shard) in `objects`."""
        return self._bucket_ids[objects]

    def shard_counts(self) -> npt.NDArray[np.int64]:
        """Samples per object, in object order (all ones in objects mode)."""
        if self._shard_first is None:
            return np.ones(self.num_objects, dtype=np.int64)
        return np.diff(self._shard_first)

    def object_of_sample(self, samples: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The object (shard) index of each sample in `samples`."""
        if self._shard_first is None:
            return np.asarray(samples, dtype=np.int64)
        found = np.searchsorted(self._shard_first, samples, side="right") - 1
        return found.astype(np.int64)

    def sample_members(self, sample: int) -> list[str]:
        """Shards mode: the file names inside the shard that make sample `sample`.

        REQUIRES: `is_sharded`.
        """
        assert self._members is not None and self._sample_ends is not None
        start = int(self._sample_ends[sample - 1]) if sample else 0
        return [self._members[j] for j in range(start, int(self._sample_ends[sample]))]

    @property
    def fingerprint(self) -> str:
        """16 hex digits over buckets, names, sizes, versions, checksums and shard contents."""
        if self._fingerprint is None:
            digest = hashlib.blake2b(digest_size=8)
            digest.update(json.dumps([_bucket_ident(b) for b in self._buckets]).encode())
            for strings in (self._names, self._tags, self._members):
                if strings is not None:
                    digest.update(strings.blob)
                    digest.update(strings.ends.tobytes())
            for array in (self._bucket_ids, self._sizes, self._shard_first, self._sample_ends):
                if array is not None:
                    digest.update(array.tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    # --- comparing, saving ------------------------------------------------------------------

    def _by_name(self) -> dict[tuple[str, str, str, str], tuple[int, str]]:
        return {
            (*_bucket_ident(self._buckets[int(b)]), self._names[i]): (
                int(self._sizes[i]),
                self._tags[i],
            )
            for i, b in enumerate(self._bucket_ids)
        }

    def diff(self, current: DatasetSnapshot) -> SnapshotDiff:
        """What changed from this snapshot to `current`, by object name: added, removed, and
        rewritten (another size, version or checksum)."""
        then, now = self._by_name(), current._by_name()
        rewritten = [k for k, v in then.items() if k in now and now[k] != v]
        if not rewritten and self.is_sharded and self.fingerprint != current.fingerprint:
            rewritten = [k for k in then if k in now]  # the same objects, other shard listing
        return SnapshotDiff(
            added=tuple(sorted(_label(k) for k in now.keys() - then.keys())),
            removed=tuple(sorted(_label(k) for k in then.keys() - now.keys())),
            rewritten=tuple(sorted(_label(k) for k in rewritten)),
        )

    def check_unchanged(self, current: DatasetSnapshot) -> None:
        """Raise unless `current` (a fresh listing) describes the same samples.

        Raises:
            DatasetChangedError: naming the objects added, removed or rewritten since this
                snapshot (its `added`/`removed`/`rewritten` hold all of them).
        """
        if current.fingerprint == self.fingerprint:
            return
        diff = self.diff(current)
        what = diff.describe() if diff else "the same objects in another order"
        raise DatasetChangedError(
            f"the dataset changed since snapshot {self.fingerprint}: {what}. Resume over the "
            "saved snapshot's names (AISPlanDataset(saved_snapshot, ...)) or start a new plan",
            diff.added,
            diff.removed,
            diff.rewritten,
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the snapshot to `path` (numpy `.npz`; the buckets by provider, namespace and
        name, not their client). Written to a temporary name and renamed into place."""
        arrays: dict[str, Any] = {
            "meta": np.frombuffer(
                json.dumps(
                    {"version": 1, "buckets": [_bucket_ident(b) for b in self._buckets]}
                ).encode(),
                dtype=np.uint8,
            ),
            "names": np.frombuffer(self._names.blob, dtype=np.uint8),
            "name_ends": self._names.ends,
            "tags": np.frombuffer(self._tags.blob, dtype=np.uint8),
            "tag_ends": self._tags.ends,
            "bucket_ids": self._bucket_ids,
            "sizes": self._sizes,
        }
        if self._members is not None:
            assert self._shard_first is not None and self._sample_ends is not None
            arrays.update(
                members=np.frombuffer(self._members.blob, dtype=np.uint8),
                member_ends=self._members.ends,
                shard_first=self._shard_first,
                sample_ends=self._sample_ends,
            )
        tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: str | os.PathLike[str], client: Any) -> DatasetSnapshot:
        """Read a snapshot written by `save`; its buckets are bound to `client` (a `Client`).

        Raises:
            ValueError: not a snapshot file of a known version.
        """
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("version") != 1:
                raise ValueError(f"{os.fspath(path)}: not a DatasetSnapshot (version {meta})")
            buckets = [
                client.bucket(name, provider=provider, namespace=_namespace(ns))
                for provider, ns, name in meta["buckets"]
            ]
            snap = cls(
                buckets,
                _Strings(bytes(data["names"]), data["name_ends"].astype(np.int64)),
                data["bucket_ids"].astype(np.int32),
                data["sizes"].astype(np.int64),
                _Strings(bytes(data["tags"]), data["tag_ends"].astype(np.int64)),
            )
            if "members" in data:
                snap._members = _Strings(bytes(data["members"]), data["member_ends"])
                snap._shard_first = data["shard_first"].astype(np.int64)
                snap._sample_ends = data["sample_ends"].astype(np.int64)
        return snap


def _bucket_ident(bucket: Bucket) -> tuple[str, str, str]:
    ns = bucket.namespace
    return (bucket.provider.value, f"{ns.uuid}#{ns.name}" if ns else "", bucket.name)


def _namespace(text: str) -> Namespace | None:
    if not text:
        return None
    uuid, _, name = text.partition("#")
    return Namespace(uuid=uuid, name=name)


def _label(key: tuple[str, str, str, str]) -> str:
    provider, _, bucket, name = key
    return f"{provider}://{bucket}/{name}"


def _bucket_of(obj: Object) -> Bucket:
    client: RequestClient = obj._client
    details = obj._bck_details
    return Bucket(details.name, client, details.provider)


class EpochPlan:
    """The global order of one epoch: `order[p]` is the snapshot sample at position `p`.

    A pure function of (sample counts per shard, shuffle mode, window, seed, epoch): every rank
    and worker builds the same plan without talking to the others. Memory: one int32 array of
    the sample count (int64 beyond 2**31 samples), plus temporaries of the same size while
    building.

    Example:
        >>> plan = EpochPlan.build(6, seed=0, epoch=3, shuffle="shards", shard_counts=[3, 3],
        ...                        window=3)
        >>> sorted(plan.order[:3].tolist()) in ([0, 1, 2], [3, 4, 5])
        True
    """

    __slots__ = ("epoch", "fingerprint", "order")

    def __init__(self, order: npt.NDArray[np.integer[Any]], fingerprint: str, epoch: int) -> None:
        self.order = order
        self.fingerprint = fingerprint
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.order)

    @classmethod
    def build(
        cls,
        num_samples: int,
        *,
        seed: int,
        epoch: int,
        shuffle: ShuffleMode = "full",
        shard_counts: Sequence[int] | npt.NDArray[np.int64] | None = None,
        window: int = DEFAULT_WINDOW,
        dataset: str = "",
    ) -> EpochPlan:
        """Build the plan of `epoch`.

        Args:
            num_samples: samples in the dataset.
            seed, epoch: non-negative integers; the order depends on nothing else.
            shuffle: "none", "full" or "shards" (see the module docstring).
            shard_counts: samples per shard, in snapshot order (sum = `num_samples`); "shards"
                only (without it, every sample is its own shard).
            window: positions per window of the "shards" shuffle (1 = shards in shuffled order,
                samples in shard order).
            dataset: the snapshot's fingerprint, folded into the plan's.

        Raises:
            ValueError: an unknown mode, negative seed or epoch, window < 1, or shard counts
                that do not add up.
        """
        if shuffle not in _SHUFFLE_MODES:
            raise ValueError(f"shuffle must be one of {_SHUFFLE_MODES}, got {shuffle!r}")
        if seed < 0 or epoch < 0:
            raise ValueError(f"seed and epoch must be non-negative, got {seed}, {epoch}")
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        dtype = np.int32 if num_samples < 2**31 else np.int64
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, epoch])))
        order: npt.NDArray[np.integer[Any]]
        if shuffle == "none":
            order = np.arange(num_samples, dtype=dtype)
        elif shuffle == "full":
            order = np.arange(num_samples, dtype=dtype)
            rng.shuffle(order)
        else:
            order = _shard_order(num_samples, shard_counts, window, rng, dtype)
        recipe = f"{dataset}|{num_samples}|{shuffle}|{seed}|{window if shuffle == 'shards' else 0}"
        fingerprint = hashlib.blake2b(recipe.encode(), digest_size=8).hexdigest()
        return cls(order, fingerprint, epoch)

    @classmethod
    def for_snapshot(
        cls,
        snapshot: DatasetSnapshot,
        *,
        seed: int,
        epoch: int,
        shuffle: ShuffleMode = "full",
        window: int = DEFAULT_WINDOW,
    ) -> EpochPlan:
        """The plan of `epoch` over `snapshot`'s samples (see `build`)."""
        counts = snapshot.shard_counts() if snapshot.is_sharded else None
        return cls.build(
            len(snapshot),
            seed=seed,
            epoch=epoch,
            shuffle=shuffle,
            shard_counts=counts,
            window=window,
            dataset=snapshot.fingerprint,
        )


def _shard_order(
    n: int,
    shard_counts: Sequence[int] | npt.NDArray[np.int64] | None,
    window: int,
    rng: np.random.Generator,
    dtype: Any,
) -> npt.NDArray[np.integer[Any]]:
    """Shards in a random order, each shard's samples in snapshot order, then the samples
    shuffled within consecutive windows of `window` positions."""
    counts = np.ones(n, np.int64) if shard_counts is None else np.asarray(shard_counts, np.int64)
    if int(counts.sum()) != n or (counts < 0).any():
        raise ValueError(f"shard counts add up to {int(counts.sum())}, not {n} samples")
    first = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    shards = rng.permutation(len(counts))
    counts_p = counts[shards]
    # order[p] = first[shard at p] + (p - where that shard starts in the new order)
    starts_p = np.zeros(len(counts_p), dtype=np.int64)
    np.cumsum(counts_p[:-1], out=starts_p[1:])
    order = np.repeat((first[shards] - starts_p).astype(dtype), counts_p)
    order += np.arange(n, dtype=dtype)
    if window > 1:
        full = n - n % window
        if full:
            rows = order[:full].reshape(-1, window)
            rows[...] = rng.permuted(rows, axis=1)
        if n - full > 1:
            order[full:] = rng.permutation(order[full:])
    return order


def num_steps(n: int, start: int, world_size: int, batch_size: int) -> int:
    """Steps left in an epoch of `n` positions resumed at `start` (the last may be short)."""
    left = max(0, n - start)
    per_step = world_size * batch_size
    return -(-left // per_step)


def step_span(
    n: int, start: int, step: int, rank: int, world_size: int, batch_size: int
) -> tuple[int, int]:
    """The positions `[a, b)` rank `rank` delivers at step `step` of an epoch of `n` positions
    resumed at `start` (see the module docstring). Empty (`a == b`) past the end.

    REQUIRES: `0 <= rank < world_size`, `batch_size >= 1`, `step >= 0`.
    """
    per_step = world_size * batch_size
    base = start + step * per_step
    size = max(0, min(per_step, n - base))
    return base + rank * size // world_size, base + (rank + 1) * size // world_size


def reader_steps(total: int, worker_id: int, num_workers: int, steps_done: int = 0) -> range:
    """The steps DataLoader worker `worker_id` of `num_workers` makes, of `total` steps:
    `worker_id, worker_id + num_workers, ...`, or, resuming the same layout after that worker
    handed out step `steps_done - 1`, the ones after it.

    Example:
        >>> list(reader_steps(7, 1, 3)), list(reader_steps(7, 1, 3, steps_done=2))
        ([1, 4], [4])
    """
    first = steps_done - 1 + num_workers if steps_done else worker_id
    return range(first, total, num_workers)


@dataclass(frozen=True)
class PlanCheckpoint:
    """Where a run is in its epoch plan: the same few bytes on every rank.

    `consumed` counts the positions of epoch `epoch` delivered across all ranks; resuming hands
    out positions `consumed ... samples` with whatever world size, worker count and batch size
    the new run has.

    Example:
        >>> ckpt = PlanCheckpoint(plan="ab", dataset="cd", samples=10, epoch=2, consumed=6)
        >>> PlanCheckpoint.from_dict(ckpt.to_dict()) == ckpt
        True
    """

    plan: str
    dataset: str
    samples: int
    epoch: int
    consumed: int

    def to_dict(self) -> dict[str, Any]:
        """The checkpoint as plain values (for `torch.save`, JSON, ...)."""
        return {
            "ais_plan": _CHECKPOINT_VERSION,
            "plan": self.plan,
            "dataset": self.dataset,
            "samples": self.samples,
            "epoch": self.epoch,
            "consumed": self.consumed,
        }

    @classmethod
    def from_dict(cls, state: Mapping[str, Any]) -> PlanCheckpoint:
        """Read `to_dict()`'s form back.

        Raises:
            ValueError: not a checkpoint of this version, or a per-worker state (see
                `from_loader_state`).
        """
        if state.get("ais_plan") != _CHECKPOINT_VERSION:
            raise ValueError(f"not an epoch-plan checkpoint: {dict(state)!r}")
        if state.get("consumed") is None:
            raise ValueError(
                "this is one DataLoader worker's state, not the run's position: take the "
                "checkpoint with PlanCheckpoint.from_loader_state(loader.state_dict())"
            )
        return cls(
            plan=str(state["plan"]),
            dataset=str(state["dataset"]),
            samples=int(state["samples"]),
            epoch=int(state["epoch"]),
            consumed=int(state["consumed"]),
        )

    @classmethod
    def from_loader_state(cls, state: Mapping[str, Any]) -> PlanCheckpoint:
        """The run's checkpoint from a torchdata `StatefulDataLoader.state_dict()` (or any
        structure holding the plan dataset's states): with workers, each holds the steps its
        worker delivered; the run has delivered every step below the highest of them, plus the
        batches handed out since the loader's last snapshot (`_steps_since_snapshot`).

        Raises:
            ValueError: no plan dataset state in `state`, or states of different plans.
        """
        found = list(_find_states(state))
        if not found:
            raise ValueError("no epoch-plan dataset state in this loader state")
        whole = [s for s in found if s.get("consumed") is not None]
        if whole:
            return cls.from_dict(whole[0])
        keys = {
            (s["plan"], s["epoch"], s["start"], s["world_size"], s["batch_size"]) for s in found
        }
        if len(keys) != 1:
            raise ValueError(f"worker states of different plans or layouts: {sorted(keys)}")
        s = found[0]
        # Batches handed out since the loader's last snapshot of its workers' states
        # (StatefulDataLoader(snapshot_every_n_steps=k)): delivered in order after them.
        since = state.get("_steps_since_snapshot", 0)
        steps = max(int(w["steps"]) for w in found) + (since if isinstance(since, int) else 0)
        consumed = min(
            int(s["samples"]), int(s["start"]) + steps * s["world_size"] * s["batch_size"]
        )
        return cls(s["plan"], s["dataset"], int(s["samples"]), int(s["epoch"]), consumed)


def _find_states(state: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(state, Mapping):
        if state.get("ais_plan") == _CHECKPOINT_VERSION:
            yield state
            return
        for value in state.values():
            yield from _find_states(value)
    elif isinstance(state, list | tuple):
        for value in state:
            yield from _find_states(value)
