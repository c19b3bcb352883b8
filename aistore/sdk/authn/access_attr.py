"""Permission bits of AIS access control (`apc.AccessAttrs`).

Example:
    >>> AccessAttr.describe(AccessAttr.GET | AccessAttr.PUT)
    'GET,PUT'
"""

from __future__ import annotations

from enum import IntFlag

__all__ = ["AccessAttr"]


class AccessAttr(IntFlag):
    """One bit per operation, and the usual combinations of them.

    Example:
        >>> int(AccessAttr.ACCESS_RO), int(AccessAttr.ACCESS_RW)
        (771, 831)
    """

    GET = 1 << 0
    OBJ_HEAD = 1 << 1
    PUT = 1 << 2
    APPEND = 1 << 3
    OBJ_DELETE = 1 << 4
    OBJ_MOVE = 1 << 5
    PROMOTE = 1 << 6
    OBJ_UPDATE = 1 << 7
    BCK_HEAD = 1 << 8
    OBJ_LIST = 1 << 9
    PATCH = 1 << 10
    BCK_SET_ACL = 1 << 11
    LIST_BUCKETS = 1 << 12
    SHOW_CLUSTER = 1 << 13
    CREATE_BUCKET = 1 << 14
    DESTROY_BUCKET = 1 << 15
    MOVE_BUCKET = 1 << 16
    ADMIN = 1 << 17
    ACCESS_RO = GET | OBJ_HEAD | BCK_HEAD | OBJ_LIST
    ACCESS_RW = ACCESS_RO | PUT | APPEND | OBJ_DELETE | OBJ_MOVE
    CLUSTER_ACCESS_RO = LIST_BUCKETS | SHOW_CLUSTER
    CLUSTER_ACCESS_RW = CLUSTER_ACCESS_RO | CREATE_BUCKET | DESTROY_BUCKET | MOVE_BUCKET
    ACCESS_BUCKET_ADMIN = PATCH | BCK_SET_ACL | OBJ_UPDATE
    ACCESS_SU = ACCESS_RW | PROMOTE | ACCESS_BUCKET_ADMIN | CLUSTER_ACCESS_RW | ADMIN

    @staticmethod
    def describe(perms: int) -> str:
        """Names of the single bits set in `perms`, comma-separated, lowest bit first."""
        return ",".join(str(attr.name) for attr in _SINGLE_BITS if perms & attr.value)


# The one-bit members in bit order (the combinations are left out).
_SINGLE_BITS = [a for a in AccessAttr.__members__.values() if a.value & (a.value - 1) == 0]
