"""Helpers of ETL servers: class serialization, pipeline headers, direct-PUT URLs.

Example:
    >>> parse_etl_pipeline("http://a:1, http://b:2,http://c:3")
    ('http://a:1', 'http://b:2,http://c:3')
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlparse, urlunparse

from aistore.sdk.const import QPARAM_ETL_ARGS, UTF_ENCODING
from aistore.sdk.errors import InvalidPipelineError
from aistore.sdk.etl.webserver.base_etl_server import ETLServer as ETLServer

__all__ = ["compose_etl_direct_put_url", "parse_etl_pipeline", "serialize_class"]


def serialize_class(cls: Any, encoding: str = UTF_ENCODING) -> str:
    """An `ETLServer` subclass, pickled by value (`cloudpickle`) and base64-encoded.

    Raises:
        TypeError: `cls` is not an `ETLServer` subclass.
        ImportError: `cloudpickle` is not installed.
    """
    from aistore.sdk.etl.webserver.base_etl_server import ETLServer

    if not isinstance(cls, type) or not issubclass(cls, ETLServer):
        raise TypeError(f"{cls!r} is not a subclass of ETLServer")
    try:
        import cloudpickle  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise ImportError("serializing an ETL class needs `pip install cloudpickle`") from err
    return base64.b64encode(cloudpickle.dumps(cls)).decode(encoding)


def compose_etl_direct_put_url(
    direct_put_url: str, host_target: str, obj_path: str, etl_args: str = ""
) -> str:
    """The URL to PUT a transformed object to.

    A destination without a path is the next ETL stage: the object's path is appended. One
    with a path (an offline transform's destination target) gets the host target's path in
    front. The destination's query is kept, its `etl_args` replaced by `etl_args` if given.

    Example:
        >>> compose_etl_direct_put_url("http://next:80", "http://t:8080", "b/o 1", "x")
        'http://next:80/b/o%201?etl_args=x'
    """
    direct, host = urlparse(direct_put_url), urlparse(host_target)
    path = host.path + direct.path if direct.path else quote(obj_path, safe="/@")
    if path and not path.startswith("/"):
        path = "/" + path
    query = direct.query
    if etl_args:
        pairs = [
            (k, v)
            for k, v in parse_qsl(direct.query, keep_blank_values=True)
            if k != QPARAM_ETL_ARGS
        ]
        query = urlencode([*pairs, (QPARAM_ETL_ARGS, etl_args)])
    return urlunparse(host._replace(netloc=direct.netloc, path=path, query=query))


def parse_etl_pipeline(pipeline_header: str) -> tuple[str, str]:
    """(first stage URL, the remaining stages comma-joined) of a pipeline header.

    Raises:
        InvalidPipelineError: an empty entry.
    """
    header = (pipeline_header or "").strip()
    if not header:
        return "", ""
    entries = [e.strip() for e in header.split(",")]
    if not all(entries):
        raise InvalidPipelineError("Pipeline header contains empty entry")
    first, _, rest = header.partition(",")
    return first.strip(), rest.strip()
