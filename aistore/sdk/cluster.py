"""The cluster as a whole: its map, readiness, buckets, jobs, node performance and logs.

Example:
    >>> from aistore import Client
    >>> ready = Client("http://localhost:8080").cluster().is_ready()
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from pydantic import TypeAdapter

from aistore.sdk.const import (
    ACT_LIST,
    HEADER_NODE_ID,
    HTTP_METHOD_GET,
    QPARAM_ALL_LOGS,
    QPARAM_LOG_SEV,
    QPARAM_PRIMARY_READY_REB,
    QPARAM_PROVIDER,
    QPARAM_WHAT,
    URL_PATH_BUCKETS,
    URL_PATH_CLUSTER,
    URL_PATH_DAEMON,
    URL_PATH_ETL,
    URL_PATH_HEALTH,
    URL_PATH_REVERSE,
    WHAT_ALL_RUNNING_STATUS,
    WHAT_ALL_XACT_STATUS,
    WHAT_LOG,
    WHAT_NODE_STATS_AND_STATUS,
)
from aistore.sdk.const import WHAT_SMAP as WHAT_SMAP
from aistore.sdk.enums import LogSeverity, NodeFilter
from aistore.sdk.etl.etl_const import ETL_STAGE_RUNNING
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import ActionMsg, BucketModel, ETLInfo, JobQuery, JobStatus, Smap

__all__ = ["Cluster"]

logger = logging.getLogger(__name__)

# The ETL API under /v1 (its constant belongs in const.py, which another branch rewrites).


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

    def list_etls(self, stages: list[str] | None = None) -> list[ETLInfo]:
        """The cluster's ETLs in `stages` (default: running ones).

        Our server lists the ETLs it runs as local processes, as a cluster lists its pods'.
        """
        wanted = stages if stages is not None else [ETL_STAGE_RUNNING]
        resp = self._client.request(HTTP_METHOD_GET, URL_PATH_ETL)
        infos = TypeAdapter(list[ETLInfo]).validate_json(resp.content)
        return [info for info in infos if info.stage in wanted]

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

    def get_performance(self) -> dict[str, Any]:
        """Each target's raw status and performance counters (AIS node status JSON), by
        target id."""
        out: dict[str, Any] = {}
        for target_id in self.get_info().tmap:
            resp = self._client.request(
                HTTP_METHOD_GET,
                path=f"{URL_PATH_REVERSE}/{URL_PATH_DAEMON}",
                params={QPARAM_WHAT: WHAT_NODE_STATS_AND_STATUS},
                headers={HEADER_NODE_ID: target_id},
            )
            resp.raise_for_status()
            out[target_id] = resp.json()
        return out

    def get_node_log(self, node_id: str, severity: LogSeverity = LogSeverity.INFO) -> str:
        """The current log of node `node_id` (target or proxy): lines of `severity` and worse."""
        return self._request_log(node_id, LogSeverity(severity).value).text

    def get_node_log_archive(self, node_id: str, severity: LogSeverity = LogSeverity.INFO) -> bytes:
        """The logs of node `node_id` as a .tar.gz archive (held in memory)."""
        return self._request_log(node_id, LogSeverity(severity).value, all_logs=True).content

    def get_cluster_logs(
        self,
        severity: LogSeverity = LogSeverity.INFO,
        role: NodeFilter = NodeFilter.TARGET,
    ) -> dict[str, str]:
        """The current log of every node of `role`, by node id."""
        smap = self.get_info()
        nodes: dict[str, Any] = {}
        if role in (NodeFilter.TARGET, NodeFilter.ALL):
            nodes.update(smap.tmap)
        if role in (NodeFilter.PROXY, NodeFilter.ALL):
            nodes.update(smap.pmap)
        return {node_id: self.get_node_log(node_id, severity=severity) for node_id in nodes}

    def _request_log(
        self, node_id: str, severity: str, all_logs: bool = False
    ) -> requests.Response:
        params = {QPARAM_WHAT: WHAT_LOG, QPARAM_LOG_SEV: severity}
        if all_logs:
            params[QPARAM_ALL_LOGS] = "true"
        return self._client.request(
            HTTP_METHOD_GET,
            path=f"{URL_PATH_REVERSE}/{URL_PATH_DAEMON}",
            params=params,
            headers={HEADER_NODE_ID: node_id},
        )
