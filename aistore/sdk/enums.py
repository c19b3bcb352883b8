"""Small enumerations shared by several calls.

Example:
    >>> from aistore.sdk.enums import FLTPresence
    >>> int(FLTPresence.FLT_PRESENT)
    2
"""

from enum import Enum, IntEnum

__all__ = ["Colocation", "FLTPresence", "LogSeverity", "NodeFilter"]


class FLTPresence(IntEnum):
    """Presence filter for buckets and objects (query `presence`).

    Example:
        >>> FLTPresence(5).name
        'FLT_EXISTS_OUTSIDE'
    """

    FLT_EXISTS = 0  # exists inside and/or outside the cluster
    FLT_EXISTS_NO_PROPS = 1
    FLT_PRESENT = 2  # present in the cluster (objects: properly placed)
    FLT_PRESENT_NO_PROPS = 3
    FLT_PRESENT_CLUSTER = 4  # anywhere in the cluster, copies and slices included
    FLT_EXISTS_OUTSIDE = 5  # only outside the cluster


class Colocation(IntEnum):
    """How a GetBatch request's objects are spread over targets (a scheduling hint).

    Example:
        >>> Colocation.TARGET_AWARE.value
        1
    """

    NONE = 0
    TARGET_AWARE = 1
    TARGET_AND_SHARD_AWARE = 2


class LogSeverity(str, Enum):
    """Severity of node log lines to fetch (`Cluster.get_node_log`): a level and everything worse.

    Example:
        >>> LogSeverity("warning") is LogSeverity.WARNING
        True
    """

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class NodeFilter(str, Enum):
    """Which nodes `Cluster.get_cluster_logs` reads.

    Example:
        >>> NodeFilter.ALL.value
        'all'
    """

    TARGET = "target"
    PROXY = "proxy"
    ALL = "all"
