"""Importing this module patches botocore's S3 redirectors to follow AIS redirects.

Each `S3RegionRedirector*` class of `botocore.utils` gets a `redirect_from_error` that, for
a 301, 302 or 307 reply with a `Location` header, sends the request again to that location
(at most three times per operation) and otherwise does what botocore would. Without
botocore installed, importing this module does nothing.

Example:
    >>> import aistore.botocore_patch.botocore  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

__all__: list[str] = []

_REDIRECT_CODES = (301, 302, 307)
_MAX_REDIRECTS = 3
_COUNT_KEY = "ais_redirect_count"
_PATCHED = "_ais_redirect_patched"


def _follow_ais_redirect(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def redirect_from_error(
        self: Any, request_dict: Any, response: Any, operation: Any, **kwargs: Any
    ) -> Any:
        location = _location(request_dict, response)
        if location is None:
            return original(self, request_dict, response, operation, **kwargs)
        state = request_dict["context"]["s3_redirect"]
        state[_COUNT_KEY] = state.get(_COUNT_KEY, 0) + 1
        request_dict["url"] = location
        return 0  # retry now, at the new URL

    setattr(redirect_from_error, _PATCHED, True)
    return redirect_from_error


def _location(request_dict: Any, response: Any) -> str | None:
    """The Location to follow, or None when botocore should handle the reply itself."""
    try:
        if not (isinstance(response, tuple) and isinstance(request_dict, dict)):
            return None
        http = response[0]
        if http.status_code not in _REDIRECT_CODES:
            return None
        if request_dict["context"]["s3_redirect"].get(_COUNT_KEY, 0) > _MAX_REDIRECTS:
            return None
        headers = {k.lower(): v for k, v in http.headers.items()}
        location = headers.get("location")
        return str(location) if location else None
    except (AttributeError, IndexError, KeyError, TypeError):
        return None


def _patch(module: Any) -> None:
    for name, cls in inspect.getmembers(module, inspect.isclass):
        method = getattr(cls, "redirect_from_error", None)
        if "S3RegionRedirector" in name and method and not getattr(method, _PATCHED, False):
            setattr(cls, "redirect_from_error", _follow_ais_redirect(method))  # noqa: B010


with contextlib.suppress(ImportError):  # without botocore there is nothing to patch
    _patch(importlib.import_module("botocore.utils"))
