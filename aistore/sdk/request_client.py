"""The client every bucket, object and job object sends its requests through.

A request is sent by `aistore._internal.transport` (sessions, headers, redirects), repeated
by the network retry policy on connection errors and timeouts, and only then checked by the
response handler, so HTTP error statuses are never retried at this level (urllib3 handles
429/5xx below).

Example:
    >>> from aistore import Client
    >>> rc = Client("http://localhost:8080")._request_client
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlencode, urljoin

import requests
from requests.exceptions import UnrewindableBodyError
from tenacity import Retrying

from aistore._internal.body import BodyReader, NativeBodyReader, StreamedReply
from aistore._internal.codec import decode_response
from aistore._internal.config import TimeoutArg
from aistore._internal.transport import NativeStream, SessionManager, Transport
from aistore.sdk.const import (
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    HTTPS,
    QPARAM_WHAT,
    URL_PATH_DAEMON,
    WHAT_SMAP,
)
from aistore.sdk.errors import UnexpectedHTTPStatusCode
from aistore.sdk.response_handler import AISResponseHandler, ResponseHandler
from aistore.sdk.retry_config import RetryConfig
from aistore.sdk.types import Smap

__all__ = ["RequestClient"]

T = TypeVar("T")
R = TypeVar("R")

# Keyword arguments the native path (`Transport.fetch`, `head`) can send; others go the
# regular way.
_FETCH_KWARGS = frozenset(("params",))


def _is_stream_body(data: Any) -> bool:
    """A body that is consumed by sending it (file-like or generator) and must be rewound."""
    if data is None or isinstance(data, (str, bytes, bytearray, memoryview, list, tuple, Mapping)):
        return False
    return hasattr(data, "read") or hasattr(data, "__iter__")


class RequestClient:
    """Sends requests to one AIS endpoint with the client's retry policy and error mapping.

    Example:
        >>> rc = RequestClient("http://localhost:8080", SessionManager())
        >>> rc.base_url
        'http://localhost:8080/v1'

    Args:
        endpoint: cluster URL; `/v1` is appended by `urljoin` rules.
        session_manager: per-process `requests` sessions.
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
        self._transport = Transport(urljoin(endpoint, "v1"), session_manager, token, timeout)
        self._response_handler = response_handler or AISResponseHandler()
        self._retry_config = retry_config if retry_config is not None else RetryConfig.default()
        self._retrying: Retrying = self._retry_config.network_retry.copy()
        self._smap: Smap | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_retrying"] = None  # tenacity objects hold closures; rebuilt below
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._retrying = self._retry_config.network_retry.copy()

    @property
    def base_url(self) -> str:
        """Endpoint including `/v1`."""
        return self._transport.base_url

    @property
    def timeout(self) -> TimeoutArg:
        """Default timeout of requests."""
        return self._transport.timeout

    @timeout.setter
    def timeout(self, timeout: TimeoutArg) -> None:
        self._transport.timeout = timeout

    @property
    def session_manager(self) -> SessionManager:
        """Source of the per-process sessions."""
        return self._transport.session_manager

    @session_manager.setter
    def session_manager(self, session_manager: SessionManager) -> None:
        self._transport.session_manager = session_manager

    @property
    def token(self) -> str:
        """Bearer token sent with every request."""
        return self._transport.token

    @token.setter
    def token(self, token: str) -> None:
        self._transport.token = token

    @property
    def retry_config(self) -> RetryConfig:
        """Retry policy of this client."""
        return self._retry_config

    def get_smap(self, force_update: bool = False) -> Smap:
        """The cluster map, fetched once and cached unless `force_update`."""
        if self._smap is None or force_update:
            self._smap = self.request_deserialize(
                HTTP_METHOD_GET, URL_PATH_DAEMON, Smap, params={QPARAM_WHAT: WHAT_SMAP}
            )
        return self._smap

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
            retry_config=self._retry_config,
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
        """Send `method` to `<base>/<path>` and return the reply if its status is below 400.

        Args:
            method: HTTP method.
            path: path under `/v1`.
            endpoint: another endpoint of the cluster for this request only.
            headers: extra headers; the SDK's Content-Type, User-Agent and Authorization win.
            kwargs: passed to `requests` (`params`, `json`, `data`, `stream`, `timeout`...).

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status.
            requests.exceptions.UnrewindableBodyError: a retry cannot rewind a stream body.
        """
        url = self._url(path, endpoint)
        if method == HTTP_METHOD_HEAD and _FETCH_KWARGS.issuperset(kwargs):
            params = kwargs.get("params")
            reply = self._with_retry(lambda: self._transport.head(url, headers, params), kwargs)
            if reply is not None:
                return self._response_handler.handle_response(reply)
        resp = self._with_retry(lambda: self._send(method, url, headers, kwargs), kwargs)
        return self._response_handler.handle_response(resp)

    def request_body(
        self,
        method: str,
        path: str,
        headers: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> bytes:
        """Like `request()`, and return the whole body, read inside the retried step.

        A connection that breaks mid-body is then retried like one that breaks before the
        reply, which is what a non-streamed `requests` call does. The body lands in one
        `bytes` object with a single copy; a plain GET is sent by the native client when it
        can (`Transport.fetch`).
        """
        if method == HTTP_METHOD_GET and _FETCH_KWARGS.issuperset(kwargs):
            url = self._url(path, endpoint=None)
            params = kwargs.get("params")
            reply = self._with_retry(lambda: self._transport.fetch(url, headers, params), kwargs)
            if isinstance(reply, bytes):
                return reply
            if reply is not None:
                self._response_handler.handle_response(reply)  # an error status: raises

        def read_all(resp: requests.Response) -> bytes:
            reader = BodyReader(resp)
            try:
                return reader.read_all()
            finally:
                reader.close()

        return self.request_read(method, path, read_all, headers=headers, **kwargs)

    def request_stream(
        self,
        method: str,
        path: str,
        data: bytes,
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        drain: int = 0,
    ) -> NativeBodyReader | None:
        """The body of a successful reply, streamed by the native client (`Transport.open_stream`)
        with `data` as the request body; None when it cannot send the request: the caller then
        sends it with `request(..., stream=True)`. Closing the reader reads up to `drain`
        bytes left, to keep the connection.

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status.
        """
        url = self._url(path, endpoint=None)
        reply = self._with_retry(
            lambda: self._transport.open_stream(method, url, headers, params, data), {}
        )
        if reply is None or isinstance(reply, NativeStream):
            return None if reply is None else NativeBodyReader(reply, drain)
        self._response_handler.handle_response(reply)  # an error status: raises
        return None

    def request_read(
        self,
        method: str,
        path: str,
        read: Callable[[requests.Response], R],
        headers: Mapping[str, Any] | None = None,
        retrying: Retrying | None = None,
        **kwargs: Any,
    ) -> R:
        """Send a streamed request and let `read` consume a successful reply, both inside one
        retried step, so a body that breaks off is retried like a failed send.

        Args:
            read: consumes a reply with status below 400 (and closes it); its transport errors
                are retried by the network policy.
            retrying: the network retry policy for this request (the client's by default).

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status; never retried.
        """
        url = self._url(path, endpoint=None)

        def send_and_read() -> tuple[requests.Response, list[R]]:
            resp = self._send(method, url, headers, {**kwargs, "stream": True})
            if not 200 <= resp.status_code < 400:
                return resp, []
            return resp, [read(resp)]

        return self._read_result(*self._with_retry(send_and_read, kwargs, retrying))

    def read_get(
        self,
        path: str,
        read: Callable[[StreamedReply], R],
        headers: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        retrying: Retrying | None = None,
    ) -> R:
        """Like `request_read` for a GET, with `read` given the reply as a `StreamedReply`
        (it reads the body, and closes it): streamed by the native client when it can take the
        request (`Transport.open_stream`), by `requests` otherwise.

        Raises:
            aistore.sdk.errors.AISError: (or a subclass) for an error status; never retried.
        """
        url = self._url(path, endpoint=None)

        def send_and_read() -> tuple[requests.Response | None, list[R]]:
            reply = self._transport.open_stream(HTTP_METHOD_GET, url, headers, params)
            if isinstance(reply, NativeStream):
                return None, [read(NativeBodyReader(reply))]
            if reply is None:  # not for the native client: the regular way
                reply = self._send(
                    HTTP_METHOD_GET, url, headers, {"params": params, "stream": True}
                )
            if not 200 <= reply.status_code < 400:  # also an error reply read natively
                return reply, []
            return reply, [read(BodyReader(reply))]

        return self._read_result(*self._with_retry(send_and_read, {}, retrying))

    def _read_result(self, resp: requests.Response | None, result: list[R]) -> R:
        """What `read` returned; else the error of the reply it was not given."""
        if result:
            return result[0]
        assert resp is not None
        self._response_handler.handle_response(resp)  # raises for an error status
        resp.close()
        raise UnexpectedHTTPStatusCode([200], resp.status_code)

    def get_full_url(self, path: str, params: Mapping[str, Any]) -> str:
        """Absolute URL of `path` with `params` as query string."""
        return f"{self.base_url}/{path.lstrip('/')}?{urlencode(params)}"

    def _url(self, path: str, endpoint: str | None) -> str:
        base = urljoin(endpoint, "v1") if endpoint else self.base_url
        return f"{base}/{path.lstrip('/')}"

    def _send(
        self, method: str, url: str, headers: Mapping[str, Any] | None, kwargs: dict[str, Any]
    ) -> requests.Response:
        if url.startswith(HTTPS) and "data" in kwargs:
            return self._transport.send_https_with_body(method, url, headers, **kwargs)
        return self._transport.send(method, url, headers, **kwargs)

    def _with_retry(
        self, op: Callable[[], R], kwargs: Mapping[str, Any], retrying: Retrying | None = None
    ) -> R:
        """Run `op` under the network retry policy, rewinding a stream body before each repeat."""
        retrying = retrying if retrying is not None else self._retrying
        body: Any = kwargs.get("data")
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
    """`retrying(op)`, with the first attempt made outside tenacity, which costs ~8 us per
    call (a tenth of a small GET). A failure of that attempt is handed to the policy as its
    own first attempt, so what is retried, how often and how long it waits do not change (a
    time limit such as `stop_after_delay` counts from the end of the first attempt)."""
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
