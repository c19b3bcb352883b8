"""Shared memory that cannot outlive its users: anonymous segments handed over by descriptor.

A `Segment` is a memfd (Linux) or, where memfd is missing, a POSIX shm object whose name is
unlinked the moment it is created. Either way nothing is ever left in `/dev/shm`: the kernel
frees the memory when the last descriptor and the last mapping are gone, which includes a
process killed by SIGKILL. Another process gets the memory by receiving the descriptor (see
`reduce_segment`, used by the multiprocessing pickler that DataLoader workers send results
through), never by name.

Fresh shared pages are expensive (allocation, zeroing and one fault per 4 KiB page cost more
CPU than receiving the bytes into them), so segments closed cleanly go back, still mapped, to a
small per-process `SegmentPool` and are reused by the next buffer of a similar size. A segment
is pooled only if nobody can still see its memory: it was never sent to another process and no
view of its mapping is left. `AIS_PARALLEL_POOL_BYTES` caps the idle bytes kept
(default: 1/8 of RAM, at most 4 GiB; 0 disables pooling).

Example:
    >>> seg = acquire(1 << 20, "example")
    >>> seg.view[:5] = b"hello"
    >>> bytes(seg.view[:5])
    b'hello'
    >>> seg.close()
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import mmap
import os
import secrets
import threading
from collections.abc import Callable
from typing import Any

from aistore._internal.errors import InsufficientSharedMemoryError

_PAGE = mmap.PAGESIZE
_MADV_POPULATE_WRITE = 23  # Linux 5.14+: fault a range in with one call (ENOMEM, not SIGBUS)
_DEV_SHM = "/dev/shm"
_POOL_ENV = "AIS_PARALLEL_POOL_BYTES"
_POOL_MAX_DEFAULT = 4 << 30
# A pooled segment serves a request when it is at most this much larger than the request.
_POOL_SLACK_FRACTION = 4  # capacity <= size + size / 4
_POOL_SLACK_MIN = 2 << 20

_names = itertools.count()


class Segment:
    """One anonymous shared-memory segment mapped into this process.

    OWNS `fd` and the mapping; `close()` releases both or hands them to the pool. The memory
    lives until every process holding a descriptor or mapping of it lets go. `populated` is
    the length of a prefix known to be faulted in (writing there costs no page faults).

    Example:
        >>> seg = Segment.create(4096, "doc")
        >>> len(seg.view)
        4096
        >>> seg.close()
    """

    def __init__(self, fd: int, capacity: int, name: str, shared: bool = False) -> None:
        self.fd = fd
        self.capacity = capacity
        self.name = name
        # True once the descriptor went to another process: the memory may be in use there,
        # so this segment must never be reused for other content.
        self.shared = shared
        self.populated = 0
        self._mmap: mmap.mmap | None = mmap.mmap(fd, capacity, flags=mmap.MAP_SHARED)
        self.view: memoryview = memoryview(self._mmap)

    @classmethod
    def create(cls, capacity: int, name: str) -> Segment:
        """A new segment of `capacity` bytes (not yet populated).

        Raises:
            InsufficientSharedMemoryError: the memory is not available.
            ValueError: `capacity` is not positive.
        """
        if capacity <= 0:
            raise ValueError(f"shared memory segment size must be positive, got {capacity}")
        check_capacity(capacity)
        fd = _anonymous_fd(name)
        try:
            os.ftruncate(fd, capacity)
            return cls(fd, capacity, name)
        except BaseException:
            os.close(fd)
            raise

    def populate(self, start: int, end: int) -> None:
        """Fault in bytes [start, end) now, in one call, so that writing them later neither
        traps once per page nor dies of SIGBUS when memory runs out.

        Raises:
            InsufficientSharedMemoryError: the kernel could not provide the pages.
        """
        if self._mmap is None or end <= max(start, self.populated):
            return
        first = start - start % _PAGE
        try:
            self._mmap.madvise(_MADV_POPULATE_WRITE, first, end - first)
        except OSError as err:
            if err.errno in (errno.ENOMEM, errno.EFAULT, errno.ENOSPC):
                raise InsufficientSharedMemoryError(
                    end - start, available_bytes(), f"populating {self.name}"
                ) from err
            # EINVAL (older kernel): pages fault in as they are written instead.

    def mark_populated(self, size: int) -> None:
        """Bytes [0, size) have all been written: reusing them needs no populate."""
        self.populated = max(self.populated, min(size, self.capacity))

    def _release_views(self) -> bool:
        """Release our view; True when no other view of the mapping exists anywhere."""
        view, self.view = self.view, memoryview(b"")
        try:
            view.release()
        except BufferError:
            return False
        if self._mmap is None:
            return True
        try:
            # Resizing to the same size is refused exactly when buffers are still exported.
            self._mmap.resize(self.capacity)
        except BufferError:
            return False
        return True

    def close(self) -> None:
        """Release this process's hold on the memory, or return it to the pool. Idempotent."""
        if self.fd < 0:
            return
        if self._release_views() and not self.shared and _pool.put(self):
            return
        self._destroy()

    def _destroy(self) -> None:
        """Drop mapping and descriptor; views still alive elsewhere keep their mapping."""
        m, self._mmap = self._mmap, None
        fd, self.fd = self.fd, -1
        if m is not None:
            with contextlib.suppress(BufferError):
                m.close()
        if fd >= 0:
            os.close(fd)

    def _reuse(self) -> None:
        assert self._mmap is not None
        self.view = memoryview(self._mmap)


