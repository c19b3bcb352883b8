"""Servers that run inside an ETL container and apply an `ETLServer`'s transform.

`HTTPMultiThreadedServer` needs only the standard library; `FlaskServer` needs `flask` and
`FastAPIServer` needs `fastapi` and `uvicorn`, imported when such a server is created.

Example:
    >>> from aistore.sdk.etl.webserver import serialize_class  # doctest: +SKIP
"""

from aistore.sdk.etl.webserver.utils import serialize_class

__all__ = ["serialize_class"]
