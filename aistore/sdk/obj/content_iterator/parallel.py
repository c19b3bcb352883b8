"""Parallel content: concurrent range GETs of one object, by worker threads.

The constructor sends `HEAD ?props=chunked` for the size and the chunk size. Ranges are one
chunk each for a chunked object (so every range is served from one chunk file), the given
`chunk_size` when there is one, else 8 MiB for streaming and larger ranges for whole-object
reads of monolithic objects. An object of one range is read by the calling thread alone.

- `read_all()` → `ParallelBuffer`: every worker receives its ranges straight into one
  shared-memory buffer of the object's size.
- `create_iter()` → the bytes in order; workers receive each range straight into the `bytes`
  objects it is yielded as, at most `num_workers` chunks ahead, so memory stays at about
  `num_workers × chunk_size` whatever the object size.
- `read_into(buffer)` and `download_to(path)` (beyond the official SDK): into a caller's
  writable buffer (numpy array, pinned tensor, mmap...), or into a file at offsets with
  `pwrite`, without the whole object in memory.

Example:
    >>> provider = ParallelContentIterProvider(object_client, None, 8)  # doctest: +SKIP
    >>> with provider.read_all() as buf:  # doctest: +SKIP
    ...     checksum = xxhash(buf.buf)
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Generator
from dataclasses import dataclass, field
from multiprocessing import shared_memory
from typing import Any

from aistore._internal.parallel import RangeEngine, piece_pool, plan_ranges
from aistore.sdk.const import DEFAULT_CHUNK_SIZE as DEFAULT_CHUNK_SIZE
from aistore.sdk.const import DEFAULT_PARALLEL_CHUNK_SIZE, MIB, PROPS_CHUNKED
from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, StreamBounds
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer
from aistore.sdk.obj.content_iterator.buffer import RingBuffer as RingBuffer
from aistore.sdk.obj.object_client import ObjectClient

__all__ = ["ParallelContentIterProvider", "WorkerState", "worker_state"]

# Whole-object reads of a monolithic object: ranges of about size / (this × workers), so a
# slow range does not hold everything up, within the bounds below (few requests, bounded
# retry cost).
_RANGES_PER_WORKER = 4
_MIN_WHOLE_RANGE = 8 * MIB
_MAX_WHOLE_RANGE = 64 * MIB
# Streams read a chunk whose halves are at least this large as two ranges, twice as many of
# them ahead: the same memory (about `num_workers` chunks), but a worker that finished early
# runs on while a slower one still reads an earlier range, instead of waiting for the in-order
# consumer. Measured side by side on 2 cores with 64 MiB chunks: +25-60% at 2 workers in two
# runs of three, within +-5% at 4-16; halving 8 MiB ranges cost ~10% in requests, hence the floor.
_MIN_STREAM_HALF = 16 * MIB


@dataclass
class WorkerState:
    """What a range worker reads with and writes into, in the official SDK's process pool.

    The official SDK forks worker processes that find their client, shared-memory ring and
    per-slot ready events here. Our workers are threads of one `RangeEngine` that receive
    these through the provider, so nothing in this package fills `worker_state`; the type
    and the instance exist so code written against the official module imports unchanged.

    Example:
        >>> WorkerState().client is None
        True

    Attributes:
        client: the object's client, for range GETs.
        shm: the shared-memory buffer the ranges land in.
        slot_ready: one event per ring slot, set when its range has landed.
    """

    client: ObjectClient | None = None
    shm: shared_memory.SharedMemory | None = None
    slot_ready: list[threading.Event] = field(default_factory=list)


# The official module's per-process singleton (see `WorkerState`).
worker_state = WorkerState()


class ParallelContentIterProvider(BaseContentIterProvider):
    """Reads one object with `num_workers` concurrent range GETs.

    Example:
        >>> provider = ParallelContentIterProvider(object_client, None, 16)  # doctest: +SKIP
        >>> size = sum(len(chunk) for chunk in provider.create_iter())  # doctest: +SKIP

    Args:
        client: client of the object.
        chunk_size: range size; None (or <= 0) for the object's chunk size, else 8 MiB.
        num_workers: concurrent range reads (threads).

    Raises:
        ValueError: the object is empty.
        aistore.sdk.errors.AISError: the HEAD failed (e.g. the object does not exist).
    """

    def __init__(self, client: ObjectClient, chunk_size: int | None, num_workers: int) -> None:
        attrs = client.head(PROPS_CHUNKED)
        self._object_size = attrs.size
        if self._object_size <= 0:
            raise ValueError(
                f"Parallel download requires a non-empty object (got size={self._object_size})."
            )
        self._explicit_chunk = chunk_size is not None and chunk_size > 0
        self._chunked = attrs.chunks is not None and attrs.chunks.max_chunk_size > 0
        if chunk_size is not None and chunk_size > 0:
            size = chunk_size
        elif attrs.chunks is not None and attrs.chunks.max_chunk_size > 0:
            size = attrs.chunks.max_chunk_size
        else:
            size = DEFAULT_PARALLEL_CHUNK_SIZE
        super().__init__(client, size)
        self._num_workers = max(1, num_workers)

    @property
    def num_workers(self) -> int:
        """Concurrent range reads."""
        return self._num_workers

    @property
    def object_size(self) -> int:
        """Size of the object, from the HEAD."""
        return self._object_size

    @property
    def chunk_size(self) -> int:
        """Range size of streaming reads (and of whole reads of chunked objects)."""
        return self._chunk_size

    def read_all(self) -> ParallelBuffer:
        """Download the whole object into a new shared-memory `ParallelBuffer`.

        The caller should `close()` it (or use it as a context manager) when done; its memory
        is freed in any case once it is garbage collected or the process exits.

        Raises:
            InsufficientSharedMemoryError: not enough memory; raised before any GET.
        """
        buf = ParallelBuffer._allocate(self._object_size)
        try:
            segment = buf._shm
            self._engine(self._whole_range_size()).fill(buf.buf, prepare=segment.populate)
            segment.mark_populated(self._object_size)
        except BaseException:
            buf.close()
            raise
        return buf

    def read_into(self, buffer: Any) -> int:
        """Download the whole object into `buffer` (any writable, C-contiguous buffer of at
        least the object's size: bytearray, numpy array, mmap, pinned tensor's memoryview).

        Returns:
            The object size (bytes written at the start of `buffer`).

        Raises:
            ValueError: `buffer` is too small or not writable.
        """
        view = memoryview(buffer)
        try:
            dest = view.cast("B") if view.format != "B" or view.ndim != 1 else view
            if dest.readonly:
                raise ValueError("read_into needs a writable buffer")
            if dest.nbytes < self._object_size:
                raise ValueError(
                    f"buffer of {dest.nbytes} bytes is too small for {self._object_size}"
                )
            self._engine(self._whole_range_size()).fill(dest[: self._object_size])
        finally:
            view.release()
        return self._object_size

    def download_to(self, path: str | os.PathLike[str]) -> int:
        """Download the whole object into the file `path`, each range written at its offset
        (`pwrite`) through a small per-worker buffer: memory does not grow with the object.

        The file appears complete or not at all: bytes go to `<path>.part`, renamed over
        `path` once every range arrived, and removed on failure.

        Returns:
            The object size.
        """
        final = os.fspath(path)
        part = final + ".part"
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            try:
                os.ftruncate(fd, self._object_size)
                self._engine(self._whole_range_size()).write_file(fd)
            finally:
                os.close(fd)
            os.replace(part, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)
            raise
        return self._object_size

    def create_iter(
        self, offset: int = 0, bounds: StreamBounds | None = None
    ) -> Generator[bytes, None, None]:
        """The object's bytes from `offset`, in order, as `bytes` of at most 4 MiB.

        Workers read up to `num_workers` chunks ahead of the caller (large chunks as two
        half ranges), each straight into the `bytes` objects it will be yielded as (no copy);
        memory stays at about `num_workers × chunk_size` whatever the object size. Closing the
        generator stops them.
        A yielded `bytes` that nobody holds any more (no reference, view or array of it) is
        received into again, by a later range or stream (`parallel.piece_pool`, idle bytes
        capped by `AIS_STREAM_POOL_BYTES`): its pages are already faulted in.

        Args:
            offset: first byte wanted.
            bounds: receives `start=offset` and `expected_end=` the object size.
        """
        if bounds is not None:
            bounds.start = offset
            bounds.expected_end = self._object_size
        if offset >= self._object_size:
            return
        range_size, depth = _stream_ranges(self._chunk_size)
        ranges = plan_ranges(offset, self._object_size, range_size)
        engine = self._engine(range_size, ranges)
        yield from engine.stream(piece_pool().fillable, ahead=depth * self._num_workers)

    def _whole_range_size(self) -> int:
        """Range size for reading the whole object at once."""
        if self._explicit_chunk or self._chunked:
            return self._chunk_size
        share = -(-self._object_size // (_RANGES_PER_WORKER * self._num_workers))
        share = -(-share // MIB) * MIB
        return max(_MIN_WHOLE_RANGE, min(_MAX_WHOLE_RANGE, share))

    def _engine(self, range_size: int, ranges: list[tuple[int, int]] | None = None) -> RangeEngine:
        client = self._client
        request_client = client.request_client
        request_client.session_manager.ensure_pool_size(self._num_workers)
        return RangeEngine(
            client,
            self._object_size,
            ranges if ranges is not None else plan_ranges(0, self._object_size, range_size),
            self._num_workers,
            request_client.retry_config.network_retry,
        )


def _stream_ranges(chunk_size: int) -> tuple[int, int]:
    """(range size, ranges per worker read ahead) of a stream of `chunk_size` ranges.

    Halves keep a chunked object's ranges inside one chunk each (its boundaries are multiples
    of an even chunk size's half).

    Example:
        >>> _stream_ranges(64 * MIB) == (32 * MIB, 2), _stream_ranges(8 * MIB) == (8 * MIB, 1)
        (True, True)
    """
    if chunk_size % 2 == 0 and chunk_size // 2 >= _MIN_STREAM_HALF:
        return chunk_size // 2, 2
    return chunk_size, 1