class SegmentPool:
    """Idle segments of this process, kept mapped and reused instead of fresh pages.

    Bounded by `limit` idle bytes; emptied in a forked child, whose copies of the parent's
    mappings and descriptors must not be written while the parent reuses them.

    Example:
        >>> pool = SegmentPool(limit=0)
        >>> pool.get(4096) is None
        True
    """

    def __init__(self, limit: int | None = None) -> None:
        self._lock = threading.Lock()
        self._idle: list[Segment] = []
        self._limit = limit

    @property
    def limit(self) -> int:
        """Most idle bytes kept."""
        if self._limit is None:
            self._limit = default_pool_limit()
        return self._limit

    @property
    def idle_bytes(self) -> int:
        """Bytes held by idle segments."""
        with self._lock:
            return sum(s.capacity for s in self._idle)

    @property
    def idle_names(self) -> set[str]:
        """Names of the idle segments."""
        with self._lock:
            return {s.name for s in self._idle}

    def get(self, size: int) -> Segment | None:
        """The smallest idle segment that fits `size` without wasting much."""
        slack = max(size // _POOL_SLACK_FRACTION, _POOL_SLACK_MIN)
        with self._lock:
            fits = [s for s in self._idle if size <= s.capacity <= size + slack]
            if not fits:
                return None
            seg = min(fits, key=lambda s: s.capacity)
            self._idle.remove(seg)
        seg._reuse()
        return seg

    def put(self, seg: Segment) -> bool:
        """Keep an unshared segment nobody views; False when it does not fit under the limit."""
        limit = self.limit
        evicted: list[Segment] = []
        with self._lock:
            if seg.capacity > limit:
                return False
            held = sum(s.capacity for s in self._idle)
            # Make room by dropping the oldest idle segments.
            while self._idle and held + seg.capacity > limit:
                old = self._idle.pop(0)
                held -= old.capacity
                evicted.append(old)
            self._idle.append(seg)
        for old in evicted:
            old._destroy()
        return True

    def clear(self) -> None:
        """Free every idle segment."""
        with self._lock:
            idle, self._idle = self._idle, []
        for seg in idle:
            seg._destroy()

    def _forget_after_fork(self) -> None:
        # In a forked child: the parent still owns these (and may reuse them); drop our copies.
        self._lock = threading.Lock()
        self.clear()


_pool = SegmentPool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool._forget_after_fork)


def pool() -> SegmentPool:
    """This process's pool of idle segments."""
    return _pool


