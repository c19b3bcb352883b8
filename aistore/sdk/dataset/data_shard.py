"""`DataShard`: where a set of shards lives (endpoint, bucket, prefix).

Example:
    >>> DataShard("http://localhost:8080", "shards").bucket.name  # doctest: +SKIP
    'shards'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.provider import Provider

__all__ = ["DataShard"]


@dataclass
class DataShard:
    """Shards in `bucket_name` (under `prefix`) of the cluster at `client_url`; makes a
    `Client` and `Bucket` for them.

    Example:
        >>> DataShard("http://localhost:8080", "shards", prefix="train/").bucket.name
        'shards'
    """

    client_url: str
    bucket_name: str
    provider: str = Provider.AIS.value
    prefix: str = ""
    etl_name: str | None = None
    client: Client = field(init=False)
    bucket: Bucket = field(init=False)

    def __post_init__(self) -> None:
        self.client = Client(self.client_url)
        self.bucket = self.client.bucket(bck_name=self.bucket_name, provider=self.provider)
