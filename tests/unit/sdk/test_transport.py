"""Redirects (plain and the HTTPS two-step), status retries, network retries, body rewinding."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
import requests
from _fakes import FakeServer, Reply, Req, fast_retry_config

from aistore import Client
from aistore.sdk.errors import AISError, ErrObjNotFound

PAYLOAD = b"0123456789" * 10_000


def _redirect_to(target: FakeServer, status: int):  # type: ignore[no-untyped-def]
    def route(req: Req) -> Reply:
        query = "&".join(f"{k}={v}" for k, v in req.query.items())
        location = f"{target.url}{req.path}?{query}&pid=proxy1&utm=1"
        return Reply(status, b"", {"Location": location})

    return route


def test_http_follows_proxy_redirects(server: FakeServer, client: Client) -> None:
    target = FakeServer()
    try:
        target.route = lambda req: Reply(200, PAYLOAD if req.method == "GET" else b"")
        server.route = lambda req: _redirect_to(target, 301 if req.method == "GET" else 307)(req)
        obj = client.bucket("b").object("o")
        obj.get_writer().put_content(PAYLOAD)
        assert obj.get_reader().read_all() == PAYLOAD
        assert b"".join(obj.get_reader()) == PAYLOAD
        # The redirect made the client ask for the cluster map once (DirectReads); this proxy
        # sends that to the target too, which has none: reads stay with the proxy.
        asked = [r for r in server.requests if r.path == "/v1/daemon"]
        assert [r.query.get("what") for r in asked] == ["smap"]
        put, get, get_iter = [r for r in target.requests if r.path != "/v1/daemon"]
        assert (put.method, put.body, put.query["pid"]) == ("PUT", PAYLOAD, "proxy1")
        assert put.query["provider"] == "ais"
        assert get.method == get_iter.method == "GET"
        assert len(server.requests) == 4  # one proxy leg per request, none sent twice
    finally:
        target.close()


def test_http_redirect_rewinds_file_body(server: FakeServer, client: Client) -> None:
    target = FakeServer()
    try:
        target.route = lambda req: Reply(200)
        server.route = _redirect_to(target, 307)
        client.bucket("b").object("o").get_writer().put_content(io.BytesIO(PAYLOAD))  # type: ignore[arg-type]
        assert target.requests[0].body == PAYLOAD
    finally:
        target.close()


def _tls_client(url: str, cert: tuple[str, str]) -> Client:
    return Client(url, ca_cert=cert[0], retry_config=fast_retry_config(), timeout=(2, 5))


def test_https_body_goes_in_two_steps(tls_server: FakeServer, tls_cert: tuple[str, str]) -> None:
    def route(req: Req) -> Reply:
        if "pid" not in req.query:  # the proxy leg: answer before any body
            return _redirect_to(tls_server, 307)(req)
        return Reply(200, b"", {"Ais-Append-Handle": "h9"})

    tls_server.route = route
    client = _tls_client(tls_server.url, tls_cert)
    assert client.bucket("b").object("o").get_writer().append_content(PAYLOAD) == "h9"
    probe, real = tls_server.requests
    assert probe.body == b""
    assert probe.headers["Content-Length"] == str(len(PAYLOAD))
    assert probe.headers["Connection"].lower() == "close"
    assert real.body == PAYLOAD and real.query["append_type"] == "append"
    assert probe.headers["User-Agent"] == real.headers["User-Agent"]


def test_https_without_redirect_returns_reply_as_is(
    tls_server: FakeServer, tls_cert: tuple[str, str]
) -> None:
    tls_server.route = lambda req: Reply(404, b"t[x]: ais://b/o does not exist")
    client = _tls_client(tls_server.url, tls_cert)
    with pytest.raises(ErrObjNotFound):
        client.bucket("b").object("o").get_writer().put_content(PAYLOAD)
    assert len(tls_server.requests) == 1
    tls_server.route = lambda req: Reply(200)
    client.bucket("b").create()  # a JSON body is no `data`: one plain request
    assert tls_server.requests[-1].body.startswith(b'{"action": "create-bck"')


def test_https_never_redirects_to_plain_http(
    tls_server: FakeServer, tls_cert: tuple[str, str]
) -> None:
    """A redirect from HTTPS to HTTP would carry the token and the body unencrypted."""
    plain = FakeServer()
    try:
        plain.route = lambda req: Reply(200, b"leaked")
        tls_server.route = _redirect_to(plain, 307)
        client = Client(
            tls_server.url,
            ca_cert=tls_cert[0],
            token="secret-token",
            retry_config=fast_retry_config(),
            timeout=(2, 5),
        )
        obj = client.bucket("b").object("o")
        for call in (
            lambda: obj.get_writer().put_content(PAYLOAD),  # the two-step body redirect
            lambda: obj.get_reader().read_all(),  # a redirect `requests` follows
        ):
            with pytest.raises(requests.exceptions.InvalidURL, match="unencrypted"):
                call()
        assert plain.requests == []
    finally:
        plain.close()


def test_status_retry_for_idempotent_methods_only(server: FakeServer) -> None:
    calls = {"GET": 0, "POST": 0}

    def route(req: Req) -> Reply:
        calls[req.method] += 1
        if req.method == "GET" and calls["GET"] < 3:
            return Reply(503, b"busy")
        return Reply(503 if req.method == "POST" else 200, b"ok")

    server.route = route
    client = Client(server.url, retry_config=fast_retry_config(http_total=3))
    assert client.bucket("b").object("o").get_reader().read_all() == b"ok"
    assert calls["GET"] == 3
    with pytest.raises(AISError) as info:
        client.bucket("b").create()
    assert info.value.status_code == 503 and calls["POST"] == 1


def test_network_retry_after_dropped_connection(server: FakeServer, client: Client) -> None:
    attempts: list[Req] = []

    def route(req: Req) -> Reply:
        attempts.append(req)
        return Reply(drop=True) if len(attempts) == 1 else Reply(200, b"")

    server.route = route
    body = io.BytesIO(PAYLOAD)
    body.seek(10)
    client.bucket("b").object("o").get_writer().put_content(body)  # type: ignore[arg-type]
    assert len(attempts) == 2
    assert attempts[1].body == PAYLOAD[10:]


def test_network_retry_gives_up(
    server: FakeServer, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    server.route = lambda req: Reply(drop=True)
    with caplog.at_level(logging.WARNING), pytest.raises(requests.ConnectionError):
        client.bucket("b").head()
    assert len(server.requests) == 3
    # Two retries and the final error, on the package's logger (never the root logger).
    retry_logs = [r for r in caplog.records if "etr" in r.getMessage() or r.exc_info]
    assert len(retry_logs) == 3
    assert {r.name for r in retry_logs} == {"aistore.sdk.retry_config"}


def test_generator_body_cannot_be_replayed(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(drop=True)

    def chunks() -> Iterator[bytes]:
        yield b"abc"

    with pytest.raises(requests.exceptions.UnrewindableBodyError):
        client.bucket("b").object("o").get_writer().put_content(chunks())  # type: ignore[arg-type]


def test_http_error_status_is_not_network_retried(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(404, b"t[x]: ais://b/o does not exist")
    with pytest.raises(ErrObjNotFound):
        client.bucket("b").object("o").get_reader().read_all()
    assert len(server.requests) == 1
