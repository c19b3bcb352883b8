"""Revoking AuthN tokens.

Example:
    >>> TokenManager(authn.client).revoke(token)  # doctest: +SKIP
"""

from __future__ import annotations

import logging

from aistore.sdk.authn.types import TokenMsg
from aistore.sdk.const import HTTP_METHOD_DELETE, URL_PATH_AUTHN_TOKENS
from aistore.sdk.request_client import RequestClient as RequestClient
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["TokenManager", "logger"]

logger = logging.getLogger(__name__)

# AuthN API path of tokens, under /v1.


class TokenManager:
    """Revokes tokens: AuthN forgets them and tells the registered clusters.

    Example:
        >>> authn.token_manager().revoke(token)  # doctest: +SKIP

    Args:
        client: the AuthN request client.
    """

    def __init__(self, client: RequestClient) -> None:
        self._client = client

    @property
    def client(self) -> RequestClient:
        """The AuthN request client."""
        return self._client

    def revoke(self, token: str) -> None:
        """Revoke `token` (`DELETE /v1/tokens`).

        Raises:
            ValueError: an empty token.
            AuthNError: AuthN refused.
        """
        if not token:
            raise ValueError("Token must be provided to revoke.")
        logger.info("Revoking token")
        self._client.request(
            HTTP_METHOD_DELETE, path=URL_PATH_AUTHN_TOKENS, json=TokenMsg(token=token).model_dump()
        )
