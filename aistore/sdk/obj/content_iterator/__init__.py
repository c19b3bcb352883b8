"""Content providers behind `ObjectReader`: sequential GETs, or parallel range reads into
shared memory (`ParallelBuffer`).

Example:
    >>> from aistore.sdk.obj.content_iterator import ParallelBuffer, StreamBounds
    >>> bounds = StreamBounds()
"""

from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, StreamBounds
from aistore.sdk.obj.content_iterator.buffer import ParallelBuffer
from aistore.sdk.obj.content_iterator.parallel import ParallelContentIterProvider
from aistore.sdk.obj.content_iterator.sequential import ContentIterProvider

__all__ = [
    "BaseContentIterProvider",
    "ContentIterProvider",
    "ParallelBuffer",
    "ParallelContentIterProvider",
    "StreamBounds",
]
