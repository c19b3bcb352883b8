"""Turning AuthN error replies into the classes of `aistore.sdk.authn.errors`.

Example:
    >>> AuthNResponseHandler().exc_class.__name__
    'AuthNError'
"""

from __future__ import annotations

from collections.abc import Mapping

from aistore.sdk.authn.errors import (
    AuthNError,
    ErrClusterAlreadyRegistered,
    ErrClusterNotFound,
    ErrRoleAlreadyExists,
    ErrRoleNotFound,
    ErrUserAlreadyExists,
    ErrUserInvalidCredentials,
    ErrUserNotFound,
)
from aistore.sdk.response_handler import ResponseHandler

__all__ = ["AuthNResponseHandler"]

# (status, word in the message) → class; the last match wins, as in the official SDK.
_BY_STATUS: dict[int, list[tuple[str, type[AuthNError]]]] = {
    401: [("invalid credentials", ErrUserInvalidCredentials)],
    404: [("cluster ", ErrClusterNotFound), ("role ", ErrRoleNotFound), ("user ", ErrUserNotFound)],
    409: [
        ("cluster ", ErrClusterAlreadyRegistered),
        ("role ", ErrRoleAlreadyExists),
        ("user ", ErrUserAlreadyExists),
    ],
}


class AuthNResponseHandler(ResponseHandler):
    """Raises `AuthNError` or the subclass the status and message point to.

    Example:
        >>> handler = AuthNResponseHandler()
    """

    @property
    def exc_class(self) -> type[AuthNError]:
        return AuthNError

    def error(
        self, status: int, headers: Mapping[str, str], body: bytes, method: str, url: str
    ) -> AuthNError:
        message = body.decode("utf-8", errors="replace")
        exc_class: type[AuthNError] = AuthNError
        for word, cls in _BY_STATUS.get(status, []):
            if word in message:
                exc_class = cls
        return exc_class(status, message, url, None)
