"""Constants of ETL (transformers that a cluster on Kubernetes runs next to its targets).

Example:
    >>> from aistore.sdk.etl.etl_const import ETL_COMM_OPTIONS
    >>> ETL_COMM_OPTIONS
    ['hpush', 'hpull', 'ws']
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_ETL_COMM",
    "DEFAULT_ETL_OBJ_TIMEOUT",
    "DEFAULT_ETL_TIMEOUT",
    "ETL_COMM_HPULL",
    "ETL_COMM_HPUSH",
    "ETL_COMM_OPTIONS",
    "ETL_COMM_WS",
    "ETL_STAGE_ABORTED",
    "ETL_STAGE_INIT",
    "ETL_STAGE_RUNNING",
    "ETL_SUPPORTED_PYTHON_VERSIONS",
    "FASTAPI_CMD",
]

# How a target hands objects to an ETL container: it pushes them (PUT), the container pulls
# them (GET from the target), or over a websocket.
ETL_COMM_HPUSH = "hpush"
ETL_COMM_HPULL = "hpull"
ETL_COMM_WS = "ws"
ETL_COMM_OPTIONS = [ETL_COMM_HPUSH, ETL_COMM_HPULL, ETL_COMM_WS]
DEFAULT_ETL_COMM = ETL_COMM_HPUSH

# Go duration strings: to start the ETL, and to transform one object.
DEFAULT_ETL_TIMEOUT = "5m"
DEFAULT_ETL_OBJ_TIMEOUT = "45s"

# Stages an ETL reports.
ETL_STAGE_INIT = "Initializing"
ETL_STAGE_RUNNING = "Running"
ETL_STAGE_ABORTED = "Aborted"

# Python versions of the `aistorage/runtime_python:<version>` images that `init_class` uses.
ETL_SUPPORTED_PYTHON_VERSIONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]

# The command an ETL container image runs to serve a FastAPI ETL server.
FASTAPI_CMD = [
    "uvicorn",
    "fastapi_server:fastapi_app",
    "--host",
    "0.0.0.0",
    "--port",
    "8000",
    "--workers",
    "4",
    "--no-access-log",
]
