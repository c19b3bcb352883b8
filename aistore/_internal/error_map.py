"""Errors translated in one place: transport failures to `requests` exceptions (`map_errors`),
HTTP error replies to the official exception classes (`classify`).

Transport failures - of the native client, urllib3, http.client, sockets - become the
`requests` exceptions that the retry policies (`RetryConfig.network_retry`) and the resumable
readers know, whichever transport met them, by one table (`_ERROR_TABLE`); `requests` itself
maps urllib3's errors while it sends a request.

The official SDK classifies by searching the raw body for a canonical bucket name
(`prov://bck`, maybe followed by `/obj`); servers embed one in every not-found and
already-exists message. We keep that rule so both clients raise the same class.
"""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import requests
from requests.exceptions import ChunkedEncodingError, ContentDecodingError, ReadTimeout
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import ConnectTimeout as RequestsConnectTimeout
from requests.exceptions import SSLError as RequestsSSLError
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError
from urllib3.exceptions import SSLError as Urllib3SSLError

from aistore import _native
from aistore._internal.errors import (
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
from aistore._internal.provider import Provider, provider_aliases

__all__ = ["classify", "extract_and_parse_url", "map_errors", "translate"]

Phase = Literal["send", "read"]

# A foreign error -> the `requests` exception raised in its place while sending a request and
# while reading a reply's body. Most specific first; the first match wins.
_ERROR_TABLE: tuple[tuple[type[BaseException], type[Exception], type[Exception]], ...] = (
    (_native.ConnectTimeout, RequestsConnectTimeout, ReadTimeout),
    (_native.ReadTimeout, ReadTimeout, ReadTimeout),
    (_native.ConnectionFailed, RequestsConnectionError, ChunkedEncodingError),
    (_native.HttpError, RequestsConnectionError, ChunkedEncodingError),  # a malformed reply
    (ProtocolError, RequestsConnectionError, ChunkedEncodingError),
    (DecodeError, ContentDecodingError, ContentDecodingError),
    (ReadTimeoutError, ReadTimeout, RequestsConnectionError),  # as requests' iter_content
    (Urllib3SSLError, RequestsSSLError, RequestsSSLError),
    (TimeoutError, ReadTimeout, ReadTimeout),
    (http.client.HTTPException, RequestsConnectionError, ChunkedEncodingError),
    (OSError, RequestsConnectionError, RequestsConnectionError),
)
_FOREIGN = tuple(row[0] for row in _ERROR_TABLE)


def translate(err: BaseException, phase: Phase) -> BaseException:
    """The `_ERROR_TABLE` counterpart of `err` met while `phase` ran, its cause set to `err`;
    `err` itself when it is a `requests` exception or not in the table."""
    if isinstance(err, requests.RequestException) or not isinstance(err, _FOREIGN):
        return err
    for foreign, on_send, on_read in _ERROR_TABLE:
        if isinstance(err, foreign):
            mapped = (on_send if phase == "send" else on_read)(err)
            mapped.__cause__ = err
            return mapped
    return err


@contextmanager
def map_errors(phase: Phase) -> Iterator[None]:
    """Raise the `_ERROR_TABLE` counterpart of a foreign error met while `phase` runs, chained
    to it; `requests` exceptions pass unchanged."""
    try:
        yield
    except _FOREIGN as err:
        mapped = translate(err, phase)
        if mapped is err:
            raise
        raise mapped from err


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
