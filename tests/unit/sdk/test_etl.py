"""ETL pieces that run without a cluster: config, names, types, and the ETL servers (which
run inside an ETL container) against loopback HTTP peers."""

from __future__ import annotations

import base64
import http.client
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from _fakes import FakeServer, Reply, Req

from aistore.sdk.errors import InvalidPipelineError
from aistore.sdk.etl import ETLConfig
from aistore.sdk.etl.etl import Etl
from aistore.sdk.etl.webserver.base_etl_server import CountingIterator, ETLServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer
from aistore.sdk.etl.webserver.utils import (
    compose_etl_direct_put_url,
    parse_etl_pipeline,
    serialize_class,
)
from aistore.sdk.types import ETLInitMsg


def test_config_query_params_with_a_pipeline() -> None:
    first = Etl(None, "resize-etl") >> Etl(None, "to-jpeg") >> Etl(None, "strip-exif")  # type: ignore[arg-type]
    params: dict[str, str] = {}
    ETLConfig(name=first, args={"w": 256}).update_qparams(params)
    assert params == {
        "etl_name": "resize-etl",
        "etl_pipeline": "to-jpeg,strip-exif",
        "etl_args": '{"w":256}',
    }
    untouched: dict[str, str] = {}
    ETLConfig().update_qparams(untouched)
    assert untouched == {}


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("abc", "too short"),
        ("a" * 33, "too long"),
        ("Upper-case", "invalid"),
        ("-dash-x", "invalid"),
    ],
)
def test_bad_names(name: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Etl.validate_etl_name(name)


def test_init_msg_decodes_code() -> None:
    code = base64.b64encode(b"def transform(x): return x").decode()
    assert (
        ETLInitMsg(name="n", communication="hpush://", code=code).code
        == b"def transform(x): return x"
    )


def test_pipeline_header_and_direct_put_url() -> None:
    assert parse_etl_pipeline("") == ("", "")
    assert parse_etl_pipeline(" http://a ") == ("http://a", "")
    with pytest.raises(InvalidPipelineError):
        parse_etl_pipeline("http://a,,http://b")
    # Next stage: the object's path is appended, etl_args replaced.
    assert (
        compose_etl_direct_put_url("http://n:1?etl_args=old&x=1", "http://t:2", "b/o", "new")
        == "http://n:1/b/o?x=1&etl_args=new"
    )
    # Offline transform: the destination's path follows the host target's.
    assert (
        compose_etl_direct_put_url("http://d:3/ais/@%23/b/o", "http://t:2/v1/etl/_object/e/s", "x")
        == "http://d:3/v1/etl/_object/e/s/ais/@%23/b/o"
    )


def test_counting_iterator() -> None:
    it = CountingIterator(iter([b"a", b"bc"]))
    assert list(it) == [b"a", b"bc"] and it.bytes_sent == 3


class Upper(HTTPMultiThreadedServer):
    def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
        assert isinstance(data, bytes)
        return data.upper() + etl_args.encode()


class Reverse(HTTPMultiThreadedServer):
    def transform_stream(self, reader: object, path: str, etl_args: str) -> Iterator[bytes]:
        yield reader.read()[::-1]  # type: ignore[attr-defined]


def _serve(
    cls: type[HTTPMultiThreadedServer], target: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> HTTPMultiThreadedServer:
    monkeypatch.setenv("AIS_TARGET_URL", target.url)
    srv = cls(host="127.0.0.1", port=0)
    srv.bind()
    threading.Thread(target=srv.start, daemon=True).start()
    return srv


def _call(
    srv: HTTPMultiThreadedServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    host, port = srv.bind().server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=5)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    out = resp.status, resp.read(), dict(resp.getheaders())
    conn.close()
    return out


def test_http_server_push_pull_and_health(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.route = lambda req: Reply(200, b"pulled " + req.path.encode())
    srv = _serve(Upper, server, monkeypatch)
    try:
        assert _call(srv, "GET", "/health")[:2] == (200, b"Running")
        assert _call(srv, "PUT", "/ais/@%23/b/o?etl_args=!", b"pushed")[:2] == (200, b"PUSHED!")
        status, body, _ = _call(srv, "GET", "/ais/@%23/b/o")
        assert (status, body) == (200, b"PULLED /AIS/@%23/B/O")
        server.route = lambda req: Reply(404, b"missing")
        assert _call(srv, "GET", "/b/none")[:2] == (404, b"missing")
    finally:
        srv.stop()


def test_servers_read_the_fqn_and_pull_one_segment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without direct file access a request naming the object's file (`etl_fqn`, an empty
    PUT: hpush's default) transforms the file's bytes; a missing file is a 404. An hpull
    uname goes to the target as the one escaped segment it came as (the frameworks' servers:
    test_web_framework_servers)."""
    pulled: list[str] = []

    def target(req: Req) -> Reply:
        pulled.append(req.path)
        return Reply(200, b"pulled")

    server.route = target
    fqn = tmp_path / "mp" / "b" / "o 1"
    fqn.parent.mkdir(parents=True)
    fqn.write_bytes(b"on disk")
    by_fqn = f"/b/o?etl_fqn={quote(quote(str(fqn)))}"
    srv = _serve(Upper, server, monkeypatch)
    try:
        assert _call(srv, "PUT", by_fqn, b"")[:2] == (200, b"ON DISK")
        status, body, _ = _call(srv, "PUT", f"/b/o?etl_fqn={quote(str(tmp_path / 'none'))}", b"")
        assert status == 404 and b"No such file" in body
        assert _call(srv, "GET", "/ais%2F@%23%2Fb%2Fo")[:2] == (200, b"PULLED")
    finally:
        srv.stop()
    assert pulled == ["/ais%2F@%23%2Fb%2Fo"]


def test_http_server_streaming_transform_and_direct_put(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[Req] = []

    def next_stage(req: Req) -> Reply:
        received.append(req)
        return Reply(200, b"")

    next_srv = FakeServer()
    next_srv.route = next_stage
    srv = _serve(Reverse, server, monkeypatch)
    try:
        status, body, headers = _call(
            srv, "PUT", "/b/o", b"abc", {"Ais-Node-Url": f"{next_srv.url},http://later:9"}
        )
        assert (status, body) == (204, b"")
        assert headers["Ais-Direct-Put-Length"] == "3"
        [put] = received
        assert put.method == "PUT" and put.path == "/b/o" and put.body == b"cba"
        assert put.headers["Ais-Node-Url"] == "http://later:9"
    finally:
        srv.stop()
        next_srv.close()


def test_server_needs_a_transform_and_a_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIS_TARGET_URL", raising=False)
    with pytest.raises(OSError, match="AIS_TARGET_URL"):
        Upper()
    monkeypatch.setenv("AIS_TARGET_URL", "http://t")
    with pytest.raises(TypeError, match="transform"):
        HTTPMultiThreadedServer()


@pytest.mark.parametrize("framework", ["flask", "fastapi"])
def test_web_framework_servers(
    framework: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Flask and FastAPI servers answer alike: health, push, pull, `etl_args`, an FQN, and a
    failing transform as a 500 with its message."""
    pytest.importorskip(framework)
    base: type[ETLServer]
    if framework == "flask":
        from aistore.sdk.etl.webserver.flask_server import FlaskServer as base
    else:
        pytest.importorskip("httpx")  # starlette's test client
        from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer as base

    class Echo(base):  # type: ignore[valid-type,misc]
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            if etl_args == "fail":
                raise ValueError("no luck")
            return path.encode() + b":" + data + etl_args.encode()

    monkeypatch.setenv("AIS_TARGET_URL", server.url)
    server.route = lambda req: Reply(200, b"pulled")
    app = Echo().app
    if framework == "flask":
        flask_client = app.test_client()

        def call(method: str, url: str, body: bytes = b"") -> tuple[int, bytes]:
            resp = flask_client.open(url, method=method, data=body)
            return resp.status_code, resp.data
    else:
        from starlette.testclient import TestClient

        fastapi_client = TestClient(app)

        def call(method: str, url: str, body: bytes = b"") -> tuple[int, bytes]:
            resp = fastapi_client.request(method, url, content=body)
            return resp.status_code, resp.content

    assert call("GET", "/health") == (200, b"Running")
    assert call("PUT", "/b/o", b"x") == (200, b"b/o:x")
    assert call("PUT", "/b/o?etl_args=!", b"x") == (200, b"b/o:x!")
    assert call("GET", "/b/o") == (200, b"b/o:pulled")
    assert call("PUT", "/b/o?etl_args=fail", b"x") == (500, b"no luck")
    # hpull: the uname, decoded for the transform, goes to the target as one segment again
    pulled: list[str] = []
    server.route = lambda req: pulled.append(req.path) or Reply(200, b"pulled")
    assert call("GET", "/ais%2F@%23%2Fb%2Fo") == (200, b"ais/@#/b/o:pulled")
    assert pulled == ["/ais%2F@%23%2Fb%2Fo"]
    # an FQN without direct file access: the file's bytes, not the (empty) body
    fqn = tmp_path / "o 1"
    fqn.write_bytes(b"on disk")
    assert call("PUT", f"/b/o?etl_fqn={quote(quote(str(fqn)))}") == (200, b"b/o:on disk")
    assert call("PUT", f"/b/o?etl_fqn={quote(str(tmp_path / 'none'))}")[0] == 404


def test_fastapi_server_without_fastapi(monkeypatch: pytest.MonkeyPatch) -> None:
    from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer

    monkeypatch.setitem(sys.modules, "fastapi", None)  # installed or not: `import` fails

    class Echo(FastAPIServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            return b""

    monkeypatch.setenv("AIS_TARGET_URL", "http://t")
    with pytest.raises(ImportError, match="pip install fastapi"):
        Echo()


def test_serialize_class() -> None:
    pytest.importorskip("cloudpickle")
    import pickle

    payload = serialize_class(Upper)
    assert pickle.loads(base64.b64decode(payload)).__name__ == "Upper"
    with pytest.raises(TypeError):
        serialize_class(dict)
    assert issubclass(Upper, ETLServer)
