"""What every ETL server shares: the user's transform and how one request is answered.

A target sends an object to the ETL container in one of three ways: it PUTs the bytes
(`hpush`), or the container GETs them from the target (`hpull`), or the request names the
object's file on the target's disk (`etl_fqn`, with direct file access). The transformed
bytes go back in the reply, or, when the request names a next stage (`Ais-Node-Url`), are
PUT there directly and the reply carries only their length.

Example:
    >>> class Upper(ETLServer):  # doctest: +SKIP
    ...     def transform(self, data, path, etl_args):
    ...         return data.upper()
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from types import ModuleType
from typing import Any, BinaryIO
from urllib.parse import quote, unquote

import requests

from aistore.sdk.const import (
    AIS_AUTHN_TOKEN,
    HEADER_NODE_URL,
    HEADER_PREFIX,
    QPARAM_ETL_ARGS,
    QPARAM_ETL_FQN,
    STATUS_INTERNAL_SERVER_ERROR,
    STATUS_NO_CONTENT,
    STATUS_OK,
)
from aistore.sdk.const import AIS_DIRECT_PUT_RETRIES as AIS_DIRECT_PUT_RETRIES
from aistore.sdk.const import HEADER_AUTHORIZATION as HEADER_AUTHORIZATION
from aistore.sdk.const import HEADER_DIRECT_PUT_LENGTH as HEADER_DIRECT_PUT_LENGTH
from aistore.sdk.const import STATUS_BAD_GATEWAY as STATUS_BAD_GATEWAY
from aistore.sdk.errors import ETLDirectPutTransientError as ETLDirectPutTransientError
from aistore.sdk.session_manager import SessionManager as SessionManager
from aistore.sdk.utils import parse_bool as parse_bool

__all__ = [
    "DRAIN_CHUNK_BYTES",
    "RETRY_BACKOFF_BASE",
    "RETRY_BACKOFF_MAX",
    "SYNC_DIRECT_PUT_TRANSIENT_ERRORS",
    "CountingIterator",
    "ETLServer",
]

# Errors of a direct PUT to the next stage that may be retried: the connection was lost
# before any reply.
SYNC_DIRECT_PUT_TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    requests.ConnectionError,
    requests.exceptions.ChunkedEncodingError,
)
# Retry pauses of a direct PUT: RETRY_BACKOFF_BASE ** attempt seconds, at most the max.
RETRY_BACKOFF_BASE = 2.0
RETRY_BACKOFF_MAX = 30.0
# Unread request bodies are drained in pieces of this size before a connection is reused.
DRAIN_CHUNK_BYTES = 65536

_HEADER_DIRECT_PUT_LENGTH = HEADER_PREFIX + "Direct-Put-Length"
_TRUE = {"true", "1", "yes", "y", "on"}
# The liveness probe of every server: GET of this path is answered with this text.
_HEALTH_PATH = "/health"
_HEALTH_REPLY = "Running"


def _env_flag(name: str) -> bool:
    return os.getenv(name, "").strip().lower() in _TRUE


def _require(module: str, user: str, pip: str) -> ModuleType:
    """The optional dependency `module` that `user` needs, imported.

    Raises:
        ImportError: not installed; the message says what to `pip install`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{user} needs {module}: pip install {pip}") from err


