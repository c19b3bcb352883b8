"""Writing an object: whole content, a file, appends, custom metadata.

Example:
    >>> writer = bucket.object("x").get_writer()  # doctest: +SKIP
    >>> writer.put_content(b"hello")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import requests

from aistore.sdk.const import (
    HEADER_OBJECT_APPEND_HANDLE,
    HTTP_METHOD_PATCH,
    HTTP_METHOD_PUT,
    QPARAM_NEW_CUSTOM,
    QPARAM_OBJ_APPEND,
    QPARAM_OBJ_APPEND_HANDLE,
)
from aistore.sdk.obj.obj_file.object_file import ObjectFileWriter
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import ActionMsg
from aistore.sdk.utils import validate_file

__all__ = ["ObjectWriter"]


class ObjectWriter:
    """Writes one object's content and metadata; made by `Object.get_writer()`.

    Example:
        >>> writer = bucket.object("x").get_writer()  # doctest: +SKIP
        >>> writer.set_custom_props({"owner": "me"})  # doctest: +SKIP

    Args:
        client: sends the requests.
        object_path: `objects/<bucket>/<quoted name>`.
        query_params: query parameters of every request (bucket identity, upload id...).
    """

    def __init__(
        self, client: RequestClient, object_path: str, query_params: Mapping[str, Any]
    ) -> None:
        self._client = client
        self._object_path = object_path
        self.query_params: dict[str, Any] = dict(query_params)

    def put_content(self, content: bytes | bytearray | memoryview) -> requests.Response:
        """Store `content` as the object's content (a bytearray or a contiguous memoryview is
        sent from where it is, as bytes are)."""
        return self._put(content, self.query_params)

    def put_file(self, path: str | Path) -> requests.Response:
        """Store a local file as the object's content, streaming it.

        Raises:
            ValueError: `path` is missing or not a regular file.
        """
        validate_file(path)
        with open(path, "rb") as f:
            return self._put(f, self.query_params)

    def append_content(self, content: bytes, handle: str = "", flush: bool = False) -> str:
        """Append `content`; returns the handle for the next append ("" after a flush).

        The first append passes an empty handle; `flush=True` makes the appended data the
        object's content.
        """
        params = {
            **self.query_params,
            QPARAM_OBJ_APPEND: "flush" if flush else "append",
            QPARAM_OBJ_APPEND_HANDLE: handle,
        }
        resp = self._put(content, params)
        return str(resp.headers.get(HEADER_OBJECT_APPEND_HANDLE, ""))

    def set_custom_props(
        self, custom_metadata: Mapping[str, str], replace_existing: bool = False
    ) -> requests.Response:
        """Merge `custom_metadata` into the object's metadata (replace it when asked)."""
        params = dict(self.query_params)
        if replace_existing:
            params[QPARAM_NEW_CUSTOM] = "true"
        body = ActionMsg(action="", value=dict(custom_metadata)).model_dump()
        return self._client.request(
            HTTP_METHOD_PATCH, path=self._object_path, params=params, json=body
        )

    def as_file(self, mode: str = "a") -> ObjectFileWriter:
        """A file-like writer: `"a"` appends, `"w"` empties the object first.

        Raises:
            ValueError: another mode.
        """
        if mode not in ("w", "a"):
            raise ValueError(f"Invalid mode: {mode}")
        return ObjectFileWriter(self, mode)

    def _put(self, data: Any, params: Mapping[str, Any]) -> requests.Response:
        return self._client.request(
            HTTP_METHOD_PUT, path=self._object_path, params=params, data=data
        )
