"""Job and ETL tools: job lists and status, ETL list, details and logs.

Example:
    >>> register_job_tools(server, lambda: Client("http://localhost:8080"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aistore.mcp.tools import ToolRegistry
from aistore.sdk.client import Client
from aistore.sdk.etl.etl import Etl
from aistore.sdk.types import JobStatus

__all__ = ["register_job_tools"]


def _status(status: JobStatus) -> dict[str, Any]:
    return {
        "id": status.uuid,
        "running": status.end_time == 0,
        "end_time": status.end_time,
        "aborted": status.aborted,
        "error": status.err,
    }


def register_job_tools(mcp: ToolRegistry, get_client: Callable[[], Client]) -> None:
    """Add the job and ETL tools to `mcp` (anything with a FastMCP-style `tool()` decorator)."""

    @mcp.tool()
    def ais_list_jobs(kind: str = "") -> str:
        """Jobs of the cluster (of one kind if given), with their state."""
        snaps = get_client().cluster().list_jobs_status(job_kind=kind)
        jobs = [_status(s) for s in snaps]
        return json.dumps({"kind": kind, "count": len(jobs), "jobs": jobs}, indent=2, default=str)

    @mcp.tool()
    def ais_running_jobs() -> str:
        """Running jobs, as kind[id] names."""
        running = get_client().cluster().list_running_jobs()
        return json.dumps({"count": len(running), "jobs": running}, indent=2)

    @mcp.tool()
    def ais_job_status(job_id: str) -> str:
        """Status of one job."""
        status = get_client().job(job_id).status()
        return json.dumps(status.model_dump(), indent=2, default=str)

    @mcp.tool()
    def ais_list_etls() -> str:
        """The cluster's running ETLs."""
        etls = get_client().cluster().list_etls()
        listed = [e.model_dump() for e in etls]
        return json.dumps({"count": len(listed), "etls": listed}, indent=2)

    @mcp.tool()
    def ais_etl_details(etl_name: str, job_id: str = "") -> str:
        """An ETL's initialization and object errors."""
        client = get_client()
        details = Etl(client._request_client, etl_name).view(job_id=job_id)
        return json.dumps(details.model_dump(), indent=2, default=str)

    @mcp.tool()
    def ais_etl_logs(etl_name: str, target_id: str = "") -> str:
        """Logs of an ETL's containers (on one target if given)."""
        client = get_client()
        entries = Etl(client._request_client, etl_name).logs(target_id=target_id)
        logs = [{"target_id": e.target_id, "logs": e.logs} for e in entries]
        return json.dumps({"etl": etl_name, "logs": logs}, indent=2)
