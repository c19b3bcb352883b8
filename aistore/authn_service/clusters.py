"""Talking to registered clusters: the signer check at registration and revocation pushes.

Wire (as AIS AuthN sends them, `cmd/authn` → proxy `/v1/tokens`, no Authorization header):
- `POST <url>/v1/tokens`, body `authn.ServerConf` (`{"secret": sha256-hex of the HMAC secret,
  "public_key": PEM or null, ...}`): "will you accept tokens signed like this?"; 2xx is yes.
- `DELETE <url>/v1/tokens`, body `{"tokens": [<jwt>...], "version": "0"}`: add them to the
  cluster's revoked set.
A cluster with several URLs is tried URL by URL until one answers 2xx.

`RevocationPusher` sends pushes from its own threads, never the request's: a revocation is
answered as soon as it is stored. Each call is bounded (`timeout`); a failed push is retried with
a doubling delay (from `retry_initial` up to `retry_max`) until it lands, the cluster is
unregistered, or every token in it has expired. Pending pushes live in memory, bounded by
`max_pending`; after a restart the service pushes the whole revoked list again (`push_all`).

Example:
    >>> pusher = RevocationPusher(client, urls.get)  # doctest: +SKIP
    >>> pusher.push("cluster-uuid", ["<jwt>"], expires_at=1790000000)  # doctest: +SKIP
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import requests

__all__ = ["ClusterCallError", "ClusterClient", "RevocationPusher"]

logger = logging.getLogger("aistore.authn")


class ClusterCallError(RuntimeError):
    """No URL of a cluster accepted the call; the message says what each answered."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status  # the last HTTP status a cluster answered (0: none answered)


class ClusterClient:
    """HTTP calls to cluster proxies, each bounded by `timeout` seconds.

    Args:
        timeout: seconds for connecting and for each read.
        verify: `requests` TLS verification: True, False, or a CA bundle path.
    """

    def __init__(self, timeout: float = 5.0, verify: bool | str = True) -> None:
        self._timeout = timeout
        self._verify = verify

    def call(self, urls: Sequence[str], method: str, body: dict[str, Any]) -> None:
        """Send `method /v1/tokens` with a JSON body to the first URL that answers 2xx.

        Raises:
            ClusterCallError: no URL did.
        """
        data = json.dumps(body).encode()
        failures, status = [], 0
        for url in urls:
            target = url.rstrip("/") + "/v1/tokens"
            try:
                # A fresh connection each time: calls are rare, and a dead pooled connection to
                # a restarted proxy must not cost a retry.
                resp = requests.request(
                    method,
                    target,
                    data=data,
                    headers={"Content-Type": "application/json"},
                    timeout=self._timeout,
                    verify=self._verify,
                )
            except requests.RequestException as e:
                failures.append(f"{target}: {type(e).__name__}")
                continue
            if 200 <= resp.status_code < 300:
                return
            status = resp.status_code
            failures.append(f"{target}: HTTP {resp.status_code} {resp.text[:200].strip()}")
        raise ClusterCallError("; ".join(failures) or "no URLs", status)


@dataclass(order=True)
class _Push:
    due: float
    seq: int
    cluster_id: str = field(compare=False)
    tokens: list[str] = field(compare=False)
    expires_at: float = field(compare=False)
    delay: float = field(compare=False)


class RevocationPusher:
    """Pushes revoked tokens to clusters in the background; see the module docstring.

    Args:
        client: the HTTP caller.
        urls_of: the URLs of a registered cluster, or None once it is unregistered.
        now: the clock (seconds since the epoch).
        workers: pushes in flight at once (a dead cluster holds one worker ≤ `timeout`).
    """

    def __init__(
        self,
        client: ClusterClient,
        urls_of: Callable[[str], list[str] | None],
        now: Callable[[], float] = time.time,
        workers: int = 4,
        retry_initial: float = 3.0,
        retry_max: float = 60.0,
        max_pending: int = 10_000,
    ) -> None:
        self._client = client
        self._urls_of = urls_of
        self._now = now
        self._retry_initial = retry_initial
        self._retry_max = retry_max
        self._max_pending = max_pending
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="authn-push")
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._heap: list[_Push] = []  # guarded by _cond: pushes waiting for their due time
        self._stopped = False  # guarded by _cond
        self._thread = threading.Thread(target=self._run, name="authn-push-sched", daemon=True)
        self._thread.start()

    def push(self, cluster_id: str, tokens: list[str], expires_at: float) -> None:
        """Queue a push of `tokens` to one cluster, due now."""
        self._schedule(_Push(0.0, next(self._seq), cluster_id, tokens, expires_at, 0.0))

    def _schedule(self, item: _Push) -> None:
        with self._cond:
            if self._stopped:
                return
            if len(self._heap) >= self._max_pending:
                dropped = heapq.heappop(self._heap)  # the earliest due: it has waited longest
                logger.error(
                    "revocation push queue full (%d): dropped a push to cluster %s",
                    self._max_pending,
                    dropped.cluster_id,
                )
            heapq.heappush(self._heap, item)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0].due > self._now()):
                    wait = self._heap[0].due - self._now() if self._heap else None
                    self._cond.wait(wait)
                if self._stopped:
                    return
                item = heapq.heappop(self._heap)
            self._pool.submit(self._attempt, item)

    def _attempt(self, item: _Push) -> None:
        try:
            self._try(item)
        except Exception:  # a bug here must be seen, not vanish into the pool's future
            logger.exception("revocation push to cluster %s failed", item.cluster_id)

    def _try(self, item: _Push) -> None:
        urls = self._urls_of(item.cluster_id)
        if urls is None:
            return  # unregistered meanwhile
        if item.expires_at <= self._now():
            return  # nothing left to revoke: every token expired on its own
        try:
            self._client.call(urls, "DELETE", {"tokens": item.tokens, "version": "0"})
        except ClusterCallError as e:
            delay = min(self._retry_max, max(self._retry_initial, item.delay * 2))
            logger.warning(
                "revocation push to cluster %s failed (%s); retrying in %.0fs",
                item.cluster_id,
                e,
                delay,
            )
            retry = _Push(
                self._now() + delay,
                next(self._seq),
                item.cluster_id,
                item.tokens,
                item.expires_at,
                delay,
            )
            self._schedule(retry)
            return
        logger.info("pushed %d revoked token(s) to cluster %s", len(item.tokens), item.cluster_id)

    def pending(self) -> int:
        """Pushes waiting for a retry or their turn."""
        with self._cond:
            return len(self._heap)

    def stop(self) -> None:
        """Stop scheduling; pushes in flight finish within the client's timeout."""
        with self._cond:
            self._stopped = True
            self._heap.clear()
            self._cond.notify()
        self._thread.join()
        self._pool.shutdown(wait=True)
