"""The MCP server as an agent runs it: `python -m aistore.mcp.server` started over stdio by the
`mcp` package's own client, its tools called against the real server. One MCP server process
for the module; the `mcp` client is async, so it lives on an event loop in a thread of its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from aistore import Client
from aistore.sdk import Bucket
from aistore.server import LocalServer

mcp = pytest.importorskip("mcp", reason="needs `pip install mcp` (the dev extra has it)")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

Call = Callable[[ClientSession], Awaitable[Any]]


class StdioMcp:
    """One `python -m aistore.mcp.server` process and an initialized client session to it.

    The session's context managers must be entered and left by one task, so a single task
    holds them and runs the calls handed to it through a queue."""

    def __init__(self, env: dict[str, str]) -> None:
        self._params = StdioServerParameters(
            command=sys.executable, args=["-m", "aistore.mcp.server"], env=env
        )
        self._loop = asyncio.new_event_loop()
        self._queue: asyncio.Queue[tuple[Call, concurrent.futures.Future[Any]] | None]
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),))
        self._thread.start()
        self._ready.result(timeout=60)

    async def _serve(self) -> None:
        self._queue = asyncio.Queue()
        try:
            async with (
                stdio_client(self._params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._ready.set_result(None)
                while (item := await self._queue.get()) is not None:
                    call, done = item
                    try:
                        done.set_result(await call(session))
                    except Exception as e:  # handed to the caller's thread
                        done.set_exception(e)
        except Exception as e:
            if not self._ready.done():
                self._ready.set_exception(e)
            raise

    def run(self, call: Call) -> Any:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (call, done))
        return done.result(timeout=60)

    def tool(self, name: str, **args: Any) -> Any:
        """The tool's JSON reply, decoded; AssertionError with its text when it failed."""
        result = self.run(lambda s: s.call_tool(name, args))
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert not result.isError, f"{name}: {text}"
        return json.loads(text)

    def tool_error(self, name: str, **args: Any) -> str:
        """The text of a tool call that failed."""
        result = self.run(lambda s: s.call_tool(name, args))
        assert result.isError, f"{name} did not fail"
        return "".join(getattr(c, "text", "") for c in result.content)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        self._thread.join(timeout=30)
        self._loop.close()


@pytest.fixture(scope="module")
def agent(ais_server: LocalServer) -> Iterator[StdioMcp]:
    env = {**os.environ, "AIS_ENDPOINT": ais_server.endpoint}
    session = StdioMcp(env)
    yield session
    session.close()


def test_the_server_lists_its_read_only_tools(agent: StdioMcp) -> None:
    listed = agent.run(lambda s: s.list_tools())
    names = sorted(t.name for t in listed.tools)
    assert names == sorted(
        [
            "ais_bucket_summary",
            "ais_cluster_health",
            "ais_cluster_info",
            "ais_cluster_performance",
            "ais_etl_details",
            "ais_is_ready",
            "ais_job_status",
            "ais_list_buckets",
            "ais_list_etls",
            "ais_list_jobs",
            "ais_list_objects",
            "ais_object_info",
            "ais_running_jobs",
            "ais_etl_logs",
        ]
    ), names
    schema = next(t for t in listed.tools if t.name == "ais_list_objects").inputSchema
    assert "bucket_name" in schema["properties"]


def test_cluster_tools(agent: StdioMcp) -> None:
    health = agent.tool("ais_cluster_health")
    assert health["status"] == "healthy" and health["targets"]["count"] == 1
    assert health["primary_proxy"]["url"].startswith("http://")
    assert agent.tool("ais_cluster_info")["uuid"] == health["uuid"]
    assert agent.tool("ais_is_ready")["ready"] is True
    assert agent.tool("ais_cluster_performance")


def test_bucket_tools(agent: StdioMcp, bucket: Bucket) -> None:
    bucket.object("d/a").get_writer().put_content(b"12345")
    bucket.object("d/b").get_writer().put_content(b"x")
    names = [b["name"] for b in agent.tool("ais_list_buckets")["buckets"]]
    assert bucket.name in names
    listed = agent.tool("ais_list_objects", bucket_name=bucket.name, prefix="d/", limit=1)
    assert listed["count"] == 1 and listed["objects"][0] == {"name": "d/a", "size": 5}
    info = agent.tool("ais_object_info", bucket_name=bucket.name, object_name="d/a")
    assert info["properties"]["size"] == 5 and info["properties"]["present"] is True
    assert agent.tool("ais_bucket_summary", bucket_name=bucket.name)["bucket"] == bucket.name


def test_job_tools(agent: StdioMcp, client: Client) -> None:
    job_id = client.job(job_kind="lru").start()
    client.job(job_id).wait(timeout=30)
    jobs = agent.tool("ais_list_jobs", kind="lru")
    assert job_id in [j["id"] for j in jobs["jobs"]]
    assert agent.tool("ais_job_status", job_id=job_id)["uuid"] == job_id
    assert "jobs" in agent.tool("ais_running_jobs")


def test_etl_tools(agent: StdioMcp, client: Client) -> None:
    """The ETL tools over a running ETL (a transformer as a local process of the server), and
    the server's 404 for one that does not exist."""
    from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer

    etl = client.etl("mcp-upper")

    @etl.init_class()
    class Upper(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return data.upper()

    try:
        listed = agent.tool("ais_list_etls")
        assert "mcp-upper" in [e["id"] for e in listed["etls"]]
        details = agent.tool("ais_etl_details", etl_name="mcp-upper")
        assert details["init_msg"]["name"] == "mcp-upper"
        logs = agent.tool("ais_etl_logs", etl_name="mcp-upper")
        assert "aistore.etl_runtime" in logs["logs"][0]["logs"]
    finally:
        etl.delete()
    assert "404" in agent.tool_error("ais_etl_details", etl_name="md5-etl")
    assert "404" in agent.tool_error("ais_etl_logs", etl_name="md5-etl")
