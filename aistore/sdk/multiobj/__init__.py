"""Operations on many objects of a bucket at once: by list, range, template or prefix.

Example:
    >>> from aistore.sdk.multiobj import ObjectRange
    >>> ObjectRange("shard-", 0, 9).get_value()
    {'template': 'shard-{0..9..1}'}
"""

from aistore.sdk.multiobj.object_collection import ObjectCollection
from aistore.sdk.multiobj.object_group import ObjectGroup
from aistore.sdk.multiobj.object_names import ObjectNames
from aistore.sdk.multiobj.object_range import ObjectRange
from aistore.sdk.multiobj.object_template import ObjectTemplate

__all__ = ["ObjectCollection", "ObjectGroup", "ObjectNames", "ObjectRange", "ObjectTemplate"]
