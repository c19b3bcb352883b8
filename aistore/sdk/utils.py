"""Helpers of the public API that user code sometimes imports.

Example:
    >>> from aistore.sdk.utils import parse_url
    >>> parse_url("ais://bucket/dir/obj.bin")
    ('ais', 'bucket', 'dir/obj.bin')
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import ParseResult, parse_qsl, urlparse

import requests
from pydantic import BaseModel
from urllib3.exceptions import MaxRetryError, ReadTimeoutError

from aistore._internal import braces, codec, error_map, hrw
from aistore._internal.config import parse_bool as _parse_bool
from aistore._internal.provider import Provider, provider_aliases
from aistore.sdk.const import (
    DEFAULT_LOG_FORMAT,
    QPARAM_PROVIDER,
    URL_PATH_OBJECTS,
    XX_HASH_SEED,
)
from aistore.sdk.const import HEADER_CONTENT_TYPE as HEADER_CONTENT_TYPE
from aistore.sdk.const import MSGPACK_CONTENT_TYPE as MSGPACK_CONTENT_TYPE

__all__ = [
    "BUCKET_CHARS",
    "CONST1",
    "CONST2",
    "GOLDEN_RATIO",
    "HttpError",
    "MASK",
    "MAX_BUCKET_PART_LEN",
    "ROTATION_BITS",
    "URL_PROVIDERS",
    "convert_to_seconds",
    "decode_response",
    "get_logger",
    "get_object_url_components",
    "get_provider_from_request",
    "is_read_timeout",
    "parse_request_url",
    "expand_braces",
    "extract_and_parse_url",
    "get_digest",
    "get_file_size",
    "parse_bool",
    "parse_url",
    "probing_frequency",
    "read_file_bytes",
    "validate_directory",
    "validate_file",
    "xoshiro256_hash",
]


T = TypeVar("T")

# The constants of the cluster's 64-bit mixing function (xoshiro256** finalizer, splitmix64).
MASK = 0xFFFFFFFFFFFFFFFF
GOLDEN_RATIO = 0x9E3779B97F4A7C15
CONST1 = 0xBF58476D1CE4E5B9
CONST2 = 0x94D049BB133111EB
ROTATION_BITS = 7

# Pieces of `provider://bucket/object` URLs: the provider names and aliases, a bucket's
# characters and the longest bucket part (@uuid(32)#namespace(32)/bucket(64) and separators).
URL_PROVIDERS = "|".join([p.value for p in Provider] + list(provider_aliases))
MAX_BUCKET_PART_LEN = 132
BUCKET_CHARS = r"[A-Za-z0-9@#._-]"


class HttpError(BaseModel):
    """An AIS error document (the JSON body of an error reply).

    Example:
        >>> HttpError.model_validate_json('{"status_code": 404, "message": "not found"}').message
        'not found'
    """

    status_code: int
    message: str = ""
    method: str = ""
    url_path: str = ""
    remote_addr: str = ""
    caller: str = ""
    node: str = ""


def get_logger(name: str, log_format: str = DEFAULT_LOG_FORMAT) -> logging.Logger:
    """The logger `name`, given a stderr handler with `log_format` the first time (it does not
    propagate to the root logger)."""
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(log_format))
        logger.addHandler(handler)
    logger.propagate = False
    return logger


def convert_to_seconds(time_val: str | int) -> int:
    """Seconds in `10`, `"10"`, `"5s"`, `"10m"`, `"2h"` or `"3d"`; ValueError otherwise."""
    if isinstance(time_val, int):
        return time_val
    if not isinstance(time_val, str) or not time_val.strip():
        raise ValueError("Time value must be a non-empty string or integer.")
    text = time_val.strip()
    if text.isdigit():
        return int(text)
    num, unit = text[:-1], text[-1]
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(unit)
    if seconds is None:
        raise ValueError(f"Unsupported time unit: '{unit}'. Use 's', 'm', 'h', or 'd'.")
    if not num.isdigit():
        raise ValueError(f"Invalid numeric value in time: '{num}'.")
    return int(num) * seconds


def is_read_timeout(exc: requests.ConnectionError) -> bool:
    """Whether a `requests.ConnectionError` wraps urllib3's read timeout (after its retries)."""
    inner = exc.args[0] if exc.args else None
    return isinstance(inner, MaxRetryError) and isinstance(inner.reason, ReadTimeoutError)


