"""ASGI message types that the FastAPI ETL server sends for streamed replies.

Example:
    >>> ASGI_HTTP_RESPONSE_START
    'http.response.start'
"""

from __future__ import annotations

__all__ = ["ASGI_HTTP_RESPONSE_BODY", "ASGI_HTTP_RESPONSE_START"]

ASGI_HTTP_RESPONSE_START = "http.response.start"
ASGI_HTTP_RESPONSE_BODY = "http.response.body"