class ETLServer(ABC):
    """An ETL server: subclass it, override `transform` (or `transform_stream`) and `start`.

    Configuration comes from the container's environment: `AIS_TARGET_URL` (required: the
    target this container serves), `DIRECT_PUT`, `ETL_DIRECT_FQN`, `AIS_DIRECT_PUT_RETRIES`
    (default 3) and `AIS_AUTHN_TOKEN`.

    Example:
        >>> class Echo(HTTPMultiThreadedServer):  # doctest: +SKIP
        ...     def transform(self, data, path, etl_args):
        ...         return data

    Raises:
        EnvironmentError: `AIS_TARGET_URL` is not set.
        TypeError: the subclass overrides neither `transform` nor `transform_stream`.
    """

    def __init__(self) -> None:
        host_target = os.getenv("AIS_TARGET_URL")
        if not host_target:
            raise OSError("Environment variable 'AIS_TARGET_URL' must be set.")
        self.host_target: str = host_target
        self.direct_put = _env_flag("DIRECT_PUT")
        self.direct_fqn = _env_flag("ETL_DIRECT_FQN")
        self.direct_put_retries = int(os.getenv("AIS_DIRECT_PUT_RETRIES", "3"))
        self.token = os.environ.get(AIS_AUTHN_TOKEN)
        self.session = requests.Session()
        if self.token:
            self.session.headers["Authorization"] = f"Bearer {self.token}"
        logging.basicConfig(level=logging.INFO, stream=sys.stdout)
        self.logger = logging.getLogger(type(self).__name__)
        has_transform = type(self).transform is not ETLServer.transform
        has_stream = type(self).transform_stream is not ETLServer.transform_stream
        if not (has_transform or has_stream):
            raise TypeError(
                f"{type(self).__name__} must override either transform() or transform_stream()"
            )
        self.use_streaming = has_stream and not has_transform

    def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
        """The transformed object. `data` is its bytes, or its file path with direct file
        access; `path` is the object's path; `etl_args` the request's arguments."""
        raise NotImplementedError("Subclass must override either transform() or transform_stream()")

    def transform_stream(self, reader: BinaryIO, path: str, etl_args: str) -> Iterator[bytes]:
        """The transformed object in pieces, reading the object from `reader`."""
        raise NotImplementedError("Subclass must override either transform() or transform_stream()")

    @abstractmethod
    def start(self) -> None:
        """Serve requests until stopped (blocking)."""

    def get_mime_type(self) -> str:
        """Content type of transformed objects."""
        return "application/octet-stream"

    @staticmethod
    def close_reader(reader: Any) -> None:
        """Close `reader` if it can be closed; errors are ignored."""
        close = getattr(reader, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):  # closing is best effort
                close()

    @staticmethod
    def iter_and_close(output_iter: Iterator[bytes], reader: Any) -> Iterator[bytes]:
        """Yield `output_iter`, then close `reader` (also when abandoned)."""
        try:
            yield from output_iter
        finally:
            ETLServer.close_reader(reader)

    @staticmethod
    def make_direct_put_headers(direct_put_length: int) -> dict[str, str]:
        """Reply headers announcing `direct_put_length` bytes written to the next stage."""
        return {_HEADER_DIRECT_PUT_LENGTH: str(direct_put_length)} if direct_put_length else {}

    def sanitize_fqn(self, fqn: str) -> str:
        """An absolute, normalized path from a URL-encoded file path."""
        return os.path.normpath(os.path.join("/", unquote(fqn).lstrip("/")))

    def client_put(
        self, url: str, data: bytes, headers: dict[str, str], timeout: float | None = None
    ) -> requests.Response:
        """PUT `data` to `url` through the server's session."""
        return self.session.put(url, data=data, headers=headers, timeout=timeout)

    def handle_direct_put_response(
        self, resp: requests.Response, data: bytes, data_length: int = -1
    ) -> tuple[int, bytes, int]:
        """(status, body, direct-put length) to reply with after a direct PUT.

        `data_length`, when not negative, is the number of bytes sent (for streamed PUTs).
        """
        size = data_length if data_length >= 0 else len(data)
        if resp.status_code == STATUS_NO_CONTENT:
            return STATUS_NO_CONTENT, b"", int(resp.headers.get(_HEADER_DIRECT_PUT_LENGTH, "0"))
        if resp.status_code == STATUS_OK:
            if resp.content:  # another ETL stage answered with its output
                return STATUS_OK, resp.content, 0
            return STATUS_NO_CONTENT, b"", size
        self.logger.error(
            "direct put to %s failed: %s %r", resp.url, resp.status_code, resp.content
        )
        return resp.status_code, resp.content, 0

    def process_request(
        self,
        path: str,
        body: bytes | None,
        etl_args: str,
        fqn: str = "",
        node_url: str = "",
    ) -> tuple[int, bytes, dict[str, str]]:
        """Answer one request: (status, body, headers).

        `body` is the pushed object (None for a GET: pull it from the target); `fqn` its
        file on the target, with direct file access; `node_url` the `Ais-Node-Url` header,
        the stages to PUT the result to.
        """
        data: bytes | str
        if fqn and self.direct_fqn:
            data = self.sanitize_fqn(fqn)
        elif fqn:  # the object's file, read here (a PUT that names it has an empty body)
            with open(self.sanitize_fqn(fqn), "rb") as f:
                data = f.read()
        elif body is not None:
            data = body
        else:
            resp = self.session.get(f"{self.host_target.rstrip('/')}/{self._target_path(path)}")
            if resp.status_code != STATUS_OK:
                return resp.status_code, resp.content, {}
            data = resp.content
        if self.use_streaming:
            source = open(data, "rb") if isinstance(data, str) else io.BytesIO(data)  # noqa: SIM115
            pieces = self.transform_stream(source, path, etl_args)
            out = b"".join(self.iter_and_close(pieces, source))
        else:
            out = self.transform(data, path, etl_args)
        if not node_url:
            return STATUS_OK, out, {}
        from aistore.sdk.etl.webserver.utils import compose_etl_direct_put_url, parse_etl_pipeline

        first, rest = parse_etl_pipeline(node_url)
        url = compose_etl_direct_put_url(first, self.host_target, path, etl_args)
        headers = {HEADER_NODE_URL: rest} if rest else {}
        status, reply, length = self.handle_direct_put_response(
            self.client_put(url, out, headers), out
        )
        return status, reply, self.make_direct_put_headers(length)

    def _target_path(self, path: str) -> str:
        """`path` (as `transform` sees it) in the URL of a GET from the target: escaped as
        the target sent it, so that an hpull uname (`ais/@#/b/o`) stays one segment."""
        return quote(path.lstrip("/"), safe="@")

    def _answer(
        self, path: str, body: bytes | None, query: Mapping[str, str], node_url: str
    ) -> tuple[int, bytes, dict[str, str]]:
        """`process_request` for a server's request: `etl_args` and `etl_fqn` from its query,
        `node_url` from its `Ais-Node-Url` header. A missing FQN file is a 404; any other
        failure (the transform's, most often) is logged and answered with a 500; both carry
        its message."""
        try:
            return self.process_request(
                path,
                body,
                query.get(QPARAM_ETL_ARGS, ""),
                fqn=query.get(QPARAM_ETL_FQN, ""),
                node_url=node_url,
            )
        except FileNotFoundError as err:  # the FQN names no file
            return HTTPStatus.NOT_FOUND.value, str(err).encode(), {}
        except Exception as err:  # noqa: BLE001 - the failure is the reply
            self.logger.exception("transform of %s failed", path)
            return STATUS_INTERNAL_SERVER_ERROR, str(err).encode(), {}


class _AppServer(ETLServer):
    """An ETL server whose requests a web framework's app routes (`self.app`, made by
    `_make_app`): GET of `_HEALTH_PATH` is the liveness probe, GET (hpull) and PUT (hpush) of
    any other path go to `_answer`.

    Args:
        host: address `start()` listens on.
        port: port `start()` listens on.

    Raises:
        ImportError: the framework is not installed.
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8000) -> None:
        super().__init__()
        self.host = host
        self.port = port
        self.app: Any = self._make_app()

    @abstractmethod
    def _make_app(self) -> Any:
        """The framework's app with the routes above."""


class CountingIterator:
    """Counts the bytes of the chunks it passes on.

    Example:
        >>> it = CountingIterator(iter([b"ab", b"cde"]))
        >>> b"".join(it), it.bytes_sent
        (b'abcde', 5)
    """

    def __init__(self, inner: Iterator[bytes]) -> None:
        self._inner = inner
        self.bytes_sent = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self.bytes_sent += len(chunk)
            yield chunk
