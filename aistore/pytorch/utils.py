"""Small helpers of the PyTorch datasets: decimal megabytes, `provider://bucket/object` URLs and
WebDataset-style sample keys.

Example:
    >>> from aistore.pytorch.utils import get_basename, get_extension, unparse_url
    >>> get_basename("train/cat.001.jpg"), get_extension("train/cat.001.jpg")
    ('cat', 'jpg')
    >>> unparse_url("ais", "imgs", "train/cat.jpg")
    'ais://imgs/train/cat.jpg'
"""

from __future__ import annotations

import math
from urllib.parse import urlunparse

from aistore.sdk.utils import parse_url as sdk_parse_url

__all__ = [
    "MB_TO_B",
    "convert_bytes_to_mb",
    "convert_mb_to_bytes",
    "get_basename",
    "get_extension",
    "parse_url",
    "unparse_url",
]

MB_TO_B = 1000000
"""Bytes in a (decimal) megabyte."""


def convert_mb_to_bytes(megabytes: float) -> int:
    """`megabytes` decimal MB in bytes, rounded down (1.5 -> 1500000)."""
    return math.floor(megabytes * MB_TO_B)


def convert_bytes_to_mb(bytes: int) -> float:
    """`bytes` in decimal megabytes (2500000 -> 2.5)."""
    return bytes / MB_TO_B


def unparse_url(provider: str, bck_name: str, obj_name: str) -> str:
    """`provider://bck_name/obj_name` (`provider://bck_name` when `obj_name` is empty)."""
    return urlunparse((provider, bck_name, obj_name, "", "", ""))


def get_basename(name: str) -> str:
    """The last path component of `name` up to its first dot: `"a/b.c.d"` -> `"b"`."""
    return name.split("/")[-1].split(".")[0]


def get_extension(name: str) -> str:
    """The last path component of `name` after its last dot, `""` without a dot:
    `"a/b.c.d"` -> `"d"`."""
    base = name.split("/")[-1]
    _, dot, ext = base.rpartition(".")
    return ext if dot else ""


def parse_url(url: str) -> tuple[str, str, str]:
    """`(provider, bucket, object path)` of `provider://bucket/object/path` (empty parts when
    missing)."""
    return sdk_parse_url(url)
