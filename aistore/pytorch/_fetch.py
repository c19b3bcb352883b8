"""Fetching object contents for the datasets: the ETL parameter, an ordered read-ahead over a
small thread pool, a batch of objects by one GetBatch, and progress bars.

Threads (not processes) read ahead: a GET spends its time waiting on the socket with the GIL
released, and threads can start inside DataLoader workers, which are daemonic and may not have
children. The SDK's per-process HTTP session serves all threads of a process (urllib3's pool is
thread-safe); `ensure_pool_size` keeps a connection per thread.

Example:
    >>> list(read_ahead(iter([1, 2, 3]), lambda x: x * 10, depth=2))
    [10, 20, 30]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import requests

from aistore.sdk.batch.batch import Batch
from aistore.sdk.const import QPARAM_ETL_NAME
from aistore.sdk.errors import AISError
from aistore.sdk.obj.object import Object

__all__ = ["EtlName", "fetch_bytes", "progress", "read_ahead", "read_batch", "single_target"]

T = TypeVar("T")
R = TypeVar("R")


class EtlName:
    """The ETL an object GET goes through, by name (the cluster must already run it).

    Example:
        >>> params = {}; EtlName("resize").update_qparams(params); params
        {'etl_name': 'resize'}
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def update_qparams(self, params: dict[str, str]) -> None:
        """Add the ETL to a request's query parameters."""
        params[QPARAM_ETL_NAME] = self.name


def fetch_bytes(obj: Object, etl: EtlName | None) -> bytes:
    """The whole content of `obj` (through `etl` if given)."""
    content = obj.get_reader(etl=etl).read_all()
    assert isinstance(content, bytes)
    return content


def single_target(obj: Object) -> bool:
    """Whether `obj`'s cluster has one target in service (a map that cannot be had: False)."""
    try:
        smap = obj._client.get_smap()  # noqa: SLF001 - the client the object reads through
    except Exception:  # noqa: BLE001 - no map (refused, not AIS): the per-object path
        return False
    return sum(1 for t in smap.tmap.values() if not t.in_maint_or_decomm()) == 1


def read_batch(objects: list[Object]) -> list[tuple[str, bytes]] | None:
    """`(name, content)` of each object, in order, by one GetBatch request; None if it failed
    (the caller reads them one by one and so raises the per-object errors)."""
    client = objects[0]._client  # noqa: SLF001 - the client the objects read through
    batch = Batch(request_client=client, objects=objects, cont_on_err=False)
    try:
        items = [(obj.name, data) for obj, (_, data) in zip(objects, batch.get(), strict=True)]
    except (AISError, requests.RequestException):  # read again one by one: their own errors
        return None
    return items  # type: ignore[return-value]


def read_ahead(items: Iterator[T], fn: Callable[[T], R], depth: int) -> Iterator[R]:
    """`fn(item)` for each item, in order, with up to `depth` calls running ahead of the
    consumer on as many threads. `depth` 0 calls `fn` in the consumer's thread, one at a time.

    An exception from `fn` is raised when its item's turn comes. Closing the generator (a
    `break` in the consumer) cancels what has not started and does not wait for the rest.
    Memory: at most `depth + 1` results are held.
    """
    if depth <= 0:
        for item in items:
            yield fn(item)
        return
    pool = ThreadPoolExecutor(depth, thread_name_prefix="ais-read-ahead")
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) > depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


def progress(items: Iterable[T], title: str, unit: str) -> Iterator[T]:
    """`items` with a tqdm progress bar named `title` counting `unit`s."""
    from tqdm import tqdm

    bar: Iterable[T] = tqdm(items, desc=title, unit=unit)
    return iter(bar)
