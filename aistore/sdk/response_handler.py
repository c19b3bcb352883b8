"""Turning replies into exceptions: 2xx/3xx pass through, everything else raises.

Example:
    >>> from aistore.sdk.response_handler import AISResponseHandler
    >>> handler = AISResponseHandler()
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import requests

from aistore._internal.error_map import classify
from aistore.sdk.const import HEADER_ERROR, HTTP_METHOD_HEAD
from aistore.sdk.errors import AISError, APIRequestError

__all__ = ["AISResponseHandler", "ResponseHandler"]


def _message(r: requests.Response) -> str:
    text = r.text
    # A failed HEAD has no body; the server sends its error document in a header instead.
    if not text and (r.request.method or "").lower() == HTTP_METHOD_HEAD:
        return r.headers.get(HEADER_ERROR, "")
    return text


class ResponseHandler(ABC):
    """Checks replies of one kind of server.

    Example:
        >>> class Strict(AISResponseHandler): pass
        >>> isinstance(Strict(), ResponseHandler)
        True
    """

    def handle_response(self, r: requests.Response) -> requests.Response:
        """Return `r` when its status is below 400, else raise `parse_error(r)`.

        The raised error is chained to the `requests.HTTPError` for the status.
        """
        if 200 <= r.status_code < 400:
            return r
        try:
            r.raise_for_status()
        except requests.HTTPError as http_err:
            raise self.parse_error(r) from http_err
        raise self.exc_class(r.status_code, r.text, r.request.url or "", r.request)

    @abstractmethod
    def parse_error(self, r: requests.Response) -> APIRequestError:
        """The exception for a failed reply."""

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

    def parse_error(self, r: requests.Response) -> AISError:
        exc = classify(r.status_code, r.text, r.request.method or "")
        return exc(r.status_code, _message(r), r.request.url or "", r.request)
