"""Job (xaction) kinds as the cluster names them, and which of them idle instead of finishing.

The values are the wire strings of AIS's kind table; `Job.wait()` uses `IDLE_KINDS` to decide
whether a job is done when it ends or when it goes idle.

Example:
    >>> from aistore.sdk.xact_const import XACT_KIND_COPY_BCK, idles_before_finishing
    >>> XACT_KIND_COPY_BCK, idles_before_finishing(XACT_KIND_COPY_BCK)
    ('copy-bck', False)
"""

from __future__ import annotations

from aistore.sdk.const import (
    ACT_ARCHIVE_OBJECTS,
    ACT_BLOB_DOWNLOAD,
    ACT_COPY_BCK,
    ACT_COPY_OBJECTS,
    ACT_CREATE_NBI,
    ACT_DELETE_OBJECTS,
    ACT_ETL_BCK,
    ACT_EVICT_OBJECTS,
    ACT_EVICT_REMOTE_BCK,
    ACT_LIST,
    ACT_MOVE_BCK,
    ACT_PREFETCH_OBJECTS,
    ACT_PROMOTE,
    ACT_SUMMARY_BCK,
    ACT_TRANSFORM_OBJECTS,
)

__all__ = [
    "IDLE_KINDS",
    "KNOWN_KINDS",
    "XACT_KIND_ARCHIVE",
    "XACT_KIND_BLOB_DL",
    "XACT_KIND_COPY_BCK",
    "XACT_KIND_COPY_OBJECTS",
    "XACT_KIND_CREATE_NBI",
    "XACT_KIND_DELETE_OBJECTS",
    "XACT_KIND_DOWNLOAD",
    "XACT_KIND_DSORT",
    "XACT_KIND_EC_ENCODE",
    "XACT_KIND_EC_GET",
    "XACT_KIND_EC_PUT",
    "XACT_KIND_EC_RESP",
    "XACT_KIND_ELECTION",
    "XACT_KIND_ETL_BCK",
    "XACT_KIND_ETL_INLINE",
    "XACT_KIND_ETL_OBJECTS",
    "XACT_KIND_EVICT_OBJECTS",
    "XACT_KIND_EVICT_REMOTE_BCK",
    "XACT_KIND_GET_BATCH",
    "XACT_KIND_INDEX_SHARD",
    "XACT_KIND_LIST",
    "XACT_KIND_LOAD_LOM_CACHE",
    "XACT_KIND_LRU",
    "XACT_KIND_MAKE_NCOPIES",
    "XACT_KIND_MOVE_BCK",
    "XACT_KIND_PREFETCH_OBJECTS",
    "XACT_KIND_PROMOTE",
    "XACT_KIND_PUT_COPIES",
    "XACT_KIND_REBALANCE",
    "XACT_KIND_RECHUNK",
    "XACT_KIND_RESILVER",
    "XACT_KIND_STORE_CLEANUP",
    "XACT_KIND_SUMMARY_BCK",
    "XACT_KIND_SUMMARY_SHARD",
    "idles_before_finishing",
    "is_valid_kind",
]

# Kinds whose name is also the action that starts them.
XACT_KIND_ARCHIVE = ACT_ARCHIVE_OBJECTS
XACT_KIND_BLOB_DL = ACT_BLOB_DOWNLOAD
XACT_KIND_COPY_BCK = ACT_COPY_BCK
XACT_KIND_COPY_OBJECTS = ACT_COPY_OBJECTS
XACT_KIND_CREATE_NBI = ACT_CREATE_NBI
XACT_KIND_DELETE_OBJECTS = ACT_DELETE_OBJECTS
XACT_KIND_ETL_BCK = ACT_ETL_BCK
XACT_KIND_ETL_OBJECTS = ACT_TRANSFORM_OBJECTS
XACT_KIND_EVICT_OBJECTS = ACT_EVICT_OBJECTS
XACT_KIND_EVICT_REMOTE_BCK = ACT_EVICT_REMOTE_BCK
XACT_KIND_LIST = ACT_LIST
XACT_KIND_MOVE_BCK = ACT_MOVE_BCK
XACT_KIND_PREFETCH_OBJECTS = ACT_PREFETCH_OBJECTS
XACT_KIND_PROMOTE = ACT_PROMOTE
XACT_KIND_SUMMARY_BCK = ACT_SUMMARY_BCK

