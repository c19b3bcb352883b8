"""Retry policy: urllib3 for HTTP status codes, tenacity for network failures.

The two layers differ in where they resend: urllib3 repeats the request to the same URL
(a target after a redirect), tenacity starts over at the proxy, which can pick another
target when one is down.

Example:
    >>> from aistore.sdk.retry_config import RetryConfig
    >>> config = RetryConfig.default()
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, NoReturn

from requests.exceptions import ChunkedEncodingError, ConnectTimeout, ReadTimeout
from requests.exceptions import ConnectionError as RequestsConnectionError
from tenacity import (
    RetryCallState,
    Retrying,
    before_sleep_log,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError
from urllib3.util.retry import Retry

from aistore.sdk.const import DEFAULT_COLD_GET_EST_BPS, DEFAULT_COLD_GET_MAX_WAIT
from aistore.sdk.errors import AISRetryableError

__all__ = ["NETWORK_RETRY_EXCEPTIONS", "ColdGetConf", "RetryConfig"]

NETWORK_RETRY_EXCEPTIONS: tuple[type[BaseException], ...] = (
    ConnectTimeout,
    ReadTimeout,
    ChunkedEncodingError,
    RequestsConnectionError,
    AISRetryableError,
    Urllib3TimeoutError,
)


# The package's logger, never the root one: an application decides where retries are logged.
logger = logging.getLogger(__name__)


def _log_and_raise_on_exhaust(retry_state: RetryCallState) -> NoReturn:
    """Once retries run out, log the last error with its traceback and re-raise it as is."""
    outcome = retry_state.outcome
    err = outcome.exception() if outcome is not None else None
    if err is None:
        raise RuntimeError("retries exhausted without an exception")
    logger.error("All retries exhausted; request failed", exc_info=err)
    raise err


@dataclass
class ColdGetConf:
    """How long to wait for a remote object that the cluster is still fetching (cold GET).

    Example:
        >>> ColdGetConf().max_cold_wait
        180

    Attributes:
        est_bandwidth_bps: assumed backend bandwidth, bytes/s (10 Gbit/s by default).
        max_cold_wait: seconds to wait for the object's write lock within one retry.
        enable_remote_head: whether to ask the backend for the size when unknown locally.
    """

    est_bandwidth_bps: int = DEFAULT_COLD_GET_EST_BPS
    max_cold_wait: int = DEFAULT_COLD_GET_MAX_WAIT
    enable_remote_head: bool = True


@dataclass
class RetryConfig:
    """Both retry layers of a client.

    Example:
        >>> default = RetryConfig.default()
        >>> cfg = RetryConfig(http_retry=Retry(total=0), network_retry=default.network_retry)

    Attributes:
        http_retry: urllib3 policy for 429/5xx replies (idempotent methods only).
        network_retry: tenacity policy for connection errors and timeouts.
        cold_get_conf: see `ColdGetConf`.

    Pickling drops `network_retry` (tenacity objects hold closures) and rebuilds it from
    `default()` on the other side, so a customised tenacity policy does not reach workers.
    """

    http_retry: Retry
    network_retry: Retrying
    cold_get_conf: ColdGetConf = field(default_factory=ColdGetConf)

    @staticmethod
    def default() -> RetryConfig:
        """5 status retries with 3 s exponential backoff (~93 s); 7 network attempts."""
        return RetryConfig(
            http_retry=Retry(
                total=5,
                backoff_factor=3.0,
                status_forcelist=[429, 500, 502, 503, 504],
                connect=0,
                read=0,
            ),
            network_retry=Retrying(
                wait=wait_random_exponential(multiplier=1, min=1, max=30),
                stop=stop_after_attempt(7),
                retry=retry_if_exception_type(NETWORK_RETRY_EXCEPTIONS),
                before_sleep=before_sleep_log(logger, logging.WARNING),
                retry_error_callback=_log_and_raise_on_exhaust,
            ),
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["network_retry"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.network_retry = RetryConfig.default().network_retry
