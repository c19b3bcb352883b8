"""An MCP server that lets AI agents inspect an AIS cluster (read-only tools).

Run it with `aistore-mcp` or `python -m aistore.mcp.server` (needs the `mcp` extra);
`AIS_ENDPOINT` names the cluster (default http://localhost:8080).

Example:
    >>> from aistore.mcp.tools.cluster import register_cluster_tools  # doctest: +SKIP
"""

__all__: list[str] = []
