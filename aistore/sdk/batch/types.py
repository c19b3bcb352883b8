"""Wire types of GetBatch (AIS `apc.MossReq`, `apc.MossIn`, `apc.MossOut`, `apc.MossResp`);
the JSON keys are those of `aistore.sdk.const.GB_*`.

`dict()` gives the JSON form sent to the server: aliases as keys, defaults left out.

Example:
    >>> from aistore.sdk.batch.types import MossIn, MossReq
    >>> req = MossReq(moss_in=[MossIn(obj_name="a.jpg", bck="b", provider="ais")], strm=True)
    >>> req.dict()
    {'in': [{'objname': 'a.jpg', 'bucket': 'b', 'provider': 'ais'}], 'strm': True}
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["MossIn", "MossOut", "MossReq", "MossResp", "decode_opaque"]


def decode_opaque(value: str | bytes | None) -> bytes | None:
    """Base64 text (standard or URL-safe alphabet, padding optional) to bytes; None when
    absent or malformed."""
    if value is None or isinstance(value, bytes):
        return value
    if not value:
        return None
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return None


class MossIn(BaseModel):
    """One requested item: an object, a byte range of it, or a file inside it (`archpath`).

    Example:
        >>> MossIn(obj_name="s.tar", bck="b", archpath="x/1.jpg").dict()
        {'objname': 's.tar', 'bucket': 'b', 'archpath': 'x/1.jpg'}
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    obj_name: str = Field(alias="objname")
    bck: str | None = Field(default=None, alias="bucket")  # overrides the request's bucket
    provider: str | None = Field(default=None, alias="provider")
    uname: str | None = Field(default=None, alias="uname")
    opaque: str | None = Field(default=None, alias="opaque")  # base64, echoed back
    archpath: str | None = Field(default=None, alias="archpath")
    start: int | None = Field(default=None, alias="start")
    length: int | None = Field(default=None, alias="length")

    def dict(self, *_args: Any, **_kwargs: Any) -> dict[str, Any]:
        """The JSON form: aliases, defaults omitted."""
        return self.model_dump(by_alias=True, exclude_defaults=True)


class MossOut(BaseModel):
    """What came back for one item: its identity, size and, for a failed item, `err_msg`.

    Example:
        >>> MossOut(objname="a", bucket="b", provider="ais", opaque="aGk=").opaque
        b'hi'
    """

    model_config = ConfigDict(populate_by_name=True)

    obj_name: str = Field(alias="objname")
    archpath: str | None = Field(default=None, alias="archpath")
    bucket: str = Field(alias="bucket")
    provider: str = Field(alias="provider")
    opaque: bytes | None = Field(default=None, alias="opaque")
    err_msg: str | None = Field(default=None, alias="err_msg")
    size: int = Field(default=0, alias="size")

    @field_validator("opaque", mode="before")
    @classmethod
    def decode_opaque(cls, value: Any) -> bytes | None:
        """Base64 text from the server becomes bytes (either alphabet; malformed: None)."""
        return decode_opaque(value) if isinstance(value, (str, bytes)) or value is None else None

    def dict(self, *_args: Any, **_kwargs: Any) -> dict[str, Any]:
        """The JSON form: aliases, defaults omitted."""
        return self.model_dump(by_alias=True, exclude_defaults=True)


class MossReq(BaseModel):
    """A GetBatch request: the items in order and how to deliver them.

    Example:
        >>> MossReq(output_format=".zip").add(MossIn(obj_name="o")).dict()
        {'in': [{'objname': 'o'}], 'mime': '.zip'}
    """

    model_config = ConfigDict(populate_by_name=True)

    moss_in: list[MossIn] = Field(default_factory=list, alias="in")
    output_format: str | None = Field(default=None, alias="mime")
    cont_on_err: bool | None = Field(default=None, alias="coer")
    only_obj_name: bool | None = Field(default=None, alias="onob")
    streaming_get: bool | None = Field(default=None, alias="strm")
    colocation: int | None = Field(default=None, alias="coloc")

    def dict(self, *_args: Any, **_kwargs: Any) -> dict[str, Any]:
        """The JSON form: aliases, defaults omitted."""
        return self.model_dump(by_alias=True, exclude_defaults=True)

    def add(self, moss_in: MossIn) -> MossReq:
        """Append one item; returns self."""
        self.moss_in.append(moss_in)
        return self

    def extend(self, moss_ins: list[MossIn]) -> MossReq:
        """Append items; returns self."""
        self.moss_in.extend(moss_ins)
        return self


class MossResp(BaseModel):
    """The metadata part of a multipart reply: one `MossOut` per item, in order.

    Example:
        >>> MossResp.model_validate_json('{"uuid":"u","out":[]}').uuid
        'u'
    """

    model_config = ConfigDict(populate_by_name=True)

    out: list[MossOut] = Field(default_factory=list, alias="out")
    uuid: str = Field(default="", alias="uuid")
