"""An ETL server on Flask (`pip install flask`), imported when the server is created.

Example:
    >>> class Echo(FlaskServer):  # doctest: +SKIP
    ...     def transform(self, data, path, etl_args):
    ...         return data
    >>> Echo(port=8000).start()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from aistore.sdk.const import (
    ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT as ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT,
)
from aistore.sdk.const import HEADER_DIRECT_PUT_LENGTH as HEADER_DIRECT_PUT_LENGTH
from aistore.sdk.const import HEADER_ETL_RETRY_REASON as HEADER_ETL_RETRY_REASON
from aistore.sdk.const import HEADER_NODE_URL
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
from aistore.sdk.etl.webserver.base_etl_server import DRAIN_CHUNK_BYTES as DRAIN_CHUNK_BYTES
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_BASE as RETRY_BACKOFF_BASE
from aistore.sdk.etl.webserver.base_etl_server import RETRY_BACKOFF_MAX as RETRY_BACKOFF_MAX
from aistore.sdk.etl.webserver.base_etl_server import (
    SYNC_DIRECT_PUT_TRANSIENT_ERRORS as SYNC_DIRECT_PUT_TRANSIENT_ERRORS,
)
from aistore.sdk.etl.webserver.base_etl_server import CountingIterator as CountingIterator
from aistore.sdk.etl.webserver.base_etl_server import ETLServer as ETLServer
from aistore.sdk.etl.webserver.utils import compose_etl_direct_put_url as compose_etl_direct_put_url
from aistore.sdk.etl.webserver.utils import parse_etl_pipeline as parse_etl_pipeline

__all__ = ["FlaskServer"]


class FlaskServer(_AppServer):
    """An ETL server as a Flask app (`self.app`); subclass it and override `transform`.

    Example:
        >>> class Upper(FlaskServer):  # doctest: +SKIP
        ...     def transform(self, data, path, etl_args):
        ...         return data.upper()

    Args:
        host: address `start()` listens on.
        port: port `start()` listens on.

    Raises:
        ImportError: flask is not installed.
    """

    def _make_app(self) -> Any:
        flask = _require("flask", "FlaskServer", "flask")
        app = flask.Flask(type(self).__name__)
        app.add_url_rule(_HEALTH_PATH, "health", lambda: _HEALTH_REPLY)
        app.add_url_rule("/<path:path>", "transform", self._handle, methods=["GET", "PUT"])
        return app

    def _handle(self, path: str) -> Any:
        import flask

        req = flask.request
        body = req.get_data() if req.method == "PUT" else None
        status, out, headers = self._answer(
            path, body, req.args, req.headers.get(HEADER_NODE_URL, "")
        )
        return flask.Response(out, status=status, headers=headers, mimetype=self.get_mime_type())

    def start(self) -> None:
        """Serve with Flask's threaded server (blocking)."""
        self.app.run(host=self.host, port=self.port, threaded=True)
