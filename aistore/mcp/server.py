"""The AIStore MCP server: `python -m aistore.mcp.server` (or `aistore-mcp`; needs the `mcp` extra).

`AIS_ENDPOINT` names the cluster (default http://localhost:8080). All tools are read-only.
Works with the MCP SDK 1.x (`FastMCP`) and 2.x (`MCPServer`).
Without the `mcp` package this module still imports (`mcp` is then None) and `main()` exits
with a message saying what to install.

Example:
    >>> from aistore.mcp.server import main  # doctest: +SKIP
    >>> main()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from aistore.mcp.tools.buckets import register_bucket_tools
from aistore.mcp.tools.cluster import register_cluster_tools
from aistore.mcp.tools.jobs import register_job_tools
from aistore.sdk.client import Client

__all__ = ["main", "mcp"]

_INSTRUCTIONS = (
    "AIStore MCP Server for cluster management and debugging. Use these tools to check "
    "cluster health, list buckets, inspect jobs/ETLs, and debug issues. All tools are read-only."
)
_client: Client | None = None


def _get_client() -> Client:
    """The client of `AIS_ENDPOINT`, created on first use."""
    global _client  # noqa: PLW0603 - one client per server process
    if _client is None:
        _client = Client(os.environ.get("AIS_ENDPOINT", "http://localhost:8080"))
    return _client


def _server_class() -> Any:
    """The MCP SDK's server class: `FastMCP` (mcp 1.x) or `MCPServer` (its 2.x name)."""
    try:
        from mcp.server.fastmcp import FastMCP

        return FastMCP
    except ImportError:
        pass
    try:
        from mcp.server.mcpserver import MCPServer

        return MCPServer
    except ImportError:
        return None


def _make_server() -> Any:
    server_class = _server_class()
    if server_class is None:
        return None
    server = server_class(name="aistore", instructions=_INSTRUCTIONS)
    register_cluster_tools(server, _get_client)
    register_bucket_tools(server, _get_client)
    register_job_tools(server, _get_client)
    return server


# The MCP server with every tool registered; None when the `mcp` package is missing.
mcp: Any = _make_server()


def main() -> None:
    """Serve over stdio until the client disconnects.

    Raises:
        SystemExit: the `mcp` package is not installed.
    """
    if mcp is None:
        raise SystemExit(
            'the AIStore MCP server needs the MCP SDK: pip install "aistore-embedded[mcp]"'
        )
    mcp.run()


if __name__ == "__main__":
    main()
