"""An ETL server on FastAPI (`pip install fastapi uvicorn`), imported when it is created.

Example:
    >>> class Echo(FastAPIServer):  # doctest: +SKIP
    ...     def transform(self, data, path, etl_args):
    ...         return data
    >>> Echo(port=8000).start()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from aistore.sdk.const import AIS_DIRECT_PUT_CHUNK_SIZE as AIS_DIRECT_PUT_CHUNK_SIZE
from aistore.sdk.const import AIS_DIRECT_PUT_RETRIES as AIS_DIRECT_PUT_RETRIES
from aistore.sdk.const import (
    ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT as ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT,
)
from aistore.sdk.const import ETL_WS_FQN as ETL_WS_FQN
from aistore.sdk.const import ETL_WS_PATH as ETL_WS_PATH
from aistore.sdk.const import ETL_WS_PIPELINE as ETL_WS_PIPELINE
from aistore.sdk.const import HEADER_AUTHORIZATION as HEADER_AUTHORIZATION
from aistore.sdk.const import HEADER_CONTENT_LENGTH as HEADER_CONTENT_LENGTH
from aistore.sdk.const import HEADER_DIRECT_PUT_LENGTH as HEADER_DIRECT_PUT_LENGTH
from aistore.sdk.const import HEADER_ETL_RETRY_REASON as HEADER_ETL_RETRY_REASON
from aistore.sdk.const import HEADER_NODE_URL, STATUS_NO_CONTENT
from aistore.sdk.const import MIB as MIB
from aistore.sdk.const import QPARAM_ETL_ARGS as QPARAM_ETL_ARGS
from aistore.sdk.const import QPARAM_ETL_FQN as QPARAM_ETL_FQN
from aistore.sdk.const import STATUS_BAD_GATEWAY as STATUS_BAD_GATEWAY
from aistore.sdk.const import STATUS_INTERNAL_SERVER_ERROR as STATUS_INTERNAL_SERVER_ERROR
from aistore.sdk.const import STATUS_OK as STATUS_OK
from aistore.sdk.const import STATUS_SERVICE_UNAVAILABLE as STATUS_SERVICE_UNAVAILABLE
from aistore.sdk.errors import ETLDirectPutTransientError as ETLDirectPutTransientError
from aistore.sdk.errors import InvalidPipelineError as InvalidPipelineError
from aistore.sdk.etl.webserver.base_etl_server import (
    _HEALTH_PATH,
    _HEALTH_REPLY,
    _AppServer,
    _require,
)
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_BASE as RETRY_BACKOFF_BASE
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_MAX as RETRY_BACKOFF_MAX
from aistore.sdk.etl.webserver.base_etl_server import CountingIterator as CountingIterator
from aistore.sdk.etl.webserver.base_etl_server import ETLServer as ETLServer
from aistore.sdk.etl.webserver.utils import compose_etl_direct_put_url as compose_etl_direct_put_url
from aistore.sdk.etl.webserver.utils import parse_etl_pipeline as parse_etl_pipeline
from aistore.sdk.session_manager import resolve_ssl_config as resolve_ssl_config

__all__ = ["HTTP_LIMITS", "FastAPIServer"]

_WS_PATH = "/ws"  # the WebSocket endpoint (`ws://` ETLs)

# Connection limits of the server's outgoing client, as keyword arguments of `httpx.Limits`
# (set through the container's environment).
HTTP_LIMITS: dict[str, int] = {
    "max_connections": int(os.getenv("MAX_CONN", "256")),
    "max_keepalive_connections": int(os.getenv("MAX_KEEPALIVE_CONN", "128")),
    "keepalive_expiry": int(os.getenv("KEEPALIVE_EXPIRY", "30")),
}


class FastAPIServer(_AppServer):
    """An ETL server as a FastAPI app (`self.app`); subclass it and override `transform`.

    Transforms run in FastAPI's thread pool, one request each.

    Example:
        >>> class Upper(FastAPIServer):  # doctest: +SKIP
        ...     def transform(self, data, path, etl_args):
        ...         return data.upper()

    Args:
        host: address `start()` listens on.
        port: port `start()` listens on.

    Raises:
        ImportError: fastapi is not installed.
    """

    def _make_app(self) -> Any:
        fastapi = _require("fastapi", "FastAPIServer", "fastapi uvicorn")
        app = fastapi.FastAPI()
        # Plain Starlette routes, whose handlers take the request itself: FastAPI's parameter
        # injection goes by annotations, and this module cannot name fastapi's types in them
        # (fastapi is imported only here). Through injection, `request` was a query parameter.
        app.add_route(_HEALTH_PATH, lambda _: fastapi.Response(_HEALTH_REPLY), methods=["GET"])
        app.router.add_websocket_route(_WS_PATH, self._handle_ws)
        app.add_route("/{path:path}", self._handle, methods=["GET", "PUT"])
        return app

    async def _handle_ws(self, websocket: Any) -> None:
        """`ws://`: per object, a JSON control message (`path`, `etl_args`, `fqn`, `pipeline`),
        then the object's bytes unless `fqn` names its file; one reply each, in order: the
        transformed bytes (binary), or, when the result went to the pipeline's next stage, its
        length (text). A failure is the text `Transform error: <why>`."""
        import json

        from starlette.concurrency import run_in_threadpool
        from starlette.websockets import WebSocketDisconnect

        await websocket.accept()
        try:
            while True:
                control = json.loads(await websocket.receive_bytes())
                fqn = control.get(ETL_WS_FQN, "")
                body = None if fqn else await websocket.receive_bytes()
                status, out, headers = await run_in_threadpool(
                    self._answer,
                    control.get(ETL_WS_PATH, ""),
                    body,
                    {QPARAM_ETL_ARGS: control.get(QPARAM_ETL_ARGS, ""), QPARAM_ETL_FQN: fqn},
                    control.get(ETL_WS_PIPELINE, ""),
                )
                if status == STATUS_OK:
                    await websocket.send_bytes(out)
                elif status == STATUS_NO_CONTENT:
                    await websocket.send_text(headers.get(HEADER_DIRECT_PUT_LENGTH, "0"))
                else:
                    await websocket.send_text(f"Transform error: {out.decode(errors='replace')}")
        except WebSocketDisconnect:
            return

    async def _handle(self, request: Any) -> Any:
        import fastapi
        from starlette.concurrency import run_in_threadpool

        body = await request.body() if request.method == "PUT" else None
        status, out, headers = await run_in_threadpool(
            self._answer,
            request.path_params["path"],
            body,
            request.query_params,
            request.headers.get(HEADER_NODE_URL, ""),
        )
        return fastapi.Response(
            out, status_code=status, headers=headers, media_type=self.get_mime_type()
        )

    def start(self) -> None:
        """Serve with uvicorn (blocking).

        Raises:
            ImportError: uvicorn is not installed.
        """
        uvicorn = _require("uvicorn", "FastAPIServer.start", "uvicorn")
        uvicorn.run(self.app, host=self.host, port=self.port, log_level="warning")
