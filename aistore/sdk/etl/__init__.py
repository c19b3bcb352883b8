"""ETL: user transformations that a cluster on Kubernetes runs next to its targets.

These modules are the official SDK's ETL surface. Our server runs the same transformer classes
(`ETLServer` subclasses, the official runtime image's code) as local processes instead of
Kubernetes pods (docs/etl.md): init, inline and offline transforms, pipelines and the lifecycle
calls work as against a cluster; other container images are refused with the reason.

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
