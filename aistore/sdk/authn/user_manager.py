"""AuthN users.

Example:
    >>> authn.user_manager().create("alice", ["readers"], "s3cret")  # doctest: +SKIP
"""

from __future__ import annotations

import builtins
import logging

from aistore.sdk.authn.errors import ErrUserNotFound
from aistore.sdk.authn.role_manager import RoleManager
from aistore.sdk.authn.types import RolesList, UserInfo, UserMap
from aistore.sdk.const import (
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    URL_PATH_AUTHN_USERS,
)
from aistore.sdk.request_client import RequestClient as RequestClient
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["UserManager", "logger"]

logger = logging.getLogger(__name__)

# AuthN API path of users, under /v1.


class UserManager:
    """Lists, creates, updates and deletes users.

    Example:
        >>> users = authn.user_manager().list()  # doctest: +SKIP

    Args:
        client: the AuthN request client.
    """

    def __init__(self, client: RequestClient) -> None:
        self._client = client
        self._role_manager = RoleManager(client)

    @property
    def client(self) -> RequestClient:
        """The AuthN request client."""
        return self._client

    def get(self, username: str) -> UserInfo:
        """One user (without the password).

        Raises:
            ErrUserNotFound: no such user.
        """
        return self._client.request_deserialize(
            HTTP_METHOD_GET, f"{URL_PATH_AUTHN_USERS}/{username}", UserInfo
        )

    def delete(self, username: str, missing_ok: bool = False) -> None:
        """Delete a user.

        Raises:
            ErrUserNotFound: no such user, unless `missing_ok`.
        """
        try:
            self._client.request(HTTP_METHOD_DELETE, path=f"{URL_PATH_AUTHN_USERS}/{username}")
        except ErrUserNotFound:
            if not missing_ok:
                raise

    def create(self, username: str, roles: builtins.list[str], password: str) -> UserInfo:
        """Create a user with the named roles.

        Raises:
            ErrRoleNotFound: a role does not exist.
            ErrUserAlreadyExists: the user exists.
        """
        user = UserInfo(id=username, password=password, roles=self._roles(roles))
        logger.info("Creating user %s", username)
        self._client.request(HTTP_METHOD_POST, path=URL_PATH_AUTHN_USERS, json=user.dict())
        return self.get(username)

    def list(self) -> UserMap:
        """Every user, by id."""
        return self._client.request_deserialize(HTTP_METHOD_GET, URL_PATH_AUTHN_USERS, UserMap)

    def update(
        self, username: str, password: str | None = None, roles: builtins.list[str] | None = None
    ) -> UserInfo:
        """Change a user's password and/or roles.

        Raises:
            ValueError: nothing to change.
        """
        if not (password or roles):
            raise ValueError("You must change either the password or roles for a user.")
        role_list = self._roles(roles) if roles else RolesList.model_validate([])
        user = UserInfo(id=username, password=password, roles=role_list)
        logger.info("Updating user %s", username)
        self._client.request(
            HTTP_METHOD_PUT, path=f"{URL_PATH_AUTHN_USERS}/{username}", json=user.dict()
        )
        return self.get(username)

    def _roles(self, names: builtins.list[str]) -> RolesList:
        return RolesList.model_validate([self._role_manager.get(n) for n in names])
