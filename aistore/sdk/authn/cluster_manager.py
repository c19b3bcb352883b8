"""Clusters registered with AuthN.

Example:
    >>> info = authn.cluster_manager().register("main", ["http://ais:51080"])  # doctest: +SKIP
"""

from __future__ import annotations

import builtins
import logging

from aistore.sdk.authn.types import ClusterInfo, ClusterList
from aistore.sdk.const import (
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    URL_PATH_AUTHN_CLUSTERS,
)
from aistore.sdk.request_client import RequestClient as RequestClient
from aistore.sdk.response_handler import AISResponseHandler
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["ClusterManager", "logger"]

logger = logging.getLogger(__name__)

# AuthN API path of clusters, under /v1.


class ClusterManager:
    """Lists, registers, updates and removes the clusters AuthN issues tokens for.

    Example:
        >>> clusters = authn.cluster_manager().list().clusters  # doctest: +SKIP

    Args:
        client: the AuthN request client.
    """

    def __init__(self, client: RequestClient) -> None:
        self._client = client

    @property
    def client(self) -> RequestClient:
        """The AuthN request client."""
        return self._client

    def list(self) -> ClusterList:
        """Every registered cluster."""
        return self._client.request_deserialize(
            HTTP_METHOD_GET, URL_PATH_AUTHN_CLUSTERS, ClusterList
        )

    def get(self, cluster_id: str | None = None, cluster_alias: str | None = None) -> ClusterInfo:
        """One cluster, by id or alias.

        Raises:
            ValueError: neither given.
            RuntimeError: AuthN returned no cluster.
            ErrClusterNotFound: no such cluster.
        """
        key = _id_or_alias(cluster_id, cluster_alias)
        found = self._client.request_deserialize(
            HTTP_METHOD_GET, f"{URL_PATH_AUTHN_CLUSTERS}/{key}", ClusterList
        )
        if not found.clusters:
            raise RuntimeError(f"No cluster found with ID or alias '{key}'")
        return next(iter(found.clusters.values()))

    def register(self, cluster_alias: str, urls: builtins.list[str]) -> ClusterInfo:
        """Register the cluster at `urls` under `cluster_alias`; its UUID is read from its map.

        Raises:
            ValueError: no URL, or the cluster's UUID could not be read.
            ErrClusterAlreadyRegistered: registered already.
        """
        if not urls:
            raise ValueError("At least one URL must be provided")
        try:
            ais = self._client.clone(base_url=urls[0], response_handler=AISResponseHandler())
            uuid = ais.get_smap().uuid
        except Exception as err:
            raise ValueError(
                f"Failed to retrieve UUID for the provided URL: {urls[0]} ({err}). Ensure the "
                "URL is correct and reachable, and that its TLS certificate is trusted or "
                "skipped (see AuthNClient's ca_cert / skip_verify)."
            ) from err
        if not uuid:
            raise ValueError("Failed to retrieve UUID for the provided URL")
        logger.info("Registering cluster %s (%s) at %s", cluster_alias, uuid, urls)
        self._client.request(
            HTTP_METHOD_POST,
            path=URL_PATH_AUTHN_CLUSTERS,
            json={"id": uuid, "alias": cluster_alias, "urls": urls},
        )
        return self.get(uuid)

    def update(
        self,
        cluster_id: str,
        cluster_alias: str | None = None,
        urls: builtins.list[str] | None = None,
    ) -> ClusterInfo:
        """Change a cluster's alias and/or URLs.

        Raises:
            ValueError: no id, or nothing to change.
        """
        if not cluster_id:
            raise ValueError("Cluster ID must be provided")
        if cluster_alias is None and urls is None:
            raise ValueError("At least one of cluster_alias or urls must be provided")
        info = ClusterInfo(id=cluster_id)
        if cluster_alias:
            info.alias = cluster_alias
        if urls:
            info.urls = urls
        self._client.request(
            HTTP_METHOD_PUT, path=f"{URL_PATH_AUTHN_CLUSTERS}/{cluster_id}", json=info.model_dump()
        )
        return self.get(cluster_id=cluster_id)

    def delete(self, cluster_id: str | None = None, cluster_alias: str | None = None) -> None:
        """Unregister a cluster, by id or alias.

        Raises:
            ValueError: neither given.
        """
        key = _id_or_alias(cluster_id, cluster_alias)
        self._client.request(HTTP_METHOD_DELETE, path=f"{URL_PATH_AUTHN_CLUSTERS}/{key}")


def _id_or_alias(cluster_id: str | None, cluster_alias: str | None) -> str:
    key = cluster_id or cluster_alias
    if not key:
        raise ValueError("At least one of cluster_id or cluster_alias must be provided")
    return key
