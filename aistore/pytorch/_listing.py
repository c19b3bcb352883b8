"""A compact, immutable listing of the objects of a dataset's sources.

A list of SDK `Object`s costs about a kilobyte per object in Python objects, and DataLoader
workers forked from the process that holds it copy those pages as soon as they touch the
reference counts (pytorch/pytorch#13246). `ObjectListing` keeps the same information in four
flat buffers: the names as one UTF-8 `bytes`, their end offsets, the sizes (-1 when unknown) and,
per object, an index into a small table of buckets. Workers read it without writing to it, it
pickles as a few large buffers (spawn), and `Object`s are built only on demand.

Layout (entry `i`):
    name    = blob[ends[i-1] : ends[i]].decode()       (ends[-1] taken as 0)
    size    = sizes[i]                                 (-1: not listed, HEAD to learn it)
    bucket  = buckets[bucket_ids[i]]                   (RequestClient, BucketDetails)

Example:
    >>> listing = list_sources([bucket], {})  # doctest: +SKIP
    >>> len(listing), listing.name(0), listing.object(0).props_cached.size  # doctest: +SKIP
    (1000, 'train/000.jpg', 5123)
"""

from __future__ import annotations

import hashlib
import operator
from array import array
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from aistore.sdk.ais_source import AISSource
from aistore.sdk.bucket import Bucket
from aistore.sdk.multiobj.object_group import ObjectGroup
from aistore.sdk.obj.object import BucketDetails, Object
from aistore.sdk.obj.object_props import ObjectProps
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import BucketEntry

__all__ = ["ListingBuilder", "ObjectListing", "list_sources", "source_prefixes"]

# Keyed by source instances. `Any`, not `AISSource`: a Mapping is invariant in its key type, and
# users pass e.g. `dict[Bucket, str]`.
PrefixMap = Mapping[Any, str | Sequence[str] | None]

# Concurrent HEADs when sizes of unlisted objects (object groups) are needed.
_HEAD_THREADS = 16


def source_prefixes(prefix_map: PrefixMap, source: AISSource) -> list[str]:
    """The prefixes to list `source` with: `[""]` when it has no entry (or `None`), one prefix,
    or the given list in order (keys match by identity, as upstream: sources define no `__eq__`)."""
    prefixes = prefix_map.get(source)
    if prefixes is None:
        return [""]
    if isinstance(prefixes, str):
        return [prefixes]
    return list(prefixes)


