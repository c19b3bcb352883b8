"""Constants of the AIS REST API and of the client: headers, query parameters, URL paths,
actions, environment variables and defaults, under the official names.

They are defined in `aistore._internal.const`, below the transport that uses them.

Example:
    >>> from aistore.sdk.const import HEADER_CONTENT_LENGTH
    >>> HEADER_CONTENT_LENGTH
    'Content-Length'
"""

from __future__ import annotations

from aistore._internal import const as _const
from aistore._internal.const import *  # noqa: F403 - the official module's names

__all__ = [name for name in dir(_const) if name.isupper()]
