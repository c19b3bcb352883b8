"""HTTP error replies to the official exception classes, decided in one place.

The official SDK classifies by searching the raw body for a canonical bucket name
(`prov://bck`, maybe followed by `/obj`); servers embed one in every not-found and
already-exists message. We keep that rule so both clients raise the same class.
"""

from __future__ import annotations

import re

from aistore.sdk.errors import (
    AISError,
    ErrBckAlreadyExists,
    ErrBckNotFound,
    ErrETLAlreadyExists,
    ErrETLNotFound,
    ErrGETConflict,
    ErrObjNotFound,
    ErrRemoteBckNotFound,
    InvalidBckProvider,
)
from aistore.sdk.provider import Provider, provider_aliases

_PROVIDERS = "|".join([p.value for p in Provider] + list(provider_aliases))
_BUCKET_CHAR = r"[A-Za-z0-9@#._-]"
# The bucket part holds at most @uuid(32)#namespace(32)/bucket(64) plus separators.
_MAX_BUCKET_PART = 132
_CNAME = re.compile(
    rf"({_PROVIDERS})://({_BUCKET_CHAR}{{1,{_MAX_BUCKET_PART}}})(?:(/)|(?!{_BUCKET_CHAR}))"
)
_ETL_MARKER = "etl job"


def extract_and_parse_url(msg: str) -> tuple[str, str, bool] | None:
    """First `prov://bck[/]` in `msg`: (provider as written, bucket, whether an object follows)."""
    m = _CNAME.search(msg)
    if m is None:
        return None
    return m.group(1), m.group(2), m.group(3) is not None


def classify(status: int, message: str, method: str) -> type[AISError]:
    """The exception class for an AIS error reply; `method` is the request's HTTP method."""
    is_etl = _ETL_MARKER in message
    found = extract_and_parse_url(message)
    provider: Provider | None = None
    bucket, has_obj = "", False
    if found is not None:
        raw_provider, bucket, has_obj = found
        try:
            provider = Provider.parse(raw_provider)
        except InvalidBckProvider:
            provider = None
    if status == 404:
        if is_etl:
            return ErrETLNotFound
        if provider is not None:
            if has_obj:
                return ErrObjNotFound
            if provider.is_remote() or "@" in bucket:
                return ErrRemoteBckNotFound
            return ErrBckNotFound
    elif status == 409:
        if method.upper() == "GET":
            return ErrGETConflict
        if is_etl:
            return ErrETLAlreadyExists
        if provider is not None and not has_obj:
            return ErrBckAlreadyExists
    return AISError
