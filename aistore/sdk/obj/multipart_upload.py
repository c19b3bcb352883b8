"""Multipart upload: send an object as numbered parts, then assemble them.

Example:
    >>> mpu = bucket.object("big").multipart_upload().create()  # doctest: +SKIP
    >>> mpu.add_part(1).put_content(b"part one")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests

from aistore.sdk.const import (
    ACT_MPT_ABORT,
    ACT_MPT_COMPLETE,
    ACT_MPT_UPLOAD,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_POST,
    QPARAM_MPT_PART_NO,
    QPARAM_MPT_UPLOAD_ID,
)
from aistore.sdk.obj.object_writer import ObjectWriter
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import ActionMsg, MptCompletedPart

__all__ = ["MultipartUpload"]


class MultipartUpload:
    """One multipart upload session of an object.

    Parts are completed in the order `add_part` was called.

    Example:
        >>> mpu = obj.multipart_upload().create()  # doctest: +SKIP
        >>> mpu.add_part(1).put_content(b"a"); mpu.complete()  # doctest: +SKIP

    Args:
        client: sends the requests.
        object_path: `objects/<bucket>/<quoted name>`.
        params: query parameters of every request (bucket identity).
    """

    def __init__(
        self, client: RequestClient, object_path: str, params: Mapping[str, Any] | None = None
    ) -> None:
        self.client = client
        self.object_path = object_path
        self.params: dict[str, Any] = dict(params) if params else {}
        self.upload_id: str | None = None
        self.parts: list[int] = []

    def create(self) -> MultipartUpload:
        """Open the session; the server's reply is the upload id."""
        self.upload_id = self.client.request(
            HTTP_METHOD_POST,
            path=self.object_path,
            params=self.params,
            json=ActionMsg(action=ACT_MPT_UPLOAD).model_dump(),
        ).text
        return self

    def add_part(self, part_number: int) -> ObjectWriter:
        """A writer for part `part_number` (1-based).

        Raises:
            ValueError: `create()` was not called, or the number is not a positive int.
        """
        if self.upload_id is None:
            raise ValueError("Multipart upload not created")
        if not isinstance(part_number, int) or isinstance(part_number, bool) or part_number <= 0:
            raise ValueError("Part number must be a positive integer")
        self.parts.append(part_number)
        return ObjectWriter(
            self.client,
            self.object_path,
            {**self.params, QPARAM_MPT_UPLOAD_ID: self.upload_id, QPARAM_MPT_PART_NO: part_number},
        )

    def complete(self) -> requests.Response:
        """Assemble the parts into the object."""
        parts = [MptCompletedPart(part_number=n).as_dict() for n in self.parts]
        return self.client.request(
            HTTP_METHOD_POST,
            path=self.object_path,
            params={**self.params, QPARAM_MPT_UPLOAD_ID: self.upload_id},
            json=ActionMsg(action=ACT_MPT_COMPLETE, value=parts).model_dump(),
        )

    def abort(self) -> requests.Response:
        """Drop the session and its parts."""
        return self.client.request(
            HTTP_METHOD_DELETE,
            path=self.object_path,
            params={**self.params, QPARAM_MPT_UPLOAD_ID: self.upload_id},
            json=ActionMsg(action=ACT_MPT_ABORT).model_dump(),
        )
