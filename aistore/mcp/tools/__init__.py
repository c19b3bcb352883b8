"""The MCP server's tools, by area: cluster, buckets, jobs.

Each module's `register_*_tools(mcp, get_client)` adds its tools to a `ToolRegistry` (the
`FastMCP` server); the tools call the cluster through the client `get_client()` returns.

Example:
    >>> from aistore.mcp.tools.jobs import register_job_tools  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = ["ToolRegistry"]

_F = TypeVar("_F", bound=Callable[..., Any])


class ToolRegistry(Protocol):
    """What the tools need of an MCP server: FastMCP's `tool()` decorator.

    Example:
        >>> class Recorder:
        ...     def tool(self):
        ...         return lambda fn: fn
    """

    def tool(self) -> Callable[[_F], _F]: ...