def parse_request_url(req: requests.Request | requests.PreparedRequest) -> ParseResult:
    """The parsed URL of a request (ValueError if it has none)."""
    if not isinstance(req.url, str):
        raise ValueError(f"Cannot parse request with non-string URL: {req.url!r}")
    return urlparse(req.url)


def get_provider_from_request(req: requests.Request | requests.PreparedRequest) -> Provider:
    """The bucket provider a request names in its `provider` query parameter."""
    if isinstance(req, requests.Request):
        qparams = dict(req.params or {})
    else:
        qparams = dict(parse_qsl(parse_request_url(req).query))
    if not qparams:
        raise ValueError("Cannot parse provider from request with no query params")
    return Provider.parse(qparams.get(QPARAM_PROVIDER, ""))


def get_object_url_components(
    req: requests.PreparedRequest, qparams: list[str]
) -> tuple[str, dict[str, str]]:
    """From an object request: its path from `objects/` on (bucket and object as sent) and those
    of `qparams` it carries (others, e.g. a signing key, are dropped)."""
    parsed = parse_request_url(req)
    marker = f"/{URL_PATH_OBJECTS}/"
    if marker not in parsed.path:
        raise ValueError(f"Cannot extract object path from request URL: {req.url!r}")
    path = f"{URL_PATH_OBJECTS}/{parsed.path.split(marker, 1)[1]}"
    original = dict(parse_qsl(parsed.query))
    return path, {k: v for k in qparams if (v := original.get(k))}


def parse_bool(s: str | None) -> bool:
    """True for `1, t, true, y, yes, on` (any case), else False."""
    return _parse_bool(s)


def parse_url(url: str) -> tuple[str, str, str]:
    """Split `provider://bucket/object` into its three parts (empty when missing)."""
    parsed = urlparse(url)
    return parsed.scheme, parsed.netloc, parsed.path.lstrip("/")


def extract_and_parse_url(msg: str) -> tuple[str, str, bool] | None:
    """First `prov://bck[/...]` in `msg`: (provider, bucket, whether an object follows)."""
    return error_map.extract_and_parse_url(msg)


def decode_response(res_model: Any, resp: requests.Response) -> Any:
    """Decode a reply: msgpack iff Content-Type is exactly `application/msgpack`, else JSON."""
    return codec.decode_response(res_model, resp)


def probing_frequency(dur: float) -> float:
    """Polling interval for a wait of `dur` seconds: dur/8 capped at 1 s, at least dur/64, 0.1 s."""
    return max(min(dur / 8.0, 1.0), dur / 64.0, 0.1)


def validate_file(path: str | Path) -> None:
    """Raise ValueError unless `path` is an existing regular file."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"Path: {path} does not exist")
    if not path.is_file():
        raise ValueError(f"Path: {path} is a directory, not a file")


def validate_directory(path: str | Path) -> None:
    """Raise ValueError unless `path` is an existing directory."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"Path: {path} does not exist")
    if not path.is_dir():
        raise ValueError(f"Path: {path} is a file, not a directory")


def get_digest(name: str) -> int:
    """xxhash64 of `name` with the cluster's seed (object placement)."""
    return hrw.xxh64(name.encode("utf-8"), XX_HASH_SEED)


def xoshiro256_hash(seed: int) -> int:
    """The cluster's 64-bit mixing function (object placement)."""
    return hrw.xoshiro256_hash(seed)


def expand_braces(template: str) -> Iterator[str]:
    """Bash-style brace expansion: `prefix-{0..10..2}-{a,b}` -> each name, in order."""
    return braces.expand(template)


def read_file_bytes(filepath: str | Path) -> bytes:
    """The whole content of a file."""
    with open(filepath, "rb") as f:
        return f.read()


def get_file_size(file: Path) -> str:
    """A file's size for humans, e.g. `1.50 MiB` (`unknown` if it cannot be read)."""
    try:
        size = float(Path(file).stat().st_size)
    except OSError:
        return "unknown"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return "unknown"
