"""The client's error paths against the real server, through both transports (the native one
serves plain GETs and HEADs, `requests` the rest): a status error raised once, a status the
retry policy resends (idempotent requests only), a network error with and without retry.

The server's connection limit (`--max-connections`) gives a real 503: with the limit's
connections held, every new connection is answered 503 + Retry-After and closed.
"""

from __future__ import annotations

import gc
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_none
from urllib3.util.retry import Retry

from aistore.sdk.errors import AISError, ErrBckNotFound, ErrObjNotFound
from aistore.sdk.retry_config import NETWORK_RETRY_EXCEPTIONS, RetryConfig
from aistore.server import LocalServer

LIMIT = 4
BUCKET = "errors"
DATA = b"x" * 10_240


class CountingRetry(Retry):
    """A status policy that records each resend it allows (urllib3 builds a new policy per
    attempt, so the record is kept on the class)."""

    resends: list[str] = []

    def increment(self, method: str | None = None, *args: Any, **kwargs: Any) -> Retry:
        CountingRetry.resends.append(str(method))
        return super().increment(method, *args, **kwargs)


def _config(statuses: int = 0, attempts: int = 1, seen: list[int] | None = None) -> RetryConfig:
    def count(_state: Any) -> None:
        if seen is not None:
            seen.append(1)

    return RetryConfig(
        http_retry=CountingRetry(
            total=statuses,
            backoff_factor=0,
            status_forcelist=[503],
            respect_retry_after_header=False,
            connect=0,
            read=0,
        ),
        network_retry=Retrying(
            stop=stop_after_attempt(attempts),
            wait=wait_none(),
            retry=retry_if_exception_type(NETWORK_RETRY_EXCEPTIONS),
            before=count,
            reraise=True,
        ),
    )


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    root = tmp_path_factory.mktemp("errors")
    server = LocalServer(
        mountpaths=[root / "mp0"], threads=2, args=["--max-connections", str(LIMIT)]
    ).start()
    server.client().bucket(BUCKET).create().object("o").get_writer().put_content(DATA)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_count() -> None:
    CountingRetry.resends.clear()


def test_status_errors_raise_once_through_both_transports(srv: LocalServer) -> None:
    client = srv.client(retry_config=_config(statuses=3))
    bucket = client.bucket(BUCKET)
    with pytest.raises(ErrObjNotFound) as native_get:  # the native transport
        bucket.object("missing").get_reader().read_all()
    with pytest.raises(AISError) as native_head:
        bucket.object("missing").head()
    with pytest.raises(ErrBckNotFound) as via_requests:  # a POST: `requests`
        client.bucket("no-such-bucket").list_all_objects()
    assert [e.value.status_code for e in (native_get, native_head, via_requests)] == [404] * 3
    assert "missing" in native_head.value.message  # from the header of a body-less HEAD
    assert CountingRetry.resends == []  # 404 is no status to retry


def _held(srv: LocalServer) -> list[socket.socket]:
    """Exactly LIMIT connections the server has taken (answered a request on): new ones get 503
    until these close. A 503 on the way may come from a slot of an earlier, already closed
    connection that the server still counts: retried until the deadline."""
    gc.collect()  # clients of earlier tests drop their pooled connections
    u = urlsplit(srv.endpoint)
    last = b""

    def taken() -> socket.socket | None:
        nonlocal last
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        last = s.recv(4096)
        if last.startswith(b"HTTP/1.1 200"):
            return s
        s.close()
        return None

    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 5
        while len(held) < LIMIT:
            s = taken()
            if s is not None:
                held.append(s)
                continue
            assert time.monotonic() < deadline, (len(held), last[:200])
            time.sleep(0.05)
        extra = taken()
        if extra is not None:
            extra.close()
            raise AssertionError(f"the server took more than {LIMIT} connections")
    except BaseException:
        for s in held:
            s.close()
        raise
    return held


@pytest.fixture
def busy(srv: LocalServer) -> Iterator[LocalServer]:
    held = _held(srv)
    yield srv
    for s in held:
        s.close()


def test_status_retry_resends_idempotent_requests_only(busy: LocalServer) -> None:
    client = busy.client(retry_config=_config(statuses=2))
    bucket = client.bucket(BUCKET)
    with pytest.raises(requests.exceptions.RetryError):  # GET, native: 1 + 2 sends
        bucket.object("o").get_reader().read_all()
    assert CountingRetry.resends == ["GET"] * 3  # the third increment finds it spent
    CountingRetry.resends.clear()
    with pytest.raises(requests.exceptions.RetryError):  # HEAD via `requests`
        bucket.head()
    assert CountingRetry.resends == ["HEAD"] * 3
    CountingRetry.resends.clear()
    with pytest.raises(AISError) as post:  # POST: not idempotent, sent once
        client.bucket("another").create()
    assert post.value.status_code == 503 and CountingRetry.resends == []


@pytest.mark.parametrize("attempts", [1, 3], ids=["without-retry", "with-retry"])
def test_network_error_retried_by_the_network_policy(attempts: int) -> None:
    """A server that went away: the pooled connections are dead and new ones refused. Both
    transports raise `requests.ConnectionError` after exactly the policy's attempts."""
    with LocalServer(num_mountpaths=1, threads=1) as gone:
        seen: list[int] = []
        client = gone.client(retry_config=_config(attempts=attempts, seen=seen))
        obj = client.bucket("b").create().object("o")
        obj.get_writer().put_content(DATA)
        assert obj.get_reader().read_all() == DATA  # a pooled native connection
    seen.clear()
    with pytest.raises(requests.ConnectionError):
        obj.get_reader().read_all()  # native
    assert len(seen) == attempts
    seen.clear()
    with pytest.raises(requests.ConnectionError):
        client.bucket("b").create()  # `requests`
    assert len(seen) == attempts
