"""The cluster as a whole: its map, readiness and buckets.

Example:
    >>> from aistore import Client
    >>> ready = Client("http://localhost:8080").cluster().is_ready()
"""

from __future__ import annotations

import logging

from aistore.sdk.const import (
    ACT_LIST,
    HTTP_METHOD_GET,
    QPARAM_PRIMARY_READY_REB,
    QPARAM_PROVIDER,
    QPARAM_WHAT,
    URL_PATH_BUCKETS,
    URL_PATH_CLUSTER,
    URL_PATH_HEALTH,
    WHAT_ALL_RUNNING_STATUS,
    WHAT_ALL_XACT_STATUS,
)
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import ActionMsg, BucketModel, JobQuery, JobStatus, Smap

__all__ = ["Cluster"]

logger = logging.getLogger(__name__)


class Cluster:
    """Cluster-wide calls of a client; made by `Client.cluster()`.

    Example:
        >>> cluster = Client("http://localhost:8080").cluster()  # doctest: +SKIP
        >>> [b.name for b in cluster.list_buckets()]  # doctest: +SKIP
    """

    def __init__(self, client: RequestClient) -> None:
        self._client = client

    @property
    def client(self) -> RequestClient:
        """The request client this cluster uses."""
        return self._client

    def get_info(self) -> Smap:
        """The cluster map (`GET /v1/daemon?what=smap`), fetched anew."""
        return self._client.get_smap(force_update=True)

    def get_primary_url(self) -> str:
        """Direct URL of the primary proxy."""
        public_net = self.get_info().proxy_si.public_net
        return public_net.direct_url if public_net is not None else ""

    def get_uuid(self) -> str:
        """The cluster's UUID."""
        return self.get_info().uuid

    def is_ready(self) -> bool:
        """Whether the primary proxy reports the cluster ready; any failure counts as not."""
        try:
            resp = self._client.request(
                HTTP_METHOD_GET,
                path=URL_PATH_HEALTH,
                endpoint=self.get_primary_url(),
                params={QPARAM_PRIMARY_READY_REB: "true"},
            )
            return resp.ok
        except Exception as err:  # noqa: BLE001 - readiness is a yes/no question
            logger.debug("cluster not ready: %s", err)
            return False

    def list_buckets(self, provider: Provider | str = Provider.AIS) -> list[BucketModel]:
        """Buckets of `provider`; an empty string lists all providers."""
        value = "" if provider == "" else Provider.parse(provider).value
        return self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=URL_PATH_BUCKETS,
            res_model=list[BucketModel],
            json=ActionMsg(action=ACT_LIST).model_dump(),
            params={QPARAM_PROVIDER: value},
        )

    def list_jobs_status(self, job_kind: str = "", target_id: str = "") -> list[JobStatus]:
        """Status of the cluster's jobs, optionally of one kind or on one target."""
        result = self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=URL_PATH_CLUSTER,
            res_model=list[JobStatus] | None,  # type: ignore[arg-type]
            json=JobQuery(kind=job_kind, target=target_id).as_dict(),
            params={QPARAM_WHAT: WHAT_ALL_XACT_STATUS},
        )
        return result or []

    def list_running_jobs(self, job_kind: str = "", target_id: str = "") -> list[str]:
        """Running jobs as `kind[id]` strings."""
        return self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=URL_PATH_CLUSTER,
            res_model=list[str],
            json=JobQuery(kind=job_kind, target=target_id, active=True).as_dict(),
            params={QPARAM_WHAT: WHAT_ALL_RUNNING_STATUS},
        )
