"""The AuthN client: login and logout, and the managers of users, roles, clusters, tokens.

Example:
    >>> authn = AuthNClient("http://localhost:52001")  # doctest: +SKIP
    >>> token = authn.login("admin", "admin", expires_in=3600)  # doctest: +SKIP
    >>> client = Client("http://localhost:51080", token=token)  # doctest: +SKIP
"""

from __future__ import annotations

import logging

from urllib3.util import Retry

from aistore.sdk.authn.cluster_manager import ClusterManager
from aistore.sdk.authn.response_handler import AuthNResponseHandler
from aistore.sdk.authn.role_manager import RoleManager
from aistore.sdk.authn.token_manager import TokenManager
from aistore.sdk.authn.types import LoginMsg, TokenMsg
from aistore.sdk.authn.user_manager import UserManager
from aistore.sdk.const import HTTP_METHOD_POST, URL_PATH_AUTHN_USERS
from aistore.sdk.request_client import RequestClient
from aistore.sdk.session_manager import SessionManager
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["AuthNClient", "logger"]

logger = logging.getLogger(__name__)


class AuthNClient:
    """A client of an AuthN server; errors are `aistore.sdk.authn.errors` classes.

    Example:
        >>> authn = AuthNClient("https://authn:52001", ca_cert="ca.pem")  # doctest: +SKIP
        >>> authn.user_manager().list()  # doctest: +SKIP

    Args:
        endpoint: the AuthN server's URL.
        skip_verify: do not verify its TLS certificate.
        ca_cert: CA bundle to verify it with.
        timeout: seconds, or (connect, read), or None for no limit.
        retry: urllib3 retry policy of the connection pool.
        token: a token to send (set by `login`).
    """

    def __init__(
        self,
        endpoint: str,
        skip_verify: bool = False,
        ca_cert: str | None = None,
        timeout: float | tuple[float, float] | None = None,
        retry: Retry | None = None,
        token: str | None = None,
    ) -> None:
        self._request_client = RequestClient(
            endpoint=endpoint,
            session_manager=SessionManager(retry=retry, ca_cert=ca_cert, skip_verify=skip_verify),
            timeout=timeout,
            token=token or "",
            response_handler=AuthNResponseHandler(),
        )

    @property
    def client(self) -> RequestClient:
        """The request client (its `token` is the one sent)."""
        return self._request_client

    def login(self, username: str, password: str, expires_in: int | float | None = None) -> str:
        """Log in; the token is returned and sent from now on.

        Args:
            username: the user.
            password: the password.
            expires_in: the token's lifetime in seconds (the server's default if None).

        Raises:
            ValueError: an empty password.
            ErrUserInvalidCredentials: wrong user or password.
        """
        if not password.strip():
            raise ValueError("Password cannot be empty or spaces only")
        logger.info("Logging in as %s", username)
        token = self._request_client.request_deserialize(
            HTTP_METHOD_POST,
            f"{URL_PATH_AUTHN_USERS}/{username}",
            TokenMsg,
            json=LoginMsg(password=password, expires_in=expires_in).as_dict(),
        ).token
        self._request_client.token = token
        return token

    def logout(self) -> None:
        """Revoke the current token and stop sending it.

        Raises:
            ValueError: not logged in.
        """
        if not self._request_client.token:
            raise ValueError("Must be logged in first (no token)")
        self.token_manager().revoke(token=self._request_client.token)
        self._request_client.token = ""

    def cluster_manager(self) -> ClusterManager:
        """Registered clusters."""
        return ClusterManager(self._request_client)

    def role_manager(self) -> RoleManager:
        """Roles."""
        return RoleManager(self._request_client)

    def user_manager(self) -> UserManager:
        """Users."""
        return UserManager(self._request_client)

    def token_manager(self) -> TokenManager:
        """Token revocation."""
        return TokenManager(self._request_client)
