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
from typing import Any, TypeVar

import msgspec
from pydantic import BaseModel, ConfigDict, Field, field_validator

from aistore.sdk.const import GB_ARCHPATH as GB_ARCHPATH
from aistore.sdk.const import GB_BCK as GB_BCK
from aistore.sdk.const import GB_COLOC as GB_COLOC
from aistore.sdk.const import GB_CONTINUE_ERR as GB_CONTINUE_ERR
from aistore.sdk.const import GB_ERR_MSG as GB_ERR_MSG
from aistore.sdk.const import GB_IN as GB_IN
from aistore.sdk.const import GB_LENGTH as GB_LENGTH
from aistore.sdk.const import GB_OBJNAME as GB_OBJNAME
from aistore.sdk.const import GB_ONLY_OBJ_NAME as GB_ONLY_OBJ_NAME
from aistore.sdk.const import GB_OPAQUE as GB_OPAQUE
from aistore.sdk.const import GB_OUT as GB_OUT
from aistore.sdk.const import GB_OUTPUT_FMT as GB_OUTPUT_FMT
from aistore.sdk.const import GB_PROVIDER as GB_PROVIDER
from aistore.sdk.const import GB_SIZE as GB_SIZE
from aistore.sdk.const import GB_START as GB_START
from aistore.sdk.const import GB_STRM_GET as GB_STRM_GET
from aistore.sdk.const import GB_UNAME as GB_UNAME
from aistore.sdk.const import GB_UUID as GB_UUID

__all__ = [
    "MossIn",
    "MossOut",
    "MossReq",
    "MossResp",
    "decode_opaque",
    "encode_request",
    "trusted",
]

M = TypeVar("M", bound=BaseModel)


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


_new = object.__new__
_set = object.__setattr__
_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {}


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of `model` with its default (all of these models default to None or 0).
    Shared: copy it before changing it."""
    defaults = _DEFAULTS.get(model)
    if defaults is None:
        defaults = _DEFAULTS[model] = {n: f.default for n, f in model.model_fields.items()}
    return defaults


def trusted(model: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """`model.model_construct(**values)` for values known to be valid (built by this package),
    in one step instead of pydantic's per-field loop: a batch builds one model per item, and
    this is most of the client's per-item cost for small objects. Fields not given get their
    default. REQUIRES: `values` is not used by the caller afterwards (when it names every
    field, it becomes the model's state).

    `fields_set`: the fields the caller set (default: the keys of `values`), shared by the
    models of one batch. Only for models pydantic never adds to it: frozen ones, or ones
    built with every field set (pydantic copies the set before changing a copy)."""
    defaults = model_defaults(model)
    if len(values) == len(defaults):
        state = values  # every field given: the caller's fresh dict becomes the model's
    else:
        state = defaults.copy()
        state.update(values)
    obj: M = _new(model)
    _set(obj, "__dict__", state)
    _set(obj, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def _aliases(model: type[BaseModel]) -> dict[str, str]:
    return {name: f.alias or name for name, f in model.model_fields.items()}


_IN_ALIASES = _aliases(MossIn)
_REQ_ALIASES: dict[str, str] = {}  # filled below, once MossReq exists


def encode_request(req: MossReq) -> bytes:
    """`req.dict()` as JSON bytes, built straight from the fields (a batch may hold 100k items:
    this is several times faster than the model serializer plus `json.dumps`)."""
    body: dict[str, Any] = {}
    for name, value in req.__dict__.items():
        if name == "moss_in":
            body[_REQ_ALIASES[name]] = [
                {_IN_ALIASES[k]: v for k, v in item.__dict__.items() if v is not None}
                for item in value
            ]
        elif value is not None:
            body[_REQ_ALIASES[name]] = value
    return msgspec.json.encode(body)


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


_REQ_ALIASES.update(_aliases(MossReq))


def _trusted_matches_pydantic() -> bool:
    """Whether this pydantic builds models the way `trusted` assumes."""
    samples: list[tuple[type[BaseModel], dict[str, Any]]] = [
        (MossIn, {"obj_name": "o", "bck": "b", "provider": "ais", "length": -1}),
        (MossOut, {"obj_name": "o", "archpath": "", "bucket": "b", "provider": "ais", "size": 1}),
        (
            MossOut,
            {
                "obj_name": "o", "archpath": "x", "bucket": "b", "provider": "ais",
                "opaque": b"\x00", "err_msg": None, "size": 1,
            },
        ),
    ]  # fmt: skip
    try:
        for model, values in samples:
            fast, slow = trusted(model, dict(values)), model.model_construct(**values)
            if fast != slow or fast.model_dump() != slow.model_dump():
                return False
            if fast.model_dump(exclude_defaults=True) != slow.model_dump(exclude_defaults=True):
                return False
            if model is MossIn and hash(fast) != hash(slow):
                return False
        return True
    except Exception:  # noqa: BLE001 - any surprise means: use the public path
        return False


if not _trusted_matches_pydantic():  # pragma: no cover - depends on the installed pydantic

    def trusted(  # noqa: F811
        model: type[M], values: dict[str, Any], fields_set: set[str] | None = None
    ) -> M:
        return model.model_construct(fields_set, **values)


class MossResp(BaseModel):
    """The metadata part of a multipart reply: one `MossOut` per item, in order.

    Example:
        >>> MossResp.model_validate_json('{"uuid":"u","out":[]}').uuid
        'u'
    """

    model_config = ConfigDict(populate_by_name=True)

    out: list[MossOut] = Field(default_factory=list, alias="out")
    uuid: str = Field(default="", alias="uuid")
