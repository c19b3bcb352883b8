"""Roles: named sets of permissions on clusters and buckets.

Example:
    >>> authn.role_manager().create("readers", "read data", "main",  # doctest: +SKIP
    ...                             [AccessAttr.ACCESS_RO], bucket_name="data")
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Iterable

from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.authn.cluster_manager import ClusterManager
from aistore.sdk.authn.errors import ErrRoleNotFound
from aistore.sdk.authn.types import BucketPermission, ClusterPermission, RoleInfo, RolesList
from aistore.sdk.const import (
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    URL_PATH_AUTHN_ROLES,
)
from aistore.sdk.namespace import Namespace
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient as RequestClient
from aistore.sdk.types import BucketModel
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["RoleManager", "logger"]

logger = logging.getLogger(__name__)

# AuthN API path of roles, under /v1.


class RoleManager:
    """Lists, creates, updates and deletes roles.

    Example:
        >>> names = [r.name for r in authn.role_manager().list()]  # doctest: +SKIP

    Args:
        client: the AuthN request client.
    """

    def __init__(self, client: RequestClient) -> None:
        self._client = client

    @property
    def client(self) -> RequestClient:
        """The AuthN request client."""
        return self._client

    def list(self) -> RolesList:
        """Every role."""
        return self._client.request_deserialize(HTTP_METHOD_GET, URL_PATH_AUTHN_ROLES, RolesList)

    def get(self, role_name: str) -> RoleInfo:
        """One role.

        Raises:
            ErrRoleNotFound: no such role.
        """
        return self._client.request_deserialize(
            HTTP_METHOD_GET, f"{URL_PATH_AUTHN_ROLES}/{role_name}", RoleInfo
        )

    def create(
        self,
        name: str,
        desc: str,
        cluster_alias: str,
        perms: builtins.list[AccessAttr],
        bucket_name: str | None = None,
    ) -> RoleInfo:
        """Create a role with `perms` on the cluster `cluster_alias`, or only on its bucket
        `bucket_name`.

        Raises:
            ErrRoleAlreadyExists: the role exists.
            ErrClusterNotFound: no such cluster.
        """
        role = RoleInfo(name=name, desc=desc)
        self._grant(role, cluster_alias, perms, bucket_name)
        logger.info("Creating role %s", name)
        self._client.request(HTTP_METHOD_POST, path=URL_PATH_AUTHN_ROLES, json=role.model_dump())
        return self.get(role_name=name)

    def update(
        self,
        name: str,
        desc: str | None = None,
        cluster_alias: str | None = None,
        perms: builtins.list[AccessAttr] | None = None,
        bucket_name: str | None = None,
    ) -> None:
        """Change a role's description and/or replace its permissions on a cluster or bucket.

        Raises:
            ValueError: nothing to change, or permissions without a cluster (or the reverse).
        """
        if not (desc or cluster_alias or perms or bucket_name):
            raise ValueError(
                "You must change either the description or permissions for a bucket or cluster."
            )
        if perms and not cluster_alias:
            raise ValueError("Cluster alias must be provided when permissions are specified.")
        if bucket_name and not cluster_alias:
            raise ValueError("Cluster alias must be provided when bucket_name is specified.")
        if (cluster_alias or bucket_name) and not perms:
            raise ValueError(
                "Permissions must be provided when cluster alias or bucket name is specified."
            )
        role = self.get(role_name=name)
        if desc:
            role.desc = desc
        if cluster_alias and perms:
            self._grant(role, cluster_alias, perms, bucket_name)
        logger.info("Updating role %s", name)
        self._client.request(
            HTTP_METHOD_PUT, path=f"{URL_PATH_AUTHN_ROLES}/{name}", json=role.model_dump()
        )

    def delete(self, name: str, missing_ok: bool = False) -> None:
        """Delete a role.

        Raises:
            ErrRoleNotFound: no such role, unless `missing_ok`.
        """
        try:
            self._client.request(HTTP_METHOD_DELETE, path=f"{URL_PATH_AUTHN_ROLES}/{name}")
        except ErrRoleNotFound:
            if not missing_ok:
                raise

    def _grant(
        self,
        role: RoleInfo,
        cluster_alias: str,
        perms: Iterable[AccessAttr],
        bucket_name: str | None,
    ) -> None:
        """Set the role's permissions on the cluster, or on one of its buckets."""
        perm = str(_sum_perms(perms))
        cluster_uuid = ClusterManager(self._client).get(cluster_alias=cluster_alias).id
        if bucket_name:
            bck = BucketModel(
                name=bucket_name,
                provider=Provider.AIS.value,
                namespace=Namespace(uuid=cluster_uuid),
            )
            role.buckets = [BucketPermission(bck=bck, perm=perm)]
        else:
            role.clusters = [ClusterPermission(id=cluster_uuid, perm=perm)]


def _sum_perms(perms: Iterable[AccessAttr]) -> int:
    """The union of permission bits."""
    total = 0
    for perm in perms:
        total |= int(perm)
    return total
