"""The official SDK's public surface: `from aistore.sdk import Client, Bucket, ...`.

Example:
    >>> from aistore.sdk import Client, ListObjectFlag
    >>> client = Client("http://localhost:8080")
"""

from aistore.sdk.ais_source import AISSource
from aistore.sdk.archive_config import ArchiveConfig
from aistore.sdk.authn.authn_client import AuthNClient
from aistore.sdk.batch.batch import Batch
from aistore.sdk.blob_download_config import BlobDownloadConfig
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.cluster import Cluster
from aistore.sdk.dataset.data_shard import DataShard
from aistore.sdk.etl.etl import Etl
from aistore.sdk.job import Job
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object import Object
from aistore.sdk.retry_config import ColdGetConf, RetryConfig
from aistore.sdk.wait_result import WaitResult

__all__ = [
    "AISSource",
    "ArchiveConfig",
    "AuthNClient",
    "Batch",
    "BlobDownloadConfig",
    "Bucket",
    "Client",
    "Cluster",
    "ColdGetConf",
    "DataShard",
    "Etl",
    "Job",
    "ListObjectFlag",
    "Namespace",
    "Object",
    "RetryConfig",
    "WaitResult",
]
