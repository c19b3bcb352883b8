"""Errors of the AuthN service; the class is chosen from the status and message.

Example:
    >>> issubclass(ErrUserNotFound, AuthNError)
    True
"""

from __future__ import annotations

from aistore.sdk.errors import APIRequestError

__all__ = [
    "AuthNError",
    "ErrClusterAlreadyRegistered",
    "ErrClusterNotFound",
    "ErrRoleAlreadyExists",
    "ErrRoleNotFound",
    "ErrUserAlreadyExists",
    "ErrUserInvalidCredentials",
    "ErrUserNotFound",
]


class AuthNError(APIRequestError):
    """A failed AuthN request."""


class ErrRoleNotFound(AuthNError):
    """No such role (404)."""


class ErrRoleAlreadyExists(AuthNError):
    """The role exists already (409)."""


class ErrUserNotFound(AuthNError):
    """No such user (404)."""


class ErrUserAlreadyExists(AuthNError):
    """The user exists already (409)."""


class ErrClusterNotFound(AuthNError):
    """No such registered cluster (404)."""


class ErrClusterAlreadyRegistered(AuthNError):
    """The cluster is registered already (409)."""


class ErrUserInvalidCredentials(AuthNError):
    """Wrong user name or password (401)."""
