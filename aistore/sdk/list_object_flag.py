"""Flags of a list-objects request.

Each value is a bit *position*; the request carries `sum(1 << flag.value)` as a decimal string.

Example:
    >>> from aistore.sdk.list_object_flag import ListObjectFlag
    >>> ListObjectFlag.join_flags([ListObjectFlag.CACHED, ListObjectFlag.NAME_ONLY])
    17
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

__all__ = ["ListObjectFlag"]


class ListObjectFlag(Enum):
    """Bit positions of list-objects flags (Go `api/apc/lsmsg.go`, `Ls*`).

    Example:
        >>> 1 << ListObjectFlag.NO_DIRS.value
        8192
    """

    CACHED = 0  # only objects present in the cluster
    MISSING = 1  # include objects whose main copy is missing
    DELETED = 2  # include objects marked deleted
    ARCH_DIR = 3  # list archive contents as virtual directories
    NAME_ONLY = 4  # names and status only
    NAME_SIZE = 5  # names and sizes only
    BCK_PRESENT = 6  # do not look outside the cluster for the bucket
    DONT_HEAD_REMOTE = 7
    DONT_ADD_REMOTE = 8
    NOT_CACHED = 9  # only objects absent from the cluster (remote buckets)
    ONLY_REMOTE_PROPS = 10
    NO_RECURSION = 11  # one level, POSIX style
    DIFF = 12
    NO_DIRS = 13  # no virtual directory entries
    IS_S3 = 14
    NBI = 15  # list from a native bucket inventory

    @staticmethod
    def join_flags(flags: Iterable[ListObjectFlag]) -> int:
        """OR the flags' bits into one mask."""
        mask = 0
        for flag in flags:
            mask |= 1 << flag.value
        return mask
