"""The MCP server's tools against the real server, registered on a plain recorder (the
`mcp` package is optional); and the server module without `mcp` installed."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import Any

import pytest

from aistore import Client
from aistore.mcp.tools.buckets import register_bucket_tools
from aistore.mcp.tools.cluster import register_cluster_tools
from aistore.mcp.tools.jobs import register_job_tools
from aistore.sdk import Bucket
from aistore.sdk.errors import AISError


class Recorder:
    """Collects tools by name, as FastMCP's `tool()` decorator registers them."""

    def __init__(self) -> None:
        self.tools: dict[str, Callable[..., str]] = {}

    def tool(self) -> Callable[[Any], Any]:
        def register(fn: Any) -> Any:
            self.tools[fn.__name__] = fn
            return fn

        return register


@pytest.fixture
def tools(client: Client) -> dict[str, Callable[..., str]]:
    rec = Recorder()
    for register in (register_cluster_tools, register_bucket_tools, register_job_tools):
        register(rec, lambda: client)
    return rec.tools


def test_cluster_tools(tools: dict[str, Callable[..., str]]) -> None:
    health = json.loads(tools["ais_cluster_health"]())
    assert health["status"] == "healthy" and health["targets"]["count"] == 1
    assert health["primary_proxy"]["url"].startswith("http://")
    assert json.loads(tools["ais_cluster_info"]())["uuid"] == health["uuid"]
    assert json.loads(tools["ais_is_ready"]())["ready"] is True
    assert json.loads(tools["ais_cluster_performance"]())


def test_bucket_tools(tools: dict[str, Callable[..., str]], bucket: Bucket) -> None:
    bucket.object("d/a").get_writer().put_content(b"12345")
    bucket.object("d/b").get_writer().put_content(b"x")
    names = [b["name"] for b in json.loads(tools["ais_list_buckets"]())["buckets"]]
    assert bucket.name in names
    listed = json.loads(tools["ais_list_objects"](bucket.name, prefix="d/", limit=1))
    assert listed["count"] == 1 and listed["objects"][0] == {"name": "d/a", "size": 5}
    info = json.loads(tools["ais_object_info"](bucket.name, "d/a"))
    assert info["properties"]["size"] == 5 and info["properties"]["present"] is True
    summary = json.loads(tools["ais_bucket_summary"](bucket.name))
    assert summary["bucket"] == bucket.name


def test_job_tools(tools: dict[str, Callable[..., str]], client: Client, bucket: Bucket) -> None:
    job_id = client.job(job_kind="lru").start()
    client.job(job_id).wait(timeout=30)
    jobs = json.loads(tools["ais_list_jobs"]("lru"))
    assert job_id in [j["id"] for j in jobs["jobs"]]
    assert json.loads(tools["ais_job_status"](job_id))["uuid"] == job_id
    assert "jobs" in json.loads(tools["ais_running_jobs"]())
    for name, args in (("ais_list_etls", ()), ("ais_etl_details", ("md5-etl",))):
        with pytest.raises(AISError):
            tools[name](*args)


@pytest.mark.skipif(importlib.util.find_spec("mcp") is not None, reason="mcp is installed")
def test_server_without_the_mcp_package() -> None:
    from aistore.mcp import server

    assert server.mcp is None
    with pytest.raises(SystemExit, match="pip install mcp"):
        server.main()


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="needs `pip install mcp`")
def test_server_with_the_mcp_package(ais_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from aistore.mcp import server

    monkeypatch.setenv("AIS_ENDPOINT", ais_server.endpoint)
    monkeypatch.setattr(server, "_client", None)

    async def run() -> tuple[list[str], str]:
        listed = await server.mcp.list_tools()
        reply = await server.mcp.call_tool("ais_is_ready", {})
        return sorted(t.name for t in listed), str(reply)

    names, reply = asyncio.run(run())
    assert len(names) == 14 and "ais_cluster_health" in names
    assert '\\"ready\\": true' in reply or '"ready": true' in reply
