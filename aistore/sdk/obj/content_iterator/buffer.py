"""Shared-memory results of a parallel download: `ParallelBuffer` and the streaming `RingBuffer`.

The memory is anonymous shared memory (a memfd on Linux): it has no name in `/dev/shm`, so it
cannot be left behind by a crash, a SIGKILL or a forgotten `close()`; the kernel frees it when
the last process holding it lets go. A `ParallelBuffer` can be sent to another process through
`multiprocessing` (a DataLoader worker returning it to the main process, a `Queue`, a `Pipe`):
the memory travels as a file descriptor, not as a copy.

Example:
    >>> with obj.get_reader(num_workers=8).read_all() as buf:  # doctest: +SKIP
    ...     array = numpy.frombuffer(buf.buf, dtype=numpy.uint8)
"""

from __future__ import annotations

import contextlib
import threading
from multiprocessing import shared_memory
from multiprocessing.reduction import ForkingPickler
from typing import Any

from aistore._internal import shm

__all__ = ["ParallelBuffer", "RingBuffer"]


def _copy_to_bytes(view: memoryview) -> bytes:
    """A `bytes` copy of `view`, made with the GIL released (the extension is loaded on first
    use, so that importing the SDK does not need it)."""
    from aistore import _native

    return _native.copy_to_bytes(view)


class _NamedShm:
    """Adapter for a caller-made `multiprocessing.shared_memory.SharedMemory`: the official
    SDK's backing, kept so `ParallelBuffer(SharedMemory(...), size)` still works."""

    def __init__(self, mem: shared_memory.SharedMemory) -> None:
        if mem.buf is None:
            raise ValueError(f"shared memory {mem.name} is closed")
        self._mem = mem
        self.name = mem.name
        self.view: memoryview = mem.buf

    def close(self) -> None:
        self.view = memoryview(b"")
        self._mem.close()
        self._mem.unlink()


