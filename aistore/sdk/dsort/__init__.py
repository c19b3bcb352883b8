"""dSort: a cluster-wide shuffle of shards into new shards, in a chosen order.

Our server has no dSort. Its specifications and result types work as in the official SDK;
starting or querying a job fails as on a cluster without dSort (`AISError` with the
server's status and message).

Example:
    >>> from aistore.sdk.dsort import DsortAlgorithm
    >>> DsortAlgorithm(kind="shuffle", seed="42").as_dict()
    {'kind': 'shuffle', 'decreasing': False, 'seed': '42'}
"""

from aistore.sdk.dsort.core import Dsort
from aistore.sdk.dsort.ekm import ExternalKeyMap
from aistore.sdk.dsort.framework import DsortAlgorithm, DsortFramework, DsortShardsGroup

__all__ = ["Dsort", "DsortAlgorithm", "DsortFramework", "DsortShardsGroup", "ExternalKeyMap"]
