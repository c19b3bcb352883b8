"""Waiting out a cold GET: poll an object's write lock before a timed-out GET is retried.

When a GET of a remote object times out, the likely cause is another request that holds the
object's write lock while it fetches the object from the backend. `LockPoller` asks the
cluster (`POST {"action": "check-lock"}` on the object: 423 while write-locked) and polls
with a backoff sized by the object's length until the lock is gone or `max_cold_wait`
passes. Our server keeps no remote buckets, so it never holds such a lock and answers 200:
the poller then returns after one request.

Example:
    >>> from aistore.sdk.retry_config import ColdGetConf
    >>> poller = LockPoller(executor, ColdGetConf(max_cold_wait=60))  # doctest: +SKIP
    >>> poller.wait_for_unlock(failed_request)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

import requests

from aistore.sdk import utils as utils
from aistore.sdk.const import (
    ACT_CHECK_LOCK,
    DEFAULT_COLD_GET_EST_BPS,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_POST,
    PROPS_SIZE,
    QPARAM_FLT_PRESENCE,
    QPARAM_NAMESPACE,
    QPARAM_PROPS,
    QPARAM_PROVIDER,
    STATUS_LOCKED,
    STATUS_OK,
)
from aistore.sdk.enums import FLTPresence
from aistore.sdk.errors import APIRequestError
from aistore.sdk.obj.object_attributes import ObjectAttributes
from aistore.sdk.request_executor import RequestExecutor as RequestExecutor
from aistore.sdk.retry_config import ColdGetConf
from aistore.sdk.types import ActionMsg
from aistore.sdk.utils import get_logger as get_logger

__all__ = [
    "MIN_WAIT_CEILING",
    "MIN_WAIT_FLOOR",
    "OBJ_SIZE_SCALING_FACTOR",
    "LockPoller",
    "logger",
]

logger = logging.getLogger(__name__)

# Bounds, in seconds, of the first pause between two lock checks.
MIN_WAIT_FLOOR = 2
MIN_WAIT_CEILING = 10
# The expected transfer time (size / bandwidth) divided by this is the first pause, and
# multiplied by it the longest one: a small factor paces polls by the expected time itself,
# a larger one starts sooner and backs off further.
OBJ_SIZE_SCALING_FACTOR = 4

# Path prefix of object URLs: /v1/objects/<bucket>/<object>.
_OBJECTS_PATH = "/v1/objects/"


class RequestSender(Protocol):
    """What the poller sends its requests through: the official SDK's `RequestExecutor`."""

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response: ...


class LockPoller:
    """Delays a retry while the object of a failed GET is write-locked by a cold GET.

    Example:
        >>> poller = LockPoller(client._request_client, ColdGetConf())  # doctest: +SKIP
        >>> poller.wait_for_unlock(response.request)  # doctest: +SKIP

    Args:
        executor: sends requests to the cluster (`request(method, path, params=, data=)`,
            with `path` relative to `/v1/`), e.g. the client's `RequestClient`.
        sleep: how to pause between checks (tests pass their own clock).
        cold_get_conf: how long to wait at most and the bandwidth that sizes the pauses.
    """

    def __init__(
        self,
        executor: RequestSender,
        cold_get_conf: ColdGetConf,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._executor = executor
        self._cold_get_conf = cold_get_conf
        self._sleep = sleep

    def wait_for_unlock(self, req: requests.PreparedRequest) -> None:
        """Return once the object `req` addressed is not write-locked, or after `max_cold_wait`.

        A failed check counts as "not locked": the caller's own retry handles it.
        """
        path, params = _object_path_and_params(req.url or "")
        if not self._is_write_locked(path, params):
            return
        size = self._head_size(path, params)
        first, longest = self._pauses(size)
        logger.debug("'%s' is write-locked; polling until free (size %d bytes)", path, size)
        deadline = time.monotonic() + self._cold_get_conf.max_cold_wait
        pause = first
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._sleep(min(pause, left))
            if not self._is_write_locked(path, params):
                return
            pause = min(pause * 2, longest)

    def _pauses(self, size: int) -> tuple[float, float]:
        """First and longest pause between checks for an object of `size` bytes."""
        bandwidth = self._cold_get_conf.est_bandwidth_bps
        expected = size / (bandwidth if bandwidth > 0 else DEFAULT_COLD_GET_EST_BPS)
        first = min(max(expected / OBJ_SIZE_SCALING_FACTOR, MIN_WAIT_FLOOR), MIN_WAIT_CEILING)
        cap = min(self._cold_get_conf.max_cold_wait // 2, int(expected * OBJ_SIZE_SCALING_FACTOR))
        return first, max(first, cap)

    def _is_write_locked(self, path: str, params: Mapping[str, str]) -> bool:
        try:
            resp = self._executor.request(
                HTTP_METHOD_POST,
                path,
                params=dict(params),
                data=ActionMsg(action=ACT_CHECK_LOCK).model_dump_json(),
            )
        except APIRequestError as err:
            # A sender that raises on error statuses (our `RequestClient`) reports 423 so.
            return err.status_code == STATUS_LOCKED
        except requests.RequestException as err:
            logger.warning("check-lock of '%s' failed (%s); not waiting", path, err)
            return False
        return resp.status_code == STATUS_LOCKED

    def _head_size(self, path: str, params: Mapping[str, str]) -> int:
        """The object's size from a HEAD that does not wait for the lock; 0 if unknown."""
        presence = (
            FLTPresence.FLT_EXISTS
            if self._cold_get_conf.enable_remote_head
            else FLTPresence.FLT_PRESENT
        )
        head_params = {
            **params,
            QPARAM_FLT_PRESENCE: str(presence.value),
            QPARAM_PROPS: PROPS_SIZE,
        }
        try:
            resp = self._executor.request(HTTP_METHOD_HEAD, path, params=head_params)
        except (APIRequestError, requests.RequestException) as err:
            logger.debug("HEAD of '%s' failed (%s); pacing as for size 0", path, err)
            return 0
        if resp.status_code != STATUS_OK:
            return 0
        return ObjectAttributes(resp.headers).size


def _object_path_and_params(url: str) -> tuple[str, dict[str, str]]:
    """`objects/<bck>/<obj>` (as sent, still URL-encoded) and the bucket's query parameters."""
    parts = urlsplit(url)
    start = parts.path.find(_OBJECTS_PATH)
    path = parts.path[start + len("/v1/") :] if start >= 0 else parts.path.lstrip("/")
    keep = (QPARAM_PROVIDER, QPARAM_NAMESPACE)
    params = {k: v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in keep}
    return path, params
