"""Turning replies into exceptions: statuses below 400 pass, everything else raises.

A handler reads a reply as (status, headers, body), whichever transport brought it.

Example:
    >>> from aistore.sdk.response_handler import AISResponseHandler
    >>> AISResponseHandler().raise_for_status(200, {}, b"", "GET", "http://h/v1/daemon")
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import requests

from aistore._internal.error_map import classify
from aistore.sdk.const import HEADER_ERROR, HTTP_METHOD_HEAD
from aistore.sdk.errors import AISError, APIRequestError
from aistore.sdk.errors import ErrBckAlreadyExists as ErrBckAlreadyExists
from aistore.sdk.errors import ErrBckNotFound as ErrBckNotFound
from aistore.sdk.errors import ErrETLAlreadyExists as ErrETLAlreadyExists
from aistore.sdk.errors import ErrETLNotFound as ErrETLNotFound
from aistore.sdk.errors import ErrGETConflict as ErrGETConflict
from aistore.sdk.errors import ErrObjNotFound as ErrObjNotFound
from aistore.sdk.errors import ErrRemoteBckNotFound as ErrRemoteBckNotFound
from aistore.sdk.errors import InvalidBckProvider as InvalidBckProvider
from aistore.sdk.provider import Provider as Provider
from aistore.sdk.utils import extract_and_parse_url as extract_and_parse_url

__all__ = ["AISResponseHandler", "ResponseHandler"]


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")


class ResponseHandler(ABC):
    """Checks replies of one kind of server.

    Example:
        >>> class Strict(AISResponseHandler): pass
        >>> isinstance(Strict(), ResponseHandler)
        True
    """

    def raise_for_status(
        self, status: int, headers: Mapping[str, str], body: bytes, method: str, url: str
    ) -> None:
        """Return when `status` is below 400, else raise `error(...)`, chained to the
        `requests.HTTPError` for the status."""
        if status < 400:
            return
        kind = "Client" if status < 500 else "Server"
        http_err = requests.HTTPError(f"{status} {kind} Error for url: {url}")
        raise self.error(status, headers, body, method, url) from http_err

    def error(
        self, status: int, headers: Mapping[str, str], body: bytes, method: str, url: str
    ) -> APIRequestError:
        """The exception for a failed reply (`exc_class` unless a subclass knows better)."""
        return self.exc_class(status, _text(body), url, None)

    def handle_response(self, r: requests.Response) -> requests.Response:
        """Return `r` when its status is below 400, else raise `parse_error(r)`."""
        if r.status_code < 400:
            return r
        try:
            r.raise_for_status()
        except requests.HTTPError as http_err:
            raise self.parse_error(r) from http_err
        raise self.parse_error(r)

    def parse_error(self, r: requests.Response) -> APIRequestError:
        """The exception for a failed `requests` reply."""
        return self.error(
            r.status_code, r.headers, r.content, r.request.method or "", r.request.url or ""
        )

    @property
    @abstractmethod
    def exc_class(self) -> type[APIRequestError]:
        """Exception class when nothing more specific applies."""


class AISResponseHandler(ResponseHandler):
    """Maps AIS error replies to the classes of `aistore.sdk.errors`.

    Classification reads the body only, as the official SDK does; for a failed HEAD, which
    has no body, the message is taken from the `Hdr-Error` header but the class stays
    `AISError`.

    Example:
        >>> AISResponseHandler().exc_class.__name__
        'AISError'
    """

    @property
    def exc_class(self) -> type[AISError]:
        return AISError

    def error(
        self, status: int, headers: Mapping[str, str], body: bytes, method: str, url: str
    ) -> AISError:
        text = _text(body)
        exc = classify(status, text, method)
        # A failed HEAD has no body; the server sends its error document in a header instead.
        if not text and method.lower() == HTTP_METHOD_HEAD:
            text = headers.get(HEADER_ERROR, "")
        return exc(status, text, url, None)
