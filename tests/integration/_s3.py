"""A real S3 server for tests: moto in server mode on loopback, behind a small fault proxy.

The proxy forwards every request to moto unchanged and counts them, and can be told to fail the
next requests (a status, a connection cut mid-body, a delay), so tests can show what the server
does when its backend misbehaves, and how many requests it sent.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aistore.server import LocalServer, _die_with_parent

# The credentials moto accepts: as the server reads them (its environment) and as boto3 takes them.
SERVER_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}
BOTO3_KEYS = {
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "region_name": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LoopbackService:
    """A third-party server (an emulator) as a child process on a free loopback port: started,
    waited for until `health_path` answers, killed at `stop()` (and with the test process)."""

    name = "service"
    health_path = "/"

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> Any:
        self.proc = subprocess.Popen(
            self.command(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Gone with the test process even when it is killed, as LocalServer's server is.
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                conn.request("GET", self.health_path)
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited at startup") from None
                time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


class MotoServer(LoopbackService):
    """``python -m moto.server`` on a free loopback port."""

    name = "moto server"
    health_path = "/moto-api/"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]


@dataclass
class Fault:
    status: int = 0  # reply with this status (and an S3 error document)
    cut_after: int = -1  # forward the reply but close the connection after this many body bytes
    delay: float = 0.0  # seconds to wait before forwarding
    trickle: float = 0.0  # send the body in 64 KiB pieces, this many seconds apart
    match: str = ""  # only requests whose "METHOD path" contains this
    flip: int = -1  # forward the reply with the body byte at this offset inverted (damaged data)


@dataclass
class FaultProxy:
    """Forwards HTTP to `upstream_port`; counts requests; injects queued faults."""

    upstream_port: int
    port: int = field(default_factory=free_port)
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    faults: list[Fault] = field(default_factory=list)
    down: bool = False  # refuse every request by closing the connection
    required_auth: str = ""  # when set, a request without this Authorization header gets 401

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = self._read_chunked()
                what = f"{self.command} {self.path.split('?')[0]}"
                fault = proxy._take_fault(what)
                with proxy._lock:
                    proxy.counts[what] += 1
                if proxy.down:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if proxy.required_auth and self.headers.get("Authorization") != proxy.required_auth:
                    with proxy._lock:
                        proxy.counts["unauthorized"] += 1
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if fault and fault.delay:
                    time.sleep(fault.delay)
                if fault and fault.status:
                    doc = (
                        f"<?xml version='1.0'?><Error><Code>Injected{fault.status}</Code>"
                        f"<Message>injected by the test</Message></Error>"
                    ).encode()
                    self.send_response(fault.status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header(
                        "Content-Length", str(len(doc) if self.command != "HEAD" else 0)
                    )
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(doc)
                    return
                up = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=60)
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() != "transfer-encoding"
                }
                headers["Content-Length"] = str(len(body))
                up.request(self.command, self.path, body=body, headers=headers)
                resp = up.getresponse()
                data = resp.read()
                if fault and 0 <= fault.flip < len(data):
                    data = (
                        data[: fault.flip]
                        + bytes([data[fault.flip] ^ 0xFF])
                        + data[fault.flip + 1 :]
                    )
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "server", "date"):
                        self.send_header(k, v)
                if resp.getheader("Content-Length") is None and self.command != "HEAD":
                    # A chunked reply (Azurite's listings) goes on whole: its length is known now.
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault and fault.cut_after >= 0:
                    self.wfile.write(data[: fault.cut_after])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if self.command != "HEAD":
                    step = 64 * 1024 if fault and fault.trickle else max(len(data), 1)
                    for i in range(0, len(data), step):
                        self.wfile.write(data[i : i + step])
                        self.wfile.flush()
                        if fault and fault.trickle:
                            time.sleep(fault.trickle)
                up.close()

            def _read_chunked(self) -> bytes:
                out = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _serve

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _take_fault(self, what: str) -> Fault | None:
        with self._lock:
            for i, f in enumerate(self.faults):
                if f.match in what:
                    return self.faults.pop(i)
        return None

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def count(self, method: str, path: str) -> int:
        with self._lock:
            return self.counts[f"{method} {path}"]

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self.faults.clear()
        self.down = False

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def boto3_s3(endpoint: str) -> Any:
    """A boto3 S3 client of the moto server at `endpoint` (the tests' own view of "S3")."""
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, **BOTO3_KEYS)


@dataclass
class RemoteS3:
    """An aistore-server whose s3:// buckets live in moto, reached through the fault proxy."""

    moto: MotoServer
    proxy: FaultProxy
    server: LocalServer
    s3: Any  # boto3, straight to moto (not counted by the proxy)


@contextlib.contextmanager
def remote_s3(
    num_mountpaths: int = 2, mountpaths: list[Path] | None = None, args: tuple[str, ...] = ()
) -> Iterator[RemoteS3]:
    """moto, the proxy in front of it and an aistore-server using it as S3 (on `mountpaths` if
    given, with the extra server flags `args`); all stopped after."""
    moto = MotoServer().start()
    proxy = FaultProxy(moto.port)
    try:
        env = {"S3_ENDPOINT": proxy.endpoint, **SERVER_ENV}
        with LocalServer(mountpaths, num_mountpaths=num_mountpaths, env=env, args=args) as srv:
            yield RemoteS3(moto, proxy, srv, boto3_s3(moto.endpoint))
    finally:
        proxy.close()
        moto.stop()
