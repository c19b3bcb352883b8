"""A scriptable HTTP/1.1 server in a thread, for transport faults the real server never makes.

Each test installs a `route(req) -> Reply` function; the server records every request.
"""

from __future__ import annotations

import http.server
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from aistore.sdk.retry_config import RetryConfig


@dataclass
class Req:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    peer_port: int = 0  # the client's port: one per connection


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Send only this many body bytes (Content-Length still announces all), then hang up.
    cut_after: int | None = None
    # Hang up without any reply.
    drop: bool = False
    # With `cut_after`: wait this long after the partial body before hanging up.
    stall: float = 0.0
    # With `cut_after`: after the stall, send the rest of the body instead of hanging up.
    resume: bool = False
    # Wait this long before replying at all.
    delay: float = 0.0
    # Hang up after the reply without saying so (a keep-alive connection the server closed).
    close_after: bool = False


Route = Callable[[Req], Reply]


class FakeServer:
    def __init__(self, tls: tuple[str, str] | None = None, host: str = "127.0.0.1") -> None:
        self.requests: list[Req] = []
        self.route: Route = lambda req: Reply(404, b'{"message":"no route"}')
        # When set: sent as soon as a request's head is read, its body left unread, and the
        # connection closed (a server refusing an upload early).
        self.early_reply: Reply | None = None
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls between requests

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                if (early := outer.early_reply) is not None:
                    outer.requests.append(
                        Req(self.command, parts.path, {}, dict(self.headers.items()), b"")
                    )
                    self.send_response(early.status)
                    self.send_header("Content-Length", str(len(early.body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(early.body)
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                # A two-step HTTPS probe announces a length but sends no body.
                probe = self.headers.get("Connection", "").lower() == "close" and length > 0
                body = b"" if probe else self.rfile.read(length)
                req = Req(
                    self.command,
                    parts.path,
                    dict(parse_qsl(parts.query, keep_blank_values=True)),
                    dict(self.headers.items()),
                    body,
                    self.client_address[1],
                )
                outer.requests.append(req)
                reply = outer.route(req)
                time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                self.send_response(reply.status)
                # A chunked reply's body comes encoded, and without a length.
                headers = dict(reply.headers)
                if "Transfer-Encoding" not in headers:
                    headers.setdefault("Content-Length", str(len(reply.body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                if probe:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if self.command == "HEAD":
                    return
                if reply.cut_after is not None:
                    self.wfile.write(reply.body[: reply.cut_after])
                    self.wfile.flush()
                    time.sleep(reply.stall)
                    if reply.resume:
                        self.wfile.write(reply.body[reply.cut_after :])
                    else:
                        self.close_connection = True
                    return
                self.wfile.write(reply.body)
                if reply.close_after:
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = _handle

        self._httpd = http.server.ThreadingHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        scheme = "http"
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        host, port = self._httpd.server_address[:2]
        self.url = f"{scheme}://{host}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def fast_retry_config(http_total: int = 0) -> RetryConfig:
    """Default policies without the waiting, so fault tests run in milliseconds."""
    from tenacity import stop_after_attempt, wait_none
    from urllib3.util.retry import Retry

    cfg = RetryConfig.default()
    cfg.network_retry = cfg.network_retry.copy(wait=wait_none(), stop=stop_after_attempt(3))
    cfg.http_retry = Retry(
        total=http_total,
        backoff_factor=0,
        status_forcelist=[429, 500, 502, 503, 504],
        connect=0,
        read=0,
        raise_on_status=True,
    )
    return cfg