def acquire(size: int, purpose: str) -> Segment:
    """A mapped segment of at least `size` bytes: a pooled one if it fits, else a new one.

    Raises:
        InsufficientSharedMemoryError: a new segment does not fit in the available memory.
    """
    seg = _pool.get(size)
    if seg is not None:
        return seg
    return Segment.create(size, f"aistore-{purpose}-{os.getpid()}-{next(_names)}")


def _anonymous_fd(name: str) -> int:
    memfd_create: Callable[..., int] | None = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        return memfd_create(name, getattr(os, "MFD_CLOEXEC", 1))
    import _posixshmem  # CPython's own binding of shm_open / shm_unlink

    shm_name = f"/{name}-{secrets.token_hex(4)}"
    fd: int = _posixshmem.shm_open(shm_name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    _posixshmem.shm_unlink(shm_name)  # the name is gone at once; the fd alone holds it now
    return fd


def _meminfo() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    out[key] = int(parts[0]) * 1024
    except OSError:
        pass
    return out


def _cgroup_headroom(
    proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup"
) -> int | None:
    """Bytes the calling process's cgroup (v2) may still charge: the smallest headroom of the
    cgroup and its ancestors that have a memory limit, None when none has."""
    try:
        with open(proc_cgroup) as f:
            rel = next((line.split("::", 1)[1].strip() for line in f if line.startswith("0::")), "")
    except OSError:
        return None
    if not rel:
        return None
    headroom: int | None = None
    parts = [p for p in rel.split("/") if p]
    for depth in range(len(parts), -1, -1):
        base = os.path.join(root, *parts[:depth])
        try:
            with open(os.path.join(base, "memory.max")) as f:
                limit = f.read().strip()
            if limit == "max":
                continue
            with open(os.path.join(base, "memory.current")) as f:
                current = int(f.read().strip())
        except (OSError, ValueError):
            continue
        left = max(int(limit) - current, 0)
        headroom = left if headroom is None else min(headroom, left)
    return headroom


def available_bytes() -> int | None:
    """Shared memory a new segment may use now, or None when it cannot be told.

    memfd memory is limited by free RAM (`MemAvailable`) and the cgroup's limit; a POSIX shm
    fallback also by the free space of `/dev/shm`.
    """
    candidates: list[int] = []
    info = _meminfo()
    if "MemAvailable" in info:
        candidates.append(info["MemAvailable"])
    headroom = _cgroup_headroom()
    if headroom is not None:
        candidates.append(headroom)
    if not hasattr(os, "memfd_create"):
        try:
            st = os.statvfs(_DEV_SHM)
            candidates.append(st.f_bavail * st.f_frsize)
        except OSError:
            pass
    return min(candidates) if candidates else None


def check_capacity(size: int) -> None:
    """Fail before any download when `size` bytes of shared memory cannot be had.

    Raises:
        InsufficientSharedMemoryError: `size` exceeds `available_bytes()`.
    """
    available = available_bytes()
    if available is not None and size > available:
        raise InsufficientSharedMemoryError(size, available, "allocating a shared buffer")


def default_pool_limit(env: str = _POOL_ENV) -> int:
    """Idle bytes a pool may keep: the integer in `env` (0 disables pooling), else 1/8 of RAM,
    at most 4 GiB."""
    raw = os.environ.get(env)
    if raw is not None:
        try:
            return max(int(raw), 0)
        except ValueError:
            pass
    total = _meminfo().get("MemTotal", 0)
    return min(total // 8, _POOL_MAX_DEFAULT)


def reduce_segment(seg: Segment) -> tuple[Any, ...]:
    """Arguments that let another process map `seg`: a duplicated descriptor for
    multiprocessing to pass along (SCM_RIGHTS), with the size and name.

    Marks `seg` shared: it will never be reused for other content.
    """
    from multiprocessing.reduction import DupFd

    seg.shared = True
    return (DupFd(seg.fd), seg.capacity, seg.name)


def attach_segment(dup_fd: Any, capacity: int, name: str) -> Segment:
    """Map a segment received from another process (counterpart of `reduce_segment`)."""
    fd = dup_fd.detach()
    try:
        return Segment(fd, capacity, name, shared=True)
    except BaseException:
        os.close(fd)
        raise
