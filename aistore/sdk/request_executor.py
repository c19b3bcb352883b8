"""Sending one request of a client, without retries: the SDK's headers, the default timeout,
and the one choice of transport.

Example:
    >>> from aistore.sdk.request_executor import RequestExecutor
    >>> executor = RequestExecutor("http://localhost:8080/v1", SessionManager())
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import requests

from aistore._internal.body import Reply
from aistore._internal.config import TimeoutArg
from aistore._internal.transport import RequestsTransport, select_transport
from aistore.sdk.const import (
    HEADER_AUTHORIZATION,
    HEADER_CONTENT_TYPE,
    HEADER_USER_AGENT,
    JSON_CONTENT_TYPE,
    USER_AGENT_BASE,
)
from aistore.sdk.session_manager import SessionManager
from aistore.version import __version__ as sdk_version

__all__ = ["RequestExecutor"]

_USER_AGENT = f"{USER_AGENT_BASE}/{sdk_version}"


class RequestExecutor:
    """Sends single requests to one AIS endpoint; no retries, no error statuses raised.

    `send` is the client's own path: the transport that serves a request is chosen by
    `aistore._internal.transport.select_transport`, and the reply comes back as a `Reply`.
    `request` and `request_absolute` return a `requests.Response`, as the official SDK's do.

    Example:
        >>> executor = RequestExecutor("http://localhost:8080/v1", SessionManager())
        >>> reply = executor.send("GET", "http://localhost:8080/v1/daemon?what=smap")

    Args:
        base_url: endpoint including the API version, e.g. `http://proxy:8080/v1`.
        session_manager: the per-process pools.
        token: bearer token, sent on every request when non-empty.
        timeout: default (connect, read) timeout of requests that give none.
    """

    def __init__(
        self,
        base_url: str,
        session_manager: SessionManager,
        token: str = "",
        timeout: TimeoutArg = None,
    ) -> None:
        self._base_url = base_url
        self._session_manager = session_manager
        self._token = token
        self._timeout = timeout
        # Whether a reply ever came by a redirect: the endpoint is a proxy in front of targets.
        self.redirected = False

    @property
    def base_url(self) -> str:
        """Endpoint including `/v1`."""
        return self._base_url

    @property
    def session_manager(self) -> SessionManager:
        """Source of the per-process pools."""
        return self._session_manager

    @session_manager.setter
    def session_manager(self, value: SessionManager) -> None:
        self._session_manager = value

    @property
    def token(self) -> str:
        """Bearer token sent with every request."""
        return self._token

    @token.setter
    def token(self, value: str) -> None:
        self._token = value

    @property
    def timeout(self) -> TimeoutArg:
        """Default timeout of requests that give none."""
        return self._timeout

    @timeout.setter
    def timeout(self, value: TimeoutArg) -> None:
        self._timeout = value

    def headers(self, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        """Caller headers with the SDK's own on top (they win, as in the official SDK)."""
        merged = dict(extra) if extra else {}
        merged[HEADER_CONTENT_TYPE] = JSON_CONTENT_TYPE
        merged[HEADER_USER_AGENT] = _USER_AGENT
        if self._token:
            merged[HEADER_AUTHORIZATION] = f"Bearer {self._token}"
        return merged

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, Any] | None = None,
        body: Any = None,
        stream: bool = True,
        timeout: TimeoutArg | Literal["default"] = "default",
        requests_only: Mapping[str, Any] | None = None,
    ) -> Reply:
        """One request to `url` (absolute, its query included), by the transport
        `select_transport` picks; with `stream` False a 2xx body is read before returning.
        `timeout` replaces the executor's for this request. The caller OWNS the reply.

        Args:
            requests_only: given (even empty), the request goes through `requests`, with these
                keyword arguments of `RequestsTransport.send` (`follow_redirects`, `json`...).

        Raises:
            requests.RequestException: the request failed below HTTP.
        """
        manager = self._session_manager
        method = method.upper()
        if isinstance(timeout, str):  # "default"
            timeout = self._timeout
        headers = self.headers(headers)
        if requests_only is not None:
            reply = RequestsTransport(manager.session).send(
                method, url, headers, body, stream=stream, timeout=timeout, **requests_only
            )
            self.redirected = self.redirected or reply.redirected
            return reply
        transport = select_transport(method, url, body, manager.session, manager.native_client)
        reply = transport.send(method, url, headers, body, stream=stream, timeout=timeout)
        self.redirected = self.redirected or reply.redirected
        return reply

    def request(
        self, method: str, path: str, headers: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> requests.Response:
        """Send `method` to `<base_url>/<path>`; `kwargs` go to `requests.Session.request`."""
        return self.request_absolute(
            method, f"{self._base_url}/{path.lstrip('/')}", headers, **kwargs
        )

    def request_absolute(
        self, method: str, url: str, headers: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> requests.Response:
        """Send `method` to an absolute `url` through `requests`; `kwargs` go to
        `requests.Session.request` (`params`, `data`, `json`, `stream`, `timeout`...)."""
        if self._timeout is not None and "timeout" not in kwargs:
            kwargs["timeout"] = self._timeout
        session = self._session_manager.session
        # `requests` lets REQUESTS_CA_BUNDLE override a session's CA path or skip flag unless
        # the request repeats it; an explicit choice must win over the environment.
        if session.verify is not True:
            kwargs.setdefault("verify", session.verify)
        return session.request(method, url, headers=self.headers(headers), **kwargs)
