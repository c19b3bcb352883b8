"""Object metadata together with the object's identity (name, bucket, provider).

Example:
    >>> from aistore.sdk.obj.object_props import ObjectProps
    >>> ObjectProps({"ais-name": "x", "ais-bucket-name": "b"}).bucket_name
    'b'
"""

from __future__ import annotations

from aistore.sdk.const import AIS_BCK_NAME, AIS_BCK_PROVIDER, AIS_OBJ_NAME
from aistore.sdk.obj.object_attributes import ObjectAttributes

__all__ = ["ObjectProps"]


class ObjectProps(ObjectAttributes):
    """What `Object.props` and `Object.head()` return.

    Example:
        >>> ObjectProps({"ais-bucket-provider": "ais"}).bucket_provider
        'ais'
    """

    @property
    def bucket_name(self) -> str:
        """Name of the object's bucket."""
        return self._str(AIS_BCK_NAME)

    @property
    def bucket_provider(self) -> str:
        """Provider of the object's bucket."""
        return self._str(AIS_BCK_PROVIDER)

    @property
    def name(self) -> str:
        """Name of the object."""
        return self._str(AIS_OBJ_NAME)
