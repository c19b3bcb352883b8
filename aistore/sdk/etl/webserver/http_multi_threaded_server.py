"""An ETL server on the standard library's threading HTTP server.

`GET /<path>` pulls the object from the target (`hpull`), `PUT /<path>` transforms the
pushed body (`hpush`); `/health` answers `Running`. Query `etl_args` and `etl_fqn`, and the
`Ais-Node-Url` header, are handled as `ETLServer.process_request` describes. A PUT body is
read whole, by its Content-Length (chunked bodies are not supported).

Example:
    >>> class Echo(HTTPMultiThreadedServer):  # doctest: +SKIP
    ...     def transform(self, data, path, etl_args):
    ...         return data
    >>> Echo(port=8000).start()  # doctest: +SKIP
"""

from __future__ import annotations

import signal
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aistore.sdk.const import (
    ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT as ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT,
)
from aistore.sdk.const import HEADER_CONTENT_LENGTH, HEADER_CONTENT_TYPE, HEADER_NODE_URL
from aistore.sdk.const import HEADER_DIRECT_PUT_LENGTH as HEADER_DIRECT_PUT_LENGTH
from aistore.sdk.const import HEADER_ETL_RETRY_REASON as HEADER_ETL_RETRY_REASON
from aistore.sdk.const import HEADER_TRANSFER_ENCODING as HEADER_TRANSFER_ENCODING
from aistore.sdk.const import QPARAM_ETL_ARGS as QPARAM_ETL_ARGS
from aistore.sdk.const import QPARAM_ETL_FQN as QPARAM_ETL_FQN
from aistore.sdk.const import STATUS_BAD_GATEWAY as STATUS_BAD_GATEWAY
from aistore.sdk.const import STATUS_INTERNAL_SERVER_ERROR as STATUS_INTERNAL_SERVER_ERROR
from aistore.sdk.const import STATUS_OK as STATUS_OK
from aistore.sdk.const import STATUS_SERVICE_UNAVAILABLE as STATUS_SERVICE_UNAVAILABLE
from aistore.sdk.errors import ETLDirectPutTransientError as ETLDirectPutTransientError
from aistore.sdk.errors import InvalidPipelineError as InvalidPipelineError
from aistore.sdk.etl.webserver.base_etl_server import _HEALTH_PATH, _HEALTH_REPLY, ETLServer
from aistore.sdk.etl.webserver.base_etl_server import DRAIN_CHUNK_BYTES as DRAIN_CHUNK_BYTES
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_BASE as RETRY_BACKOFF_BASE
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_MAX as RETRY_BACKOFF_MAX
from aistore.sdk.etl.webserver.base_etl_server import (
    SYNC_DIRECT_PUT_TRANSIENT_ERRORS as SYNC_DIRECT_PUT_TRANSIENT_ERRORS,
)
from aistore.sdk.etl.webserver.base_etl_server import CountingIterator as CountingIterator
from aistore.sdk.etl.webserver.utils import compose_etl_direct_put_url as compose_etl_direct_put_url
from aistore.sdk.etl.webserver.utils import parse_etl_pipeline as parse_etl_pipeline

__all__ = ["HTTPMultiThreadedServer", "ThreadedHTTPServer"]


class ThreadedHTTPServer(ThreadingMixIn, HTTPServer):
    """An `HTTPServer` with a thread per connection that knows its `ETLServer`.

    Example:
        >>> srv = ThreadedHTTPServer(("127.0.0.1", 0), handler, etl_server)  # doctest: +SKIP
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, server_address: tuple[str, int], handler: type[Any], etl_server: ETLServer
    ) -> None:
        super().__init__(server_address, handler)
        self.etl_server = etl_server


class _Handler(BaseHTTPRequestHandler):
    server: ThreadedHTTPServer
    protocol_version = "HTTP/1.1"
    # A reply is two writes (header, then body): with Nagle on, the body waits for the client's
    # delayed ACK of the header on a kept-alive connection (~40 ms a request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        self.server.etl_server.logger.debug(format, *args)

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header(HEADER_CONTENT_TYPE, self.server.etl_server.get_mime_type())
        self.send_header(HEADER_CONTENT_LENGTH, str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _serve(self, body: bytes | None) -> None:
        url = urlsplit(self.path)
        if url.path == _HEALTH_PATH:
            self._reply(STATUS_OK, _HEALTH_REPLY.encode())
            return
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        node_url = self.headers.get(HEADER_NODE_URL, "")
        self._reply(*self.server.etl_server._answer(url.path.lstrip("/"), body, query, node_url))

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        self._serve(None)

    def do_PUT(self) -> None:  # noqa: N802 - stdlib's name
        length = int(self.headers.get(HEADER_CONTENT_LENGTH) or 0)
        self._serve(self.rfile.read(length))


class HTTPMultiThreadedServer(ETLServer):
    """An ETL server with a thread per connection; subclass it and override `transform`.

    Example:
        >>> class Upper(HTTPMultiThreadedServer):  # doctest: +SKIP
        ...     def transform(self, data, path, etl_args):
        ...         return data.upper()

    Args:
        host: address to listen on.
        port: port to listen on (0: any free port, see `server_address` after `bind()`).
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8000) -> None:
        super().__init__()
        self.host = host
        self.port = port
        self._httpd: ThreadedHTTPServer | None = None

    def _target_path(self, path: str) -> str:
        # `path` is the request's, still escaped: it goes to the target as it came.
        return path.lstrip("/")

    def bind(self) -> ThreadedHTTPServer:
        """Open the listening socket (`start()` does it when not done yet)."""
        if self._httpd is None:
            self._httpd = ThreadedHTTPServer((self.host, self.port), _Handler, self)
        return self._httpd

    def start(self) -> None:
        """Serve until SIGINT/SIGTERM (in the main thread) or `stop()`."""
        httpd = self.bind()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: threading.Thread(target=httpd.shutdown).start())
        self.logger.info("serving on %s:%s", *httpd.server_address[:2])
        try:
            httpd.serve_forever()
        finally:
            httpd.server_close()

    def stop(self) -> None:
        """Make `start()` return."""
        if self._httpd is not None:
            self._httpd.shutdown()
