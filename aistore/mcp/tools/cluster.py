"""Cluster tools: health, map, performance, readiness.

Example:
    >>> register_cluster_tools(server, lambda: Client("http://localhost:8080"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from aistore.mcp.tools import ToolRegistry
from aistore.sdk.client import Client
from aistore.sdk.types import Snode

__all__ = ["register_cluster_tools"]


def _node(node: Snode | None) -> dict[str, str]:
    url = node.public_net.direct_url if node is not None and node.public_net else ""
    return {"id": node.daemon_id if node is not None else "", "url": url}


def register_cluster_tools(mcp: ToolRegistry, get_client: Callable[[], Client]) -> None:
    """Add the cluster tools to `mcp` (anything with a FastMCP-style `tool()` decorator)."""

    @mcp.tool()
    def ais_cluster_health() -> str:
        """Readiness, node counts and addresses, primary proxy, cluster UUID and map version."""
        cluster = get_client().cluster()
        ready = cluster.is_ready()
        smap = cluster.get_info()
        targets, proxies = list(smap.tmap.values()), list(smap.pmap.values())
        return json.dumps(
            {
                "status": "healthy" if ready else "unhealthy",
                "ready": ready,
                "uuid": smap.uuid,
                "version": smap.version,
                "targets": {"count": len(targets), "nodes": [_node(n) for n in targets]},
                "proxies": {"count": len(proxies), "nodes": [_node(n) for n in proxies]},
                "primary_proxy": _node(smap.proxy_si),
            },
            indent=2,
        )

    @mcp.tool()
    def ais_cluster_info() -> str:
        """The full cluster map (nodes, addresses, flags)."""
        return json.dumps(get_client().cluster().get_info().model_dump(), indent=2, default=str)

    @mcp.tool()
    def ais_cluster_performance() -> str:
        """Throughput, latency and I/O counters of the targets."""
        return json.dumps(get_client().cluster().get_performance(), indent=2, default=str)

    @mcp.tool()
    def ais_is_ready() -> str:
        """Whether the cluster is reachable and ready."""
        endpoint = os.environ.get("AIS_ENDPOINT", "http://localhost:8080")
        try:
            return json.dumps({"ready": get_client().cluster().is_ready(), "endpoint": endpoint})
        except Exception as err:  # noqa: BLE001 - the tool reports any failure as not ready
            return json.dumps({"ready": False, "endpoint": endpoint, "error": str(err)})
