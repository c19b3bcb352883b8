"""ETL: user transformations that a cluster on Kubernetes runs next to its targets.

Our server runs no ETL containers. These modules are the official SDK's ETL surface: their
configuration and message types work as they do there, and calls that need the cluster
fail as on a cluster without ETL (`AISError` with the server's status).

Example:
    >>> from aistore.sdk.etl import ETLConfig
    >>> params = {}
    >>> ETLConfig(name="md5-etl", args={"k": 1}).update_qparams(params)
    >>> params
    {'etl_name': 'md5-etl', 'etl_args': '{"k":1}'}
"""

from aistore.sdk.etl.etl_config import ETLConfig
from aistore.sdk.etl.webserver.utils import serialize_class

__all__ = ["ETLConfig", "serialize_class"]
