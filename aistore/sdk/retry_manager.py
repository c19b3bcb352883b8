"""Where every request of a client is retried: HTTP statuses and network failures, both
transports alike.

Two policies, both from `RetryConfig`:

- the status policy (`http_retry`, a `urllib3.util.Retry`) resends a request whose reply has
  a retryable status (429, 5xx) to the same URL, after its backoff, for the methods it allows
  (idempotent ones by default); once it is spent, `requests.exceptions.RetryError` is raised,
  as `requests` raises it;
- the network policy (`network_retry`, a tenacity `Retrying`) starts over at the proxy, which
  can pick another target when one is down, after connection errors and timeouts, including
  a body that breaks off while it is read.

A request is sent again only by these two policies: the transports never resend. An error
status (>= 400) that the status policy does not retry is handed back to the caller, never
retried by the network policy.

Example:
    >>> from aistore.sdk.retry_manager import RetryManager
    >>> manager = RetryManager(executor)
    >>> resp = manager.with_retry(executor.request, "GET", "cluster")
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from requests.exceptions import RetryError, UnrewindableBodyError
from tenacity import Retrying
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from aistore._internal.body import Reply
from aistore._internal.transport import MAX_ERROR_BODY
from aistore.sdk import utils as utils
from aistore.sdk.const import HTTP_METHOD_GET as HTTP_METHOD_GET
from aistore.sdk.const import URL_PATH_OBJECTS as URL_PATH_OBJECTS
from aistore.sdk.lock_poller import LockPoller as LockPoller
from aistore.sdk.request_executor import RequestExecutor
from aistore.sdk.retry_config import RetryConfig

__all__ = ["RetryManager", "logger"]

logger = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True)
class ErrorReply:
    """A reply with an error status (>= 400) the retry policies gave up on: what the response
    handler needs to raise the error.

    Example:
        >>> ErrorReply(404, {}, b"not found", "GET", "http://h/v1/objects/b/o").status
        404
    """

    status: int
    headers: Mapping[str, str]
    body: bytes
    method: str
    url: str


class _StatusView:
    """What `urllib3.util.Retry.increment` and `sleep` read of a response."""

    def __init__(self, reply: Reply) -> None:
        self.status = reply.status
        self.headers = reply.headers

    def get_redirect_location(self) -> bool:
        return False


def _is_stream_body(data: Any) -> bool:
    """A body that is consumed by sending it (file-like or generator) and must be rewound."""
    if data is None or isinstance(data, (str, bytes, bytearray, memoryview, list, tuple, Mapping)):
        return False
    return hasattr(data, "read") or hasattr(data, "__iter__")


class RetryManager:
    """Applies a client's retry policies to its requests.

    Example:
        >>> manager = RetryManager(executor, RetryConfig.default())
        >>> manager.retry_config.http_retry.total
        5

    Args:
        executor: sends the requests; its session manager's `retry` is the status policy
            (`retry_config.http_retry` when it has none).
        retry_config: both policies (`RetryConfig.default()` when None).
    """

    def __init__(self, executor: RequestExecutor, retry_config: RetryConfig | None = None) -> None:
        self._executor = executor
        self._retry_config = retry_config if retry_config is not None else RetryConfig.default()
        self._retrying: Retrying = self._retry_config.network_retry.copy()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_retrying"] = None  # tenacity objects hold closures; rebuilt below
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._retrying = self._retry_config.network_retry.copy()

    @property
    def retry_config(self) -> RetryConfig:
        """The policies this manager applies."""
        return self._retry_config

    def with_retry(self, request_func: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """`request_func(*args, **kwargs)` under the network policy; it starts over at the
        proxy, not at the target a failed attempt went to, unlike a urllib3 retry."""
        return self._network_retried(lambda: request_func(*args, **kwargs), None, None)

    def send(
        self,
        method: str,
        url: str,
        send_once: Callable[[], Reply],
        read: Callable[[Reply], R],
        body: Any = None,
        retrying: Retrying | None = None,
    ) -> R | ErrorReply:
        """Send a request with `send_once` under both policies and let `read` consume a reply
        with a status below 400 (and close it): a transport error inside `read` is retried
        like one while sending. A reply with another status comes back as an `ErrorReply`.

        Args:
            body: the request's body, rewound before a network retry when it is a stream.
            retrying: the network policy for this request (the client's by default).

        Raises:
            requests.exceptions.RetryError: the status policy is spent.
            requests.exceptions.UnrewindableBodyError: a stream body cannot be sent again.
        """
        status_policy = self._executor.session_manager.retry or self._retry_config.http_retry

        def attempt() -> R | ErrorReply:
            policy: Retry = status_policy
            while True:
                reply = send_once()
                status = reply.status
                if status >= 400 and policy.is_retry(
                    method, status, "Retry-After" in reply.headers
                ):
                    view: Any = _StatusView(reply)
                    try:
                        policy = policy.increment(method, url, response=view)
                    except MaxRetryError as err:
                        if policy.raise_on_status:
                            reply.close(MAX_ERROR_BODY)
                            raise RetryError(err) from err
                    else:
                        reply.close(MAX_ERROR_BODY)
                        policy.sleep(view)
                        continue
                if status < 400:
                    return read(reply)
                try:
                    data = reply.read(MAX_ERROR_BODY)
                finally:
                    reply.close()
                return ErrorReply(status, reply.headers, data, method, url)

        return self._network_retried(attempt, body, retrying)

    def _network_retried(self, op: Callable[[], R], body: Any, retrying: Retrying | None) -> R:
        """Run `op` under the network policy, rewinding a stream body before each repeat."""
        retrying = retrying if retrying is not None else self._retrying
        if not _is_stream_body(body):
            return _retried(retrying, op)
        try:
            start: int | None = body.tell()
        except (AttributeError, OSError, ValueError):
            start = None
        attempted = False

        def rewind_then_op() -> R:
            nonlocal attempted
            if attempted:
                if start is None:
                    raise UnrewindableBodyError("Cannot replay the upload stream")
                try:
                    body.seek(start)
                except (AttributeError, OSError, ValueError) as err:
                    raise UnrewindableBodyError("Cannot rewind the upload stream") from err
            attempted = True
            return op()

        return _retried(retrying, rewind_then_op)


def _retried(retrying: Retrying, op: Callable[[], R]) -> R:
    """`retrying(op)`, with the first attempt made outside tenacity, whose cost per call is a
    visible share of a small GET's (docs/architecture.md, "Measured choices"). A failure of
    that attempt is handed to the policy as its own first attempt, so what is retried, how
    often and how long it waits do not change."""
    try:
        return op()
    except Exception as err:  # noqa: BLE001 - the policy decides what to do with it
        first: Exception | None = err

    def replay_then_op() -> R:
        nonlocal first
        if first is not None:
            err, first = first, None
            raise err
        return op()

    return retrying(replay_then_op)
