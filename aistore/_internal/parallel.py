"""Parallel range engine: worker threads GET byte ranges of one object straight into memory.

Why threads: a range read spends its time in `recv`, which releases the GIL and lands the
bytes in their final place (a shared-memory buffer, the `bytes` a stream yields, a caller's
array, a file's scratch page) with the one copy the kernel has to make. Threads need no
pickling, no process pool and no named shared memory, so they also work inside DataLoader
workers (daemonic processes may not start children). Each worker holds one keep-alive
connection from the client's pool for all its ranges. Over plain HTTP the GETs go through the
native client, whose per-request CPU is a small fraction of `requests`' (an object streamed in
8 MiB ranges is hundreds of requests; figures in docs/parallel-download.md); what it cannot take
goes through `requests`.

Contract of one `RangeEngine` run:
- ranges are claimed in order; each is read with an exact-length check (206 with the asked
  `Content-Range`, `Content-Length` equal to the range, the body neither short nor long) and
  retried alone under the client's network retry policy, from its first byte;
- the object must not change meanwhile: a different total size or `Ais-Version` between
  replies raises `ObjectChangedError`;
- the first unrecoverable error is kept, every worker is stopped (blocked reads are woken by
  aborting their replies, which shuts their connections down) and the caller gets that error;
- cancelling (an exception or KeyboardInterrupt in the caller, closing a stream) stops the
  workers the same way and waits for them (bounded), so no thread writes into memory that
  the caller releases.

Example:
    >>> ranges = plan_ranges(0, size, 64 << 20)  # doctest: +SKIP
    >>> RangeEngine(object_client, size, ranges, 8, retrying).fill(dest)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback
from collections.abc import Callable, Generator
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from requests.exceptions import ChunkedEncodingError
from tenacity import RetryCallState, Retrying

from aistore._internal.body import StreamedReply, content_length
from aistore._internal.const import STATUS_OK, STATUS_PARTIAL_CONTENT
from aistore._internal.errors import ObjectChangedError, UnexpectedHTTPStatusCode
from aistore._internal.shm import default_pool_limit

if TYPE_CHECKING:
    from aistore._native import PiecePool

logger = logging.getLogger(__name__)

Range = tuple[int, int]  # [start, end)

# Bytes read between two looks at the cancel flag (a cancelled worker stops within one piece);
# also the size of the `bytes` a stream yields (below glibc's 32 MiB mmap threshold, so freed
# blocks of that size are recycled instead of mapped fresh).
PIECE_SIZE = 4 << 20
# How long cancellation waits for body readers to let go of the destination (their replies
# are aborted, so they do at once); after that the memory is not reused while they hold it.
CANCEL_JOIN_TIMEOUT = 10.0
# Then how long to wait for the threads themselves to end (only one still waiting for response
# headers takes longer; it ends when they come or time out).
EXIT_GRACE = 0.5

# Caps the idle bytes of the stream pieces kept for reuse (see `piece_pool`), as
# `AIS_PARALLEL_POOL_BYTES` does for shared-memory buffers: default 1/8 of RAM, at most 4 GiB;
# 0 keeps none.
STREAM_POOL_ENV = "AIS_STREAM_POOL_BYTES"

_HEADER_CONTENT_RANGE = "Content-Range"
_HEADER_AIS_VERSION = "ais-version"


def plan_ranges(start: int, end: int, range_size: int) -> list[Range]:
    """Ranges covering [start, end) whose boundaries fall on multiples of `range_size` (so each
    range of a chunked object is one chunk); the first is shorter when `start` is unaligned.

    Example:
        >>> plan_ranges(0, 10, 4)
        [(0, 4), (4, 8), (8, 10)]
        >>> plan_ranges(5, 10, 4)
        [(5, 8), (8, 10)]
    """
    if range_size <= 0:
        raise ValueError(f"range size must be positive, got {range_size}")
    ranges = []
    pos = start
    while pos < end:
        nxt = min((pos // range_size + 1) * range_size, end)
        ranges.append((pos, nxt))
        pos = nxt
    return ranges


_piece_pool: PiecePool | None = None
_piece_pool_lock = threading.Lock()


def piece_pool() -> PiecePool:
    """This process's pool of `PIECE_SIZE` stream pieces, made on first use.

    Pieces a stream yielded are kept (by reference, oldest let go first beyond the cap) and
    filled again for the next ranges once only the pool holds them: fresh heap costs a page
    fault per 4 KiB, and glibc hands freed pieces back to the kernel between streams. Emptied
    in a forked child.
    """
    global _piece_pool
    with _piece_pool_lock:
        if _piece_pool is None:
            from aistore import _native  # the extension, loaded on first use

            _piece_pool = _native.PiecePool(PIECE_SIZE, default_pool_limit(STREAM_POOL_ENV))
        return _piece_pool


def _forget_pieces_after_fork() -> None:
    # In a forked child: the parent's pieces are of no use here; let go of the copies.
    global _piece_pool_lock
    _piece_pool_lock = threading.Lock()
    if _piece_pool is not None:
        _piece_pool.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pieces_after_fork)


class RangeSource(Protocol):
    """What the engine needs from an object client (`ObjectClient` implements it)."""

    @property
    def path(self) -> str: ...

    def read_range(
        self,
        start: int,
        end: int,
        read: Callable[[StreamedReply], Any],
        retrying: Retrying | None = None,
    ) -> Any: ...


class Target(Protocol):
    """Where the bytes of one range go."""

    def view(self, pos: int, n: int) -> memoryview:
        """Memory for bytes [pos, pos + n) of the range (relative to its start)."""
        ...

    def commit(self, pos: int, n: int) -> None:
        """The first `n` bytes of the last view, bytes [pos, pos + n) of the range, arrived
        (the view has been released)."""
        ...

    def release(self) -> None:
        """Drop the target's views of the destination (they would keep it mapped)."""
        ...


