"""Helpers of the public API that user code sometimes imports.

Example:
    >>> from aistore.sdk.utils import parse_url
    >>> parse_url("ais://bucket/dir/obj.bin")
    ('ais', 'bucket', 'dir/obj.bin')
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import requests

from aistore._internal import braces, codec, error_map, hrw
from aistore._internal.config import parse_bool as _parse_bool
from aistore.sdk.const import XX_HASH_SEED

__all__ = [
    "decode_response",
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
