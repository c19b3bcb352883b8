"""Response bodies to typed values: msgpack via msgspec, JSON via pydantic.

Decoders are built once per target type: a pydantic `TypeAdapter` costs far more to build
than to run, and list-object pages arrive in tight loops.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import requests
from pydantic import TypeAdapter

from aistore._internal.const import HEADER_CONTENT_TYPE, MSGPACK_CONTENT_TYPE


@functools.lru_cache(maxsize=64)
def _msgpack_decoder(model: Any) -> msgspec.msgpack.Decoder[Any]:
    return msgspec.msgpack.Decoder(model)


@functools.lru_cache(maxsize=64)
def _json_adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(model)


def decode_response(model: Any, resp: requests.Response) -> Any:
    """Decode `resp` into `model`: msgpack iff Content-Type is exactly `application/msgpack`."""
    if resp.headers.get(HEADER_CONTENT_TYPE) == MSGPACK_CONTENT_TYPE:
        return _msgpack_decoder(model).decode(resp.content)
    return _json_adapter(model).validate_json(resp.content)