class MemoryTarget:
    """A range read straight into its place in a larger buffer.

    Example:
        >>> dest = memoryview(bytearray(8))
        >>> MemoryTarget(dest[4:8]).view(0, 2).nbytes
        2
    """

    def __init__(self, dest: memoryview) -> None:
        self._dest = dest

    def view(self, pos: int, n: int) -> memoryview:
        return self._dest[pos : pos + n]

    def commit(self, pos: int, n: int) -> None:
        pass

    def release(self) -> None:
        self._dest.release()


class FileTarget:
    """A range read through a small scratch buffer and written at its offset with `pwrite`.

    Example:
        >>> target = FileTarget(fd, 1 << 20, bytearray(1 << 20))  # doctest: +SKIP
    """

    def __init__(self, fd: int, offset: int, scratch: bytearray) -> None:
        self._fd = fd
        self._offset = offset
        self._scratch = memoryview(scratch)

    def view(self, pos: int, n: int) -> memoryview:
        return self._scratch[: min(n, len(self._scratch))]

    def commit(self, pos: int, n: int) -> None:
        done = 0
        while done < n:
            with self._scratch[done:n] as data:
                done += os.pwrite(self._fd, data, self._offset + pos + done)

    def release(self) -> None:
        self._scratch.release()


class FillTarget:
    """A range received straight into the `bytes` objects it will be yielded as: one fillable
    piece (`_native.FillableBytes`) per `PIECE_SIZE` bytes, made beforehand by the consumer.

    Example:
        >>> target = FillTarget([FillableBytes(4 << 20), FillableBytes(100)])  # doctest: +SKIP
    """

    def __init__(self, pieces: list[Any]) -> None:
        self._pieces = pieces

    def view(self, pos: int, n: int) -> memoryview:
        # A read may fill a piece in several calls: the view starts where the last one ended.
        offset = pos % PIECE_SIZE
        return memoryview(self._pieces[pos // PIECE_SIZE])[offset : offset + n]

    def commit(self, pos: int, n: int) -> None:
        pass

    def release(self) -> None:
        pass


class _Cancelled(Exception):
    """Raised inside a worker to leave once the run is cancelled or has failed."""


class RangeEngine:
    """One parallel read of an object's ranges.

    Thread safety: `_cond` guards `_next`, `_consumed`, `_error`, `_replies`, `_running`,
    `_holding` and `_version`; `_cancel` is an Event read without the lock. The object size,
    the ranges and the worker count are constant after construction.

    Args:
        source: issues the range GETs (an `ObjectClient`).
        object_size: size from the HEAD; every reply must agree with it.
        ranges: the ranges to read, in order.
        num_workers: most concurrent range reads (and threads).
        retrying: network retry policy for each range (tenacity `Retrying`).
    """

    def __init__(
        self,
        source: RangeSource,
        object_size: int,
        ranges: list[Range],
        num_workers: int,
        retrying: Retrying,
    ) -> None:
        self._source = source
        self._size = object_size
        self._ranges = ranges
        self._num_workers = max(1, min(num_workers, len(ranges)))
        self._base_retrying = retrying
        self._cond = threading.Condition()
        self._cancel = threading.Event()
        self._next = 0
        self._consumed = 0
        self._error: BaseException | None = None
        self._replies: dict[int, StreamedReply] = {}  # by thread: those read into memory
        self._running = 0
        self._holding = 0
        self._version: str | None = None
        self._threads: list[threading.Thread] = []
        self._on_fail: Callable[[], None] = lambda: None

    @property
    def num_workers(self) -> int:
        """Threads this run uses."""
        return self._num_workers

    # -- modes ------------------------------------------------------------------------------

    def fill(
        self,
        dest: memoryview,
        base: int = 0,
        prepare: Callable[[int, int], None] | None = None,
    ) -> None:
        """Read every range into `dest`, byte `p` of the object at `dest[p - base]`.

        Args:
            prepare: called with (start, end) in `dest` coordinates before a range is read
                (e.g. to fault its pages in).
        """

        def target(index: int) -> Target:
            start, end = self._ranges[index]
            if prepare is not None:
                prepare(start - base, end - base)
            return MemoryTarget(dest[start - base : end - base])

        self._run_to_completion(target)

    def write_file(self, fd: int, base: int = 0, scratch_size: int = 1 << 20) -> None:
        """Read every range into the open file `fd`, byte `p` of the object at `p - base`."""
        local = threading.local()

        def target(index: int) -> Target:
            scratch = getattr(local, "scratch", None)
            if scratch is None:
                scratch = local.scratch = bytearray(scratch_size)
            return FileTarget(fd, self._ranges[index][0] - base, scratch)

        self._run_to_completion(target)

    def stream(
        self, fillable: Callable[[int], Any], ahead: int | None = None
    ) -> Generator[bytes, None, None]:
        """Yield the object's bytes in order, as `bytes` of at most `PIECE_SIZE` that the
        workers receive into directly (no copy).

        The consumer (the calling thread) makes each range's pieces with `fillable(size)`
        (`PiecePool.fillable` refills pieces the caller has dropped; fresh memory comes from
        the main thread's heap, which glibc recycles, not from the workers' arenas) as soon as
        the window lets a worker claim that range: when the range `ahead` before it is handed
        to the caller. Memory: about `ahead + 1` ranges, whatever the object size.

        Args:
            ahead: ranges the workers may read ahead of the caller (default and at least
                `num_workers`): a worker that finished its range claims the next one while
                a slower one is still reading an earlier range, up to this bound.
        """
        window = max(self._num_workers, ahead or 0)
        fills: dict[int, list[Any]] = {}  # guarded by _cond

        def make(index: int) -> None:
            start, end = self._ranges[index]
            pieces = [fillable(min(PIECE_SIZE, end - p)) for p in range(start, end, PIECE_SIZE)]
            with self._cond:
                fills[index] = pieces

        def target(index: int) -> Target:
            with self._cond:
                return FillTarget(fills[index])

        if self._num_workers == 1:
            retrying = self._retrying()
            for index, (start, end) in enumerate(self._ranges):
                make(index)
                try:
                    self._fetch(start, end, partial(target, index), retrying)
                except BaseException as err:
                    _drop_locals(err)
                    raise
                for piece in fills.pop(index):
                    yield piece.take()
            return
        finished: set[int] = set()

        def done(index: int) -> None:
            with self._cond:
                finished.add(index)
                self._cond.notify_all()

        try:
            # Inside the try: a KeyboardInterrupt while threads start must stop those started.
            for index in range(min(window, len(self._ranges))):
                make(index)
            self._start(target, done=done, window=window)
            for index in range(len(self._ranges)):
                with self._cond:
                    while index not in finished and self._error is None:
                        self._cond.wait()
                    pieces = fills.pop(index, [])
                self._raise_error()
                # The window now admits range index + window: its pieces exist before it does.
                if index + window < len(self._ranges):
                    make(index + window)
                with self._cond:
                    self._consumed = index + 1
                    self._cond.notify_all()
                for piece in pieces:
                    yield piece.take()
        finally:
            self._stop()

    # -- running workers --------------------------------------------------------------------

    def _run_to_completion(self, target: Callable[[int], Target]) -> None:
        if self._num_workers == 1:
            retrying = self._retrying()
            try:
                for index, (start, end) in enumerate(self._ranges):
                    self._fetch(start, end, partial(target, index), retrying)
            except BaseException as err:
                _drop_locals(err)
                raise
            return
        all_done = threading.Event()
        self._on_fail = all_done.set
        try:
            self._start(target, done=None, window=None, finished=all_done)
            all_done.wait()
            self._raise_error()
        finally:
            self._stop()

    def _start(
        self,
        target: Callable[[int], Target],
        done: Callable[[int], None] | None,
        window: int | None,
        finished: threading.Event | None = None,
    ) -> None:
        for i in range(self._num_workers):
            with self._cond:
                self._running += 1
            thread = threading.Thread(
                target=self._work,
                args=(target, done, window, finished),
                name=f"ais-range-{i}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def _work(
        self,
        target: Callable[[int], Target],
        done: Callable[[int], None] | None,
        window: int | None,
        finished: threading.Event | None,
    ) -> None:
        retrying = self._retrying()
        try:
            while (index := self._claim(window)) is not None:
                start, end = self._ranges[index]
                self._fetch(start, end, partial(target, index), retrying)
                if done is not None:
                    done(index)
        except _Cancelled:
            pass
        except BaseException as err:  # noqa: B036 - any failure must reach the consumer
            _drop_locals(err)
            self._fail(err)
        finally:
            with self._cond:
                self._running -= 1
                last = self._running == 0
            if last and finished is not None:
                finished.set()

    def _claim(self, window: int | None) -> int | None:
        """The next range to read; with a window, wait until its slot has been consumed."""
        with self._cond:
            if self._next >= len(self._ranges) or self._cancel.is_set():
                return None
            index = self._next
            self._next += 1
            if window is not None:
                while index - self._consumed >= window and not self._cancel.is_set():
                    self._cond.wait()
            if self._cancel.is_set():
                return None
            return index

    def _fail(self, err: BaseException) -> None:
        """Keep the first error and stop everything."""
        with self._cond:
            if self._error is None and not self._cancel.is_set():
                self._error = err
                logger.debug("parallel read of %s failed: %r", self._source.path, err)
        self._cancel_workers()

    def _cancel_workers(self) -> None:
        self._cancel.set()
        with self._cond:
            self._cond.notify_all()
            # Under the lock: a reply is aborted only while its reader still holds it, never
            # after its connection went back to the pool for another request.
            for reply in self._replies.values():
                reply.abort()
        self._on_fail()

    def _raise_error(self) -> None:
        with self._cond:
            err = self._error
        if err is not None:
            raise err

    def _stop(self) -> None:
        """Cancel workers that may still run; wait (bounded) until none holds memory.

        Workers still waiting for a reply are not waited for: they hold no memory and leave
        as soon as their reply comes or times out.
        """
        # Always: a thread whose start() was interrupted may not look alive yet.
        self._cancel_workers()
        deadline = time.monotonic() + CANCEL_JOIN_TIMEOUT
        with self._cond:
            while self._holding and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            if self._holding:
                logger.warning("%d range readers did not let go in time", self._holding)
        grace = time.monotonic() + EXIT_GRACE
        for thread in self._threads:
            thread.join(max(0.0, grace - time.monotonic()))

    # -- one range --------------------------------------------------------------------------

    def _retrying(self) -> Retrying:
        """The network policy, made to give up at once when the run is cancelled."""
        base = self._base_retrying
        cancel = self._cancel
        base_stop = base.stop
        on_exhaust = base.retry_error_callback

        def stop(state: RetryCallState) -> bool:
            return cancel.is_set() or bool(base_stop(state))

        def sleep(seconds: float) -> None:
            cancel.wait(seconds)

        if on_exhaust is None:
            return base.copy(stop=stop, sleep=sleep)

        def exhausted(state: RetryCallState) -> Any:
            if cancel.is_set():
                raise _Cancelled()
            return on_exhaust(state)

        return base.copy(stop=stop, sleep=sleep, retry_error_callback=exhausted)

    def _fetch(
        self, start: int, end: int, make_target: Callable[[], Target], retrying: Retrying
    ) -> None:
        """Read [start, end), retrying the whole range on transport errors.

        The target (a view of the destination) exists only while a reply is being read: a
        worker still waiting for headers when the run is cancelled pins no memory.
        """
        n = end - start

        def read(reply: StreamedReply) -> None:
            target: Target | None = None
            holding = False
            try:
                self._check_reply(reply, start, end)
                # Registered before touching memory: once cancelled, either this sees it or
                # its reply is aborted, and cancellation waits for `target` to be released.
                self._hold(reply)
                holding = True
                target = make_target()
                got = 0
                while got < n:
                    if self._cancel.is_set():
                        raise _Cancelled()
                    with target.view(got, min(n - got, PIECE_SIZE)) as view:
                        m = reply.readinto(view)
                    if m == 0:
                        raise ChunkedEncodingError(
                            f"range [{start}, {end}) of {self._source.path} ended after "
                            f"{got} of {n} bytes"
                        )
                    target.commit(got, m)
                    got += m
                self._unwatch()
                if reply.readinto(memoryview(bytearray(1))):
                    raise ChunkedEncodingError(
                        f"range [{start}, {end}) of {self._source.path} sent more than {n} bytes"
                    )
            finally:
                self._unwatch()
                if target is not None:
                    target.release()
                if holding:
                    self._unhold()
                reply.close()

        if self._cancel.is_set():
            raise _Cancelled()
        self._source.read_range(start, end, read, retrying)

    def _check_reply(self, reply: StreamedReply, start: int, end: int) -> None:
        """The reply must be exactly the asked range of the object as sized by the HEAD."""
        path = self._source.path
        headers = reply.headers
        if reply.status_code == STATUS_PARTIAL_CONTENT:
            first, last, total = _parse_content_range(headers.get(_HEADER_CONTENT_RANGE))
            if total is not None and total != self._size:
                raise ObjectChangedError(path, f"size {self._size} became {total}")
            if first is not None and (first, last) != (start, end - 1):
                raise ChunkedEncodingError(
                    f"asked {path} for bytes {start}-{end - 1}, got {first}-{last}"
                )
        elif reply.status_code != STATUS_OK or (start, end) != (0, self._size):
            # A 200 is the whole object: fine only when that is what was asked.
            raise UnexpectedHTTPStatusCode([STATUS_PARTIAL_CONTENT], reply.status_code)
        length = content_length(headers)
        if length is not None and length != end - start:
            raise ChunkedEncodingError(
                f"range [{start}, {end}) of {path}: Content-Length {length}, expected {end - start}"
            )
        version = headers.get(_HEADER_AIS_VERSION)
        if version:
            with self._cond:
                if self._version is None:
                    self._version = version
                elif version != self._version:
                    raise ObjectChangedError(path, f"version {self._version} became {version}")

    def _hold(self, reply: StreamedReply) -> None:
        """Count this worker among those holding memory, and register its reply so that
        cancellation can wake its reads (`StreamedReply.abort`).

        Raises:
            _Cancelled: the run was cancelled already; nothing is held.
        """
        with self._cond:
            if self._cancel.is_set():
                raise _Cancelled()
            self._holding += 1
            self._replies[threading.get_ident()] = reply

    def _unhold(self) -> None:
        with self._cond:
            self._holding -= 1
            self._cond.notify_all()

    def _unwatch(self) -> None:
        with self._cond:
            self._replies.pop(threading.get_ident(), None)


def _drop_locals(err: BaseException) -> None:
    """Clear the finished frames of `err`'s traceback: their locals include views of the
    destination memory, which would keep it mapped for as long as the exception is kept."""
    pending: list[BaseException | None] = [err]
    seen: set[int] = set()
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        pending += [exc.__cause__, exc.__context__]


def _parse_content_range(value: str | None) -> tuple[int | None, int | None, int | None]:
    """(first, last, total) of `bytes first-last/total`; None for parts absent or `*`."""
    if not value:
        return None, None, None
    unit, _, spec = value.strip().partition(" ")
    if unit.lower() != "bytes":
        return None, None, None
    span, _, total = spec.partition("/")
    first = last = None
    if "-" in span:
        a, _, b = span.partition("-")
        try:
            first, last = int(a), int(b)
        except ValueError:
            first = last = None
    try:
        size = int(total)
    except ValueError:
        size = None
    return first, last, size