class ParallelBuffer:
    """An object's content in shared memory, as returned by a parallel `read_all()`.

    `buf` is a memoryview of exactly `len(self)` bytes, with no copy made on the way: hand it to
    `numpy.frombuffer`, `torch.frombuffer`, a file's `write`, or slice it. `close()` (or leaving
    a `with` block) releases the memory; it is also released when the buffer is garbage
    collected and, whatever happens, when the process exits. Views still held elsewhere (a numpy
    array made from `buf`) stay valid: the memory goes away with the last of them.

    Example:
        >>> with bucket.object("big").get_reader(num_workers=8).read_all() as pb:  # doctest: +SKIP
        ...     header = bytes(pb.buf[:16])

    Args:
        shm: the backing memory; a `multiprocessing.shared_memory.SharedMemory` is accepted (it is
            then unlinked on close, as in the official SDK).
        size: number of valid bytes, at most the memory's size.
    """

    def __init__(self, shm: Any, size: int) -> None:
        backing = _NamedShm(shm) if isinstance(shm, shared_memory.SharedMemory) else shm
        if size > len(backing.view):
            raise ValueError(f"size {size} exceeds the shared memory ({len(backing.view)} bytes)")
        self._shm: Any = backing
        self._size = size
        self._buf: memoryview = backing.view[:size]
        self._lock = threading.Lock()

    @classmethod
    def _allocate(cls, size: int) -> ParallelBuffer:
        """A buffer of `size` bytes (reusing pooled memory when possible).

        Raises:
            InsufficientSharedMemoryError: not enough memory; nothing was allocated.
        """
        return cls(shm.acquire(size, "buffer"), size)

    @property
    def buf(self) -> memoryview:
        """The content: a writable memoryview of exactly `len(self)` bytes (no copy).

        Raises:
            ValueError: the buffer is closed.
        """
        if self._shm is None:
            raise ValueError("operation on a closed ParallelBuffer")
        return self._buf

    @property
    def name(self) -> str:
        """Name of the memory (for logs; the memory cannot be opened by name)."""
        backing = self._shm
        return "" if backing is None else str(backing.name)

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._shm is None

    def __len__(self) -> int:
        return self._size

    def tobytes(self) -> bytes:
        """A copy of the content as `bytes` (copied with the GIL released).

        Raises:
            ValueError: the buffer is closed.
        """
        return _copy_to_bytes(self.buf)

    def close(self) -> None:
        """Release the memory; safe to call more than once and from any thread."""
        with self._lock:
            backing, self._shm = self._shm, None
            if backing is None:
                return
            view, self._buf = self._buf, memoryview(b"")
        # Exported (e.g. to numpy): the exporter keeps the memory alive until it is gone.
        with contextlib.suppress(BufferError):
            view.release()
        backing.close()

    def __enter__(self) -> ParallelBuffer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_shm", None) is not None:
            # At interpreter exit, what close() uses may be torn down already.
            with contextlib.suppress(Exception):
                self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError(
            f"{type(self).__name__} can only be sent to another process by multiprocessing "
            "(its memory travels as a file descriptor); copy it with tobytes() to pickle it"
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"name={self.name!r}"
        return f"<{type(self).__name__} size={self._size} {state}>"


def _reduce_parallel_buffer(pb: ParallelBuffer) -> tuple[Any, ...]:
    """ForkingPickler reduction: the receiver maps the same memory (no copy)."""
    backing = pb._shm
    if not isinstance(backing, shm.Segment):
        if backing is None:
            raise ValueError("cannot send a closed ParallelBuffer to another process")
        raise TypeError("only ParallelBuffers made by the SDK can be sent to another process")
    return (_rebuild_parallel_buffer, (*shm.reduce_segment(backing), len(pb)))


def _rebuild_parallel_buffer(dup_fd: Any, capacity: int, name: str, size: int) -> ParallelBuffer:
    return ParallelBuffer(shm.attach_segment(dup_fd, capacity, name), size)


ForkingPickler.register(ParallelBuffer, _reduce_parallel_buffer)


class RingBuffer(ParallelBuffer):
    """`num_slots` slots of `slot_size` bytes in shared memory, each with a ready event: the
    official SDK's streaming ring (range `i` in slot `i % num_slots`), kept for code that uses
    it. Our streaming reader does without it: workers receive each range straight into the
    `bytes` objects it is yielded as, which saves copying every byte out of a ring.

    Example:
        >>> ring = RingBuffer(num_slots=2, slot_size=4096)
        >>> ring.slot_view(1)[:2] = b"ok"
        >>> ring.slot_ready[1].set()
        >>> ring.wait_slot(1)
        >>> ring.read_slot(1, 2)
        b'ok'
        >>> ring.close()

    Args:
        num_slots: number of slots.
        slot_size: bytes per slot.
    """

    def __init__(self, num_slots: int, slot_size: int) -> None:
        if num_slots <= 0 or slot_size <= 0:
            raise ValueError(f"invalid ring: {num_slots} slots of {slot_size} bytes")
        size = num_slots * slot_size
        super().__init__(shm.acquire(size, "ring"), size)
        self.num_slots = num_slots
        self.slot_size = slot_size
        self.slot_ready: list[threading.Event] = [threading.Event() for _ in range(num_slots)]

    def slot_view(self, slot: int) -> memoryview:
        """Writable view of one slot."""
        start = slot * self.slot_size
        return self._buf[start : start + self.slot_size]

    def wait_slot(self, slot: int, timeout: float | None = None) -> bool:
        """Block until the slot is marked ready, then clear the mark; False on timeout."""
        event = self.slot_ready[slot]
        if not event.wait(timeout):
            return False
        event.clear()
        return True

    def read_slot(self, slot: int, data_len: int) -> bytes:
        """A copy of the first `data_len` bytes of the slot (copied with the GIL released)."""
        start = slot * self.slot_size
        return _copy_to_bytes(self._buf[start : start + data_len])
