"""Per-process connection pools of a client: a `requests.Session` and a native HTTP client,
with the TLS settings and one pool size shared by both.

Example:
    >>> from aistore.sdk.session_manager import SessionManager
    >>> manager = SessionManager(max_pool_size=16)
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from aistore import _native
from aistore._internal.config import (
    ClientCert,
    resolve_client_cert,
    resolve_skip_verify,
    resolve_verify,
)
from aistore._internal.transport import NoDowngradeSession, environment_matters
from aistore.sdk.const import AIS_CLIENT_CA as AIS_CLIENT_CA
from aistore.sdk.const import AIS_CLIENT_CRT as AIS_CLIENT_CRT
from aistore.sdk.const import AIS_CLIENT_KEY as AIS_CLIENT_KEY
from aistore.sdk.const import AIS_SKIP_VERIFY as AIS_SKIP_VERIFY
from aistore.sdk.const import AIS_SKIP_VERIFY_CRT as AIS_SKIP_VERIFY_CRT
from aistore.sdk.const import HTTP, HTTPS
from aistore.sdk.utils import parse_bool as parse_bool

__all__ = ["SessionManager", "resolve_ssl_config"]


def resolve_ssl_config(
    skip_verify: bool = False, ca_cert: str | None = None, client_cert: ClientCert | None = None
) -> tuple[bool | str, ClientCert | None]:
    """The `requests` (verify, cert) pair from the arguments, else the environment: verify is
    False (skip), a CA bundle path (`ca_cert`, `AIS_CLIENT_CA`) or True (system CAs); cert is a
    client certificate for mutual TLS (`client_cert`, `AIS_CRT` + `AIS_CRT_KEY`) or None."""
    verify = resolve_verify(resolve_skip_verify(skip_verify), ca_cert)
    return verify, resolve_client_cert(client_cert)


class SessionManager:
    """Hands out, per process id, the `requests.Session` and the native HTTP client that send
    a client's requests (`aistore._internal.transport.select_transport` picks one).

    Pooled sockets must never be shared by a parent and its forked children, so a process that
    finds none under its own pid builds its own. Pickling drops them: a worker process that
    unpickles a client opens its own connections. The session's pool keeps up to
    `max_pool_size` idle connections per host, as the official SDK's (more threads than that
    still work; urllib3 logs "Connection pool is full" and closes the extra ones). The native
    client, which serves most requests, keeps at least `max_pool_size` and grows to as many
    as were ever in use at once (up to 256 per host), so threads sharing a client never pay a
    new connection per request for a pool sized below their number. The adapters retry
    nothing: `retry`, the status policy, is applied by
    `aistore.sdk.retry_manager.RetryManager` to both kinds of requests.

    Example:
        >>> manager = SessionManager(skip_verify=False, max_pool_size=16)
        >>> manager.session.verify
        True

    Args:
        retry: status retry policy (429, 5xx) of the client's requests.
        ca_cert: CA bundle to verify servers with.
        skip_verify: do not verify server certificates (insecure).
        client_cert: certificate (path, or (cert, key) paths) for mutual TLS.
        max_pool_size: idle connections kept per host (the native client's floor).
    """

    def __init__(
        self,
        retry: Retry | None = None,
        ca_cert: str | None = None,
        skip_verify: bool = False,
        client_cert: ClientCert | None = None,
        max_pool_size: int = 10,
    ) -> None:
        self._retry = retry
        self._ca_cert = ca_cert
        self._skip_verify = skip_verify
        self._client_cert = client_cert
        self._max_pool_size = max_pool_size
        if skip_verify:
            warnings.warn(
                "Skipping SSL certificate verification is insecure. "
                "Use a valid SSL certificate instead.",
                UserWarning,
                stacklevel=3,
            )
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._sessions: dict[int, requests.Session] = {}
        self._native_clients: dict[int, _native.HttpClient] = {}

    @property
    def retry(self) -> Retry | None:
        """Status retry policy (see `RetryManager`)."""
        return self._retry

    @property
    def ca_cert(self) -> str | None:
        """CA bundle given explicitly, if any."""
        return self._ca_cert

    @property
    def client_cert(self) -> ClientCert | None:
        """Client certificate (path or (cert, key)) for mutual TLS, if any."""
        return self._client_cert

    @property
    def skip_verify(self) -> bool:
        """Whether server certificates go unchecked."""
        return self._skip_verify

    @property
    def max_pool_size(self) -> int:
        """Idle connections each pool keeps per host."""
        return self._max_pool_size

    @property
    def session(self) -> requests.Session:
        """The calling process's session, built on first use."""
        pid = os.getpid()
        session = self._sessions.get(pid)
        if session is None:
            session = self._sessions[pid] = self._create_session()
        return session

    def native_client(self) -> _native.HttpClient:
        """The calling process's native HTTP client, built on first use."""
        pid = os.getpid()
        client = self._native_clients.get(pid)
        if client is None:
            client = self._native_clients[pid] = _native.HttpClient(self._max_pool_size)
        return client

    def ensure_pool_size(self, size: int) -> None:
        """Let both pools keep at least `size` connections per host (parallel range readers
        hold one each). The native client raises its floor in place (its idle connections
        stay); the session's adapters are replaced when they keep fewer."""
        if size <= self._max_pool_size:
            return
        self._max_pool_size = size
        pid = os.getpid()
        native = self._native_clients.get(pid)
        if native is not None:
            native.keep_idle_at_least(size)
        session = self._sessions.get(pid)
        if session is not None:
            for prefix in (HTTP, HTTPS):
                old = session.adapters.get(prefix)
                session.mount(prefix, self._adapter())
                if old is not None:
                    old.close()

    def _adapter(self) -> HTTPAdapter:
        return HTTPAdapter(
            max_retries=0,
            pool_connections=self._max_pool_size,
            pool_maxsize=self._max_pool_size,
        )

    def _create_session(self) -> requests.Session:
        session = NoDowngradeSession()
        session.verify = resolve_verify(self._skip_verify, self._ca_cert)
        session.cert = self._client_cert
        if not environment_matters():
            # requests re-reads proxies, CA bundle and .netrc from the environment on every
            # request (a fifth of a small GET's client CPU); with none set, read the CA once.
            session.trust_env = False
            if session.verify is True:
                session.verify = (
                    os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
                )
        adapter = self._adapter()
        session.mount(HTTP, adapter)
        session.mount(HTTPS, adapter)
        return session

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_sessions"] = {}
        state["_native_clients"] = {}
        return state
