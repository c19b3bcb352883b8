"""Private helpers of the shard datasets: member names to sample keys, streaming the files of a
shard, grouping files into samples in order, and the worker/rank share of a stream.

Example:
    >>> basename_key("train/cat.001.jpg"), webdataset_key("train/cat.001.JPG")
    (('cat', 'jpg'), ('train/cat', '001.jpg'))
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import islice
from typing import TypeVar

from aistore._internal.archive_stream import ArchiveFormatError, read_archive
from aistore.pytorch._sharding import Consumer, current_consumer, resolve_rank
from aistore.pytorch.utils import get_basename, get_extension
from aistore.sdk.const import QPARAM_ETL_NAME

__all__ = [
    "EtlName",
    "SampleAssembler",
    "SampleKey",
    "basename_key",
    "iter_archive_files",
    "reading_consumer",
    "share_of_consumers",
    "webdataset_key",
]

T = TypeVar("T")

SampleKey = Callable[[str], "tuple[str, str] | None"]
"""Maps a member name to `(sample key, field)`, or None for a member that is no sample part."""


def basename_key(name: str) -> tuple[str, str] | None:
    """The official `AISShardReader` convention: key = last path component up to its first
    dot, field = text after the last dot; None without an extension.

    Example:
        >>> basename_key("a/b/x.seg.png"), basename_key("README")
        (('x', 'png'), None)
    """
    ext = get_extension(name)
    return (get_basename(name), ext) if ext else None


def webdataset_key(name: str) -> tuple[str, str] | None:
    """The WebDataset convention: key = the path up to the first dot of its last component
    (directories kept, so `a/x.jpg` and `b/x.jpg` are different samples), field = the rest
    of the last component, lower-cased; None when the last component has no stem or no
    extension.

    Example:
        >>> webdataset_key("a/x.seg.PNG"), webdataset_key("a/.hidden")
        (('a/x', 'seg.png'), None)
    """
    directory, slash, last = name.rpartition("/")
    stem, dot, ext = last.partition(".")
    if not stem or not dot or not ext:
        return None
    return directory + slash + stem, ext.lower()


class SampleAssembler:
    """Groups `(key, field, bytes)` of one shard into samples, handed out in the order their
    keys first appeared, each as soon as it is complete.

    A key is complete once `expected[key]` parts have arrived; keys missing from `expected`
    (or all keys, without `expected`) complete only at `finish()`. Memory: the parts of keys
    not handed out yet - one sample for a shard whose samples are contiguous and listed.
    A repeated `(key, field)` overwrites the earlier part, as a dict would.

    Example:
        >>> s = SampleAssembler({"a": 2, "b": 1})
        >>> s.add("a", "jpg", b"1"), s.add("b", "jpg", b"2"), s.add("a", "cls", b"3")
        ([], [], [('a', {'jpg': b'1', 'cls': b'3'}), ('b', {'jpg': b'2'})])
    """

    def __init__(self, expected: Mapping[str, int] | None = None) -> None:
        self._remaining: dict[str, int] = dict(expected or {})
        self._pending: dict[str, dict[str, bytes]] = {}

    def add(self, key: str, field: str, data: bytes) -> list[tuple[str, dict[str, bytes]]]:
        """Add one part; returns the samples completed by it, in order (often none)."""
        self._pending.setdefault(key, {})[field] = data
        if key in self._remaining:
            self._remaining[key] -= 1
        ready: list[tuple[str, dict[str, bytes]]] = []
        while self._pending:
            first = next(iter(self._pending))
            if self._remaining.get(first, 1) > 0:
                break
            del self._remaining[first]
            ready.append((first, self._pending.pop(first)))
        return ready

    def finish(self) -> list[tuple[str, dict[str, bytes]]]:
        """Every sample not handed out yet, in order (the shard has ended)."""
        rest = list(self._pending.items())
        self._pending.clear()
        self._remaining.clear()
        return rest


def iter_archive_files(fileobj: io.BufferedIOBase, what: str) -> Iterator[tuple[str, bytes]]:
    """`(member name, bytes)` of every regular file of the archive stream `fileobj`, in archive
    order. The format comes from the first bytes: tar, or zip, plain or compressed with gzip,
    lz4 or zstd - the archive formats of AIS. Reads forward once through libarchive
    (`aistore._internal.archive_stream`; `tarfile`'s stream mode costs several Python calls per
    512-byte block: 5-10x slower on small files); memory is one read buffer plus one member.

    Raises:
        tarfile.TarError: not a supported archive, damaged or cut short; the message names
            `what`.
    """
    try:
        for member in read_archive(fileobj, what):
            yield member.name, member.data
    except ArchiveFormatError as err:
        raise tarfile.TarError(f"not a readable archive: {err}") from err


class EtlName:
    """An ETL named on the cluster, in the shape `Object.get_reader(etl=...)` takes.

    Example:
        >>> params = {}
        >>> EtlName("resize").update_qparams(params)
        >>> params
        {'etl_name': 'resize'}
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def update_qparams(self, params: dict[str, str]) -> None:
        """Name the ETL in a request's query parameters."""
        params[QPARAM_ETL_NAME] = self.name


def share_of_consumers(
    items: Iterable[T], rank_world: tuple[int, int] | None = None
) -> Iterator[T]:
    """This consumer's share of `items`, split as `aistore.pytorch._sharding` splits listings:
    a consumer is one DataLoader worker of one torch.distributed rank, and across all of them
    every item is taken exactly once (round robin; with one rank, worker `w` of `W` takes
    items `w, w+W, ...`).

    The rank comes from this process's torch.distributed group when it has one, else from
    `rank_world`, else from the `RANK`/`WORLD_SIZE` environment. A spawned DataLoader worker
    has no process group: datasets pass `rank_world` as `resolve_rank` saw it in the main
    process when they were pickled for the worker.

    Example:
        >>> list(share_of_consumers(range(3)))  # main process, no process group
        [0, 1, 2]
    """
    consumer = reading_consumer(rank_world)
    if consumer.count == 1:
        return iter(items)
    return islice(items, consumer.index, None, consumer.count)


def reading_consumer(rank_world: tuple[int, int] | None = None) -> Consumer:
    """The consumer the calling process is, its rank found as `share_of_consumers` finds it."""
    rank, world = _process_group_rank() or rank_world or resolve_rank(None, None)
    return current_consumer(rank, world)


def _process_group_rank() -> tuple[int, int] | None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None
