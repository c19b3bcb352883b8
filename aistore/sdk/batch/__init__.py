"""The Batch API (GetBatch): `Batch`, its wire types and errors.

Example:
    >>> from aistore.sdk.batch import Batch, MossIn
    >>> MossIn(obj_name="a").obj_name
    'a'
"""

from aistore.sdk.batch.batch import Batch
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.types import MossIn, MossOut, MossReq, MossResp

__all__ = ["Batch", "MossIn", "MossOut", "MossReq", "MossResp", "MultipartDecodeError"]
