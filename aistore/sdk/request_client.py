"""The client every bucket, object and job object sends its requests through.

Three parts, the official SDK's seams: a `RequestExecutor` sends one request (by the
transport `select_transport` picks), the `RetryManager` sends it again when a retry policy
says so (statuses and network failures, in that one place), and the response handler turns
an error reply into an exception, once, after the retries.

Example:
    >>> from aistore import Client
    >>> rc = Client("http://localhost:8080")._request_client
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Literal, TypeVar
from urllib.parse import urlencode, urljoin

import requests
from tenacity import Retrying

from aistore._internal.body import Reply, as_response
from aistore._internal.codec import decode_response
from aistore._internal.config import TimeoutArg
from aistore._internal.transport import with_query
from aistore.sdk.const import HEADER_CONNECTION as HEADER_CONNECTION
from aistore.sdk.const import HEADER_CONTENT_LENGTH as HEADER_CONTENT_LENGTH
from aistore.sdk.const import HEADER_LOCATION as HEADER_LOCATION
from aistore.sdk.const import HTTP_METHOD_GET, QPARAM_WHAT, URL_PATH_DAEMON, WHAT_SMAP
from aistore.sdk.const import HTTPS as HTTPS
from aistore.sdk.const import STATUS_REDIRECT_PERM as STATUS_REDIRECT_PERM
from aistore.sdk.const import STATUS_REDIRECT_TMP as STATUS_REDIRECT_TMP
from aistore.sdk.direct_reads import DirectReads
from aistore.sdk.request_executor import RequestExecutor
from aistore.sdk.response_handler import AISResponseHandler, ResponseHandler
from aistore.sdk.retry_config import RetryConfig
from aistore.sdk.retry_manager import ErrorReply, RetryManager
from aistore.sdk.session_manager import SessionManager
from aistore.sdk.types import Smap
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["RequestClient", "logger"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class RequestClient:
    """Sends requests to one AIS endpoint with the client's retry policy and error mapping.

    Example:
        >>> rc = RequestClient("http://localhost:8080", SessionManager())
        >>> rc.base_url
        'http://localhost:8080/v1'

    Args:
        endpoint: cluster URL; `/v1` is appended by `urljoin` rules.
        session_manager: the per-process pools.
        timeout: default (connect, read) timeout, None for no limit.
        token: bearer token ("" for none).
        response_handler: maps error replies to exceptions (AIS rules by default).
        retry_config: retry policy (`RetryConfig.default()` when None).
    """

    def __init__(
        self,
        endpoint: str,
        session_manager: SessionManager,
        timeout: TimeoutArg = None,
        token: str = "",
        response_handler: ResponseHandler | None = None,
        retry_config: RetryConfig | None = None,
    ) -> None:
        self._executor = RequestExecutor(urljoin(endpoint, "v1"), session_manager, token, timeout)
        self._response_handler = response_handler or AISResponseHandler()
        self._retry_manager = RetryManager(self._executor, retry_config)
        self._smap: Smap | None = None
        self._direct_reads: DirectReads | None = None

    @property
    def base_url(self) -> str:
        """Endpoint including `/v1`."""
        return self._executor.base_url

    @property
    def timeout(self) -> TimeoutArg:
        """Default timeout of requests."""
        return self._executor.timeout

    @timeout.setter
    def timeout(self, timeout: TimeoutArg) -> None:
        self._executor.timeout = timeout

    @property
    def session_manager(self) -> SessionManager:
        """Source of the per-process pools."""
        return self._executor.session_manager

    @session_manager.setter
    def session_manager(self, session_manager: SessionManager) -> None:
        self._executor.session_manager = session_manager

    @property
    def token(self) -> str:
        """Bearer token sent with every request."""
        return self._executor.token

    @token.setter
    def token(self, token: str) -> None:
        self._executor.token = token

    @property
    def retry_config(self) -> RetryConfig:
        """Retry policy of this client."""
        return self._retry_manager.retry_config

    def get_smap(self, force_update: bool = False) -> Smap:
        """The cluster map, fetched once and cached unless `force_update`."""
        if self._smap is None or force_update:
            self._smap = self.request_deserialize(
                HTTP_METHOD_GET, URL_PATH_DAEMON, Smap, params={QPARAM_WHAT: WHAT_SMAP}
            )
        return self._smap

    @property
    def redirected(self) -> bool:
        """Whether the endpoint ever answered with a redirect (a proxy in front of targets)."""
        return self._executor.redirected

    @property
    def direct_reads(self) -> DirectReads:
        """Where this client's object reads go: the owning targets, where the map allows it."""
        if self._direct_reads is None:
            self._direct_reads = DirectReads(self)
        return self._direct_reads

    def clone(
        self, base_url: str | None = None, response_handler: ResponseHandler | None = None
    ) -> RequestClient:
        """A client with the same settings for another endpoint (e.g. one target)."""
        url = base_url or self.base_url
        if not url.endswith("/v1"):
            url = urljoin(url, "v1")
        return RequestClient(
            endpoint=url,
            session_manager=self.session_manager,
            timeout=self.timeout,
            token=self.token,
            response_handler=response_handler or self._response_handler,
            retry_config=self.retry_config,
        )

    def request_deserialize(self, method: str, path: str, res_model: type[T], **kwargs: Any) -> T:
        """`request()` and decode the reply into `res_model` (msgpack or JSON)."""
        resp = self.request(method, path, **kwargs)
        result: T = decode_response(res_model, resp)
        return result

    def request(
        self,
        method: str,
        path: str,
        endpoint: str | None = None,
        headers: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        """Send `method` to `<base>/<path>` and return the reply, as a `requests.Response`, if
        its status is below 400.

        Args:
            method: HTTP method.
            path: path under `/v1`.
            endpoint: another endpoint of the cluster for this request only.
            headers: extra headers; the SDK's Content-Type, User-Agent and Authorization win.
            kwargs: `params`, `data`, `stream`, `timeout`, `allow_redirects`; others (`json`...)
                go to `requests.Session.request`. Over HTTPS a `data` body goes in two steps
                (see `RequestsTransport`).

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status.
            requests.exceptions.RetryError: the status retry policy is spent.
            requests.exceptions.UnrewindableBodyError: a retry cannot rewind a stream body.
        """
        params = kwargs.pop("params", None)
        body = kwargs.pop("data", None)
        stream = bool(kwargs.pop("stream", False))
        timeout = kwargs.pop("timeout", self.timeout)
        follow = bool(kwargs.pop("allow_redirects", True))
        # What only `requests` does (`json=`, `files=`, a streamed body left to the caller,
        # redirects kept) goes through it; a whole reply, by the transport `select_transport` picks.
        requests_only = (
            {**kwargs, "follow_redirects": follow} if stream or not follow or kwargs else None
        )
        method = method.upper()
        target = self._target(path, params, endpoint)
        response = partial(as_response, method=method, url=target)
        return self._send(method, target, response, headers, body, stream, timeout, requests_only)

    def send(
        self,
        method: str,
        path: str,
        read: Callable[[Reply], R],
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        stream: bool = True,
        retrying: Retrying | None = None,
    ) -> R:
        """The client's own path: send a request by the transport `select_transport` picks and
        let `read` consume a reply with a status below 400, both inside one retried step.

        Args:
            read: consumes the reply (and closes it, or hands it on to its new owner); a
                transport error inside it is retried like one while sending.
            stream: False to read a 2xx body before `read` is called.
            retrying: the network retry policy for this request (the client's by default).

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status; never retried.
            requests.exceptions.RetryError: the status retry policy is spent.
        """
        method = method.upper()
        target = self._target(path, params, None)
        return self._send(method, target, read, headers, body, stream, "default", None, retrying)

    def _send(
        self,
        method: str,
        target: str,
        read: Callable[[Reply], R],
        headers: Mapping[str, Any] | None,
        body: Any,
        stream: bool,
        timeout: TimeoutArg | Literal["default"],
        requests_only: Mapping[str, Any] | None,
        retrying: Retrying | None = None,
    ) -> R:
        """The one way requests leave: each attempt by the executor, retried by the retry
        manager, an error status raised by the response handler once the retries are over."""

        def send_once() -> Reply:
            return self._executor.send(
                method, target, headers, body, stream, timeout, requests_only
            )

        outcome = self._retry_manager.send(method, target, send_once, read, body, retrying)
        if isinstance(outcome, ErrorReply):
            self._response_handler.raise_for_status(
                outcome.status, outcome.headers, outcome.body, outcome.method, outcome.url
            )
            raise AssertionError("an error status passed the response handler")
        return outcome

    def get_full_url(self, path: str, params: Mapping[str, Any]) -> str:
        """Absolute URL of `path` with `params` as query string."""
        return f"{self.base_url}/{path.lstrip('/')}?{urlencode(params)}"

    def _target(self, path: str, params: Mapping[str, Any] | None, endpoint: str | None) -> str:
        """The absolute URL of `path` with `params` as its query: built once per request."""
        base = urljoin(endpoint, "v1") if endpoint else self.base_url
        return with_query(f"{base}/{path.lstrip('/')}", params)
