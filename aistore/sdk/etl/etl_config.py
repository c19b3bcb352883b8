"""Which ETL to apply to a read, and with which arguments.

Example:
    >>> params = {}
    >>> ETLConfig(name="resize-etl", args="256").update_qparams(params)
    >>> params
    {'etl_name': 'resize-etl', 'etl_args': '256'}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aistore.sdk.const import QPARAM_ETL_ARGS, QPARAM_ETL_NAME
from aistore.sdk.const import QPARAM_ETL_PIPELINE as QPARAM_ETL_PIPELINE
from aistore.sdk.etl.etl import Etl

__all__ = ["ETLConfig"]

# Query parameter of the later stages of an ETL pipeline (comma-separated names).
_QPARAM_ETL_PIPELINE = "etl_pipeline"


@dataclass
class ETLConfig:
    """The ETL (by name, or an `Etl`, which may be a pipeline) and its per-request arguments.

    Example:
        >>> ETLConfig(name="image-etl", args={"format": "jpeg"}).name
        'image-etl'

    Attributes:
        name: the ETL's name, or an `Etl` (`etl1 >> etl2` for a pipeline).
        args: arguments for the transform: a string, or a dict sent as compact JSON.
    """

    name: str | Etl | None = None
    args: str | dict[str, Any] | None = None

    def update_qparams(self, params: dict[str, str]) -> None:
        """Add the ETL's query parameters to `params` (nothing without a name)."""
        if not self.name:
            return
        if isinstance(self.name, Etl):
            params[QPARAM_ETL_NAME] = self.name.name
            params[_QPARAM_ETL_PIPELINE] = ",".join(self.name.pipeline)
        else:
            params[QPARAM_ETL_NAME] = self.name
        if self.args:
            params[QPARAM_ETL_ARGS] = (
                json.dumps(self.args, separators=(",", ":"))
                if isinstance(self.args, dict)
                else self.args
            )