class ObjectListing:
    """The objects of a dataset in index order, in flat buffers (see the module docstring).

    Read-only after construction except `fill_sizes`, which only replaces unknown sizes.

    Example:
        >>> listing.name(-1), int(listing.sizes[0])  # doctest: +SKIP
        ('val/099.jpg', 5123)
    """

    __slots__ = ("_blob", "_bucket_ids", "_buckets", "_ends", "_fingerprint", "_sizes")

    def __init__(
        self,
        blob: bytes,
        ends: npt.NDArray[np.int64],
        sizes: npt.NDArray[np.int64],
        bucket_ids: npt.NDArray[np.int32],
        buckets: list[tuple[RequestClient, BucketDetails]],
    ) -> None:
        self._blob = blob
        self._ends = ends
        self._sizes = sizes
        self._bucket_ids = bucket_ids
        self._buckets = buckets
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        return len(self._ends)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self._blob, self._ends, self._sizes, self._bucket_ids, self._buckets)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._blob, self._ends, self._sizes, self._bucket_ids, self._buckets = state
        self._fingerprint = None

    def _check(self, index: int) -> int:
        n = len(self._ends)
        index = operator.index(index)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"listing index {index} out of range [0, {n})")
        return index

    def name(self, index: int) -> str:
        """Name of entry `index` (negative counts from the end).

        Raises:
            IndexError: out of range.
        """
        i = self._check(index)
        start = int(self._ends[i - 1]) if i else 0
        return self._blob[start : int(self._ends[i])].decode()

    @property
    def sizes(self) -> npt.NDArray[np.int64]:
        """Sizes in bytes, -1 where not known (read-only view)."""
        view: npt.NDArray[np.int64] = self._sizes.view()
        view.flags.writeable = False
        return view

    def object(self, index: int) -> Object:
        """A new SDK `Object` for entry `index`; its `props_cached` holds name and size (as a
        "name,size" listing gives them), or is None when the size is not known."""
        i = self._check(index)
        return _make_object(
            self._buckets[int(self._bucket_ids[i])], self.name(i), int(self._sizes[i])
        )

    def fill_sizes(self) -> None:
        """Learn the unknown sizes with concurrent HEADs (object groups list names only).

        Raises:
            aistore.sdk.errors.AISError: an object does not exist (as upstream's listing would).
        """
        missing = np.flatnonzero(self._sizes < 0)
        if not len(missing):
            return

        def head(i: int) -> int:
            props: ObjectProps = self.object(int(i)).head("name,size")
            return props.size

        with ThreadPoolExecutor(min(_HEAD_THREADS, len(missing))) as pool:
            sizes = list(pool.map(head, missing))
        self._sizes[missing] = np.asarray(sizes, dtype=np.int64)

    def ensure_pool_size(self, connections: int) -> None:
        """Let each bucket's HTTP session keep `connections` connections (one per reading
        thread)."""
        for client in {id(c): c for c, _ in self._buckets}.values():
            client.session_manager.ensure_pool_size(connections)

    def fingerprint(self) -> str:
        """A short digest of the names in order: two listings with the same fingerprint index
        the same objects (computed once)."""
        if self._fingerprint is None:
            digest = hashlib.blake2b(digest_size=8)
            digest.update(self._blob)
            digest.update(self._ends.tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint


class ListingBuilder:
    """Appends objects one at a time; `finish()` freezes them into an `ObjectListing`.
    `name(i)` works while building, so a caller may consume the listing as it grows."""

    def __init__(self) -> None:
        self._blob = bytearray()
        self._ends = array("q")
        self._sizes = array("q")
        self._bucket_ids = array("i")
        self._buckets: list[tuple[RequestClient, BucketDetails]] = []
        self._bucket_index: dict[tuple[Any, ...], int] = {}

    def __len__(self) -> int:
        return len(self._ends)

    def bucket_id(self, client: RequestClient, details: BucketDetails) -> int:
        """The table index of a bucket (added on first sight)."""
        key = (
            id(client),
            details.name,
            str(details.provider),
            details.path,
            tuple(sorted(details.qparams.items())),
        )
        found = self._bucket_index.get(key)
        if found is None:
            found = self._bucket_index[key] = len(self._buckets)
            self._buckets.append((client, details))
        return found

    def add(self, bucket_id: int, name: str, size: int) -> None:
        """Append one object; `size` -1 when unknown."""
        self._blob += name.encode()
        self._ends.append(len(self._blob))
        self._sizes.append(size)
        self._bucket_ids.append(bucket_id)

    def name(self, index: int) -> str:
        """Name of entry `index` added so far."""
        start = self._ends[index - 1] if index else 0
        return self._blob[start : self._ends[index]].decode()

    def object(self, index: int) -> Object:
        """A new SDK `Object` for entry `index` added so far (see `ObjectListing.object`)."""
        return _make_object(
            self._buckets[self._bucket_ids[index]], self.name(index), self._sizes[index]
        )

    def finish(self) -> ObjectListing:
        """The listing of everything added (the builder must not be used afterwards)."""
        return ObjectListing(
            bytes(self._blob),
            np.frombuffer(self._ends, dtype=np.int64).copy(),
            np.frombuffer(self._sizes, dtype=np.int64).copy(),
            np.frombuffer(self._bucket_ids, dtype=np.int32).copy(),
            self._buckets,
        )

    def extend(self, sources: Sequence[AISSource], prefix_map: PrefixMap) -> Iterator[int]:
        """List `sources` (source order, then prefix order, then listing order), appending each
        object and yielding its index as soon as it is known.

        A `Bucket` is read as list-objects entries with "name,size" (no SDK `Object` kept); an
        `ObjectGroup` yields its names without a HEAD per object (sizes stay unknown until
        `ObjectListing.fill_sizes`); any other source through `list_all_objects_iter`."""
        for source in sources:
            for prefix in source_prefixes(prefix_map, source):
                yield from self._extend_one(source, prefix)

    def _extend_one(self, source: AISSource, prefix: str) -> Iterator[int]:
        if _is_plain(source, Bucket):
            assert isinstance(source, Bucket)
            bid = self.bucket_id(source.client, source._details())
            for entry in source.list_objects_iter(prefix=prefix, props="name,size"):
                self.add(bid, entry.n, entry.s)
                yield len(self) - 1
            return
        objects: Any
        if _is_plain(source, ObjectGroup):
            assert isinstance(source, ObjectGroup)
            objects = source.list_all_objects_iter(prefix=prefix, props=None)
        else:
            objects = source.list_all_objects_iter(prefix=prefix)
        for obj in objects:
            props = obj.props_cached
            size = props.size if props is not None else -1
            self.add(self.bucket_id(obj._client, obj._bck_details), obj.name, size)
            yield len(self) - 1


def _make_object(bucket: tuple[RequestClient, BucketDetails], name: str, size: int) -> Object:
    if size < 0:
        return Object(bucket[0], bucket[1], name)
    return Object._listed(bucket[0], bucket[1], BucketEntry(n=name, s=size))


def _is_plain(source: AISSource, cls: type[AISSource]) -> bool:
    """`source` is a `cls` whose listing is `cls`'s own (a subclass may list differently)."""
    return (
        isinstance(source, cls) and type(source).list_all_objects_iter is cls.list_all_objects_iter
    )


def list_sources(sources: Sequence[AISSource], prefix_map: PrefixMap) -> ObjectListing:
    """The whole listing of `sources` (see `ListingBuilder.extend`)."""
    builder = ListingBuilder()
    for _ in builder.extend(sources, prefix_map):
        pass
    return builder.finish()