# Kinds that only exist as jobs.
XACT_KIND_DOWNLOAD = "download"
XACT_KIND_DSORT = "dsort"
XACT_KIND_EC_ENCODE = "ec-encode"
XACT_KIND_EC_GET = "ec-get"
XACT_KIND_EC_PUT = "ec-put"
XACT_KIND_EC_RESP = "ec-resp"
XACT_KIND_ELECTION = "election"
XACT_KIND_ETL_INLINE = "etl-inline"
XACT_KIND_GET_BATCH = "get-batch"
XACT_KIND_INDEX_SHARD = "index-shard"
XACT_KIND_LOAD_LOM_CACHE = "load-lom-cache"
XACT_KIND_LRU = "lru"
XACT_KIND_MAKE_NCOPIES = "make-n-copies"
XACT_KIND_PUT_COPIES = "put-copies"
XACT_KIND_REBALANCE = "rebalance"
XACT_KIND_RECHUNK = "rechunk"
XACT_KIND_RESILVER = "resilver"
XACT_KIND_STORE_CLEANUP = "cleanup-store"
XACT_KIND_SUMMARY_SHARD = "summary-shard"

# Kinds that serve requests as they come and go idle in between rather than finishing:
# waiting for one of them means waiting until it is idle.
IDLE_KINDS: frozenset[str] = frozenset(
    {
        XACT_KIND_ARCHIVE,
        XACT_KIND_COPY_OBJECTS,
        XACT_KIND_DOWNLOAD,
        XACT_KIND_EC_GET,
        XACT_KIND_EC_PUT,
        XACT_KIND_EC_RESP,
        XACT_KIND_ETL_OBJECTS,
        XACT_KIND_GET_BATCH,
        XACT_KIND_LIST,
        XACT_KIND_PUT_COPIES,
    }
)

# Every kind in the cluster's table. An unknown kind is not an error: it is waited on until
# it finishes.
KNOWN_KINDS: frozenset[str] = frozenset(
    {
        XACT_KIND_ARCHIVE,
        XACT_KIND_BLOB_DL,
        XACT_KIND_COPY_BCK,
        XACT_KIND_COPY_OBJECTS,
        XACT_KIND_CREATE_NBI,
        XACT_KIND_DELETE_OBJECTS,
        XACT_KIND_DOWNLOAD,
        XACT_KIND_DSORT,
        XACT_KIND_EC_ENCODE,
        XACT_KIND_EC_GET,
        XACT_KIND_EC_PUT,
        XACT_KIND_EC_RESP,
        XACT_KIND_ELECTION,
        XACT_KIND_ETL_BCK,
        XACT_KIND_ETL_INLINE,
        XACT_KIND_ETL_OBJECTS,
        XACT_KIND_EVICT_OBJECTS,
        XACT_KIND_EVICT_REMOTE_BCK,
        XACT_KIND_GET_BATCH,
        XACT_KIND_INDEX_SHARD,
        XACT_KIND_LIST,
        XACT_KIND_LOAD_LOM_CACHE,
        XACT_KIND_LRU,
        XACT_KIND_MAKE_NCOPIES,
        XACT_KIND_MOVE_BCK,
        XACT_KIND_PREFETCH_OBJECTS,
        XACT_KIND_PROMOTE,
        XACT_KIND_PUT_COPIES,
        XACT_KIND_REBALANCE,
        XACT_KIND_RECHUNK,
        XACT_KIND_RESILVER,
        XACT_KIND_STORE_CLEANUP,
        XACT_KIND_SUMMARY_BCK,
        XACT_KIND_SUMMARY_SHARD,
    }
)


def idles_before_finishing(kind: str) -> bool:
    """Whether jobs of `kind` go idle between requests instead of finishing (False if unknown).

    Example:
        >>> idles_before_finishing("get-batch")
        True
    """
    return kind in IDLE_KINDS


def is_valid_kind(kind: str) -> bool:
    """Whether `kind` is in the cluster's table of job kinds.

    Example:
        >>> is_valid_kind("rechunk"), is_valid_kind("no-such-kind")
        (True, False)
    """
    return kind in KNOWN_KINDS
