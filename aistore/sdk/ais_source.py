"""`AISSource`: anything that can list AIS objects (a bucket, a group of objects); the
datasets of `aistore.pytorch` read from these.

Example:
    >>> from aistore.sdk.ais_source import AISSource
    >>> from aistore.sdk.bucket import Bucket
    >>> issubclass(Bucket, AISSource)
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.obj.object import Object as Object
from aistore.sdk.request_client import RequestClient as RequestClient

__all__ = ["AISSource"]


class AISSource(ABC):
    """A source of AIS objects, addressed by listing or by URL.

    Example:
        >>> class Names(AISSource):  # doctest: +SKIP
        ...     client = ...
        ...     def list_all_objects_iter(self, prefix="", props="name,size"): ...
        ...     def list_urls(self, prefix="", etl=None): ...
    """

    @property
    @abstractmethod
    def client(self) -> RequestClient:
        """The request client the source's objects use."""

    @abstractmethod
    def list_all_objects_iter(self, prefix: str = "", props: str = "name,size") -> Iterable[Object]:
        """The source's objects whose names start with `prefix`, lazily, with `props` cached.

        Args:
            prefix: only names starting with it.
            props: comma-separated properties to fetch with each object (e.g. "name,size").
        """

    @abstractmethod
    def list_urls(self, prefix: str = "", etl: Any = None) -> Iterable[str]:
        """GET URLs of the source's objects whose names start with `prefix`.

        Args:
            prefix: only names starting with it.
            etl: an ETL to apply, encoded in the URLs.
        """
