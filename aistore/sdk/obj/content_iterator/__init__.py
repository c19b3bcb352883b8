"""Content providers behind `ObjectReader`: sequential now, parallel range reads later.

Example:
    >>> from aistore.sdk.obj.content_iterator import ContentIterProvider, StreamBounds
    >>> bounds = StreamBounds()
"""

from aistore.sdk.obj.content_iterator.base import BaseContentIterProvider, StreamBounds
from aistore.sdk.obj.content_iterator.sequential import ContentIterProvider

__all__ = ["BaseContentIterProvider", "ContentIterProvider", "StreamBounds"]
