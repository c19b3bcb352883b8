"""External key maps: which records go into which output shard of a dSort job.

Example:
    >>> from aistore.sdk.multiobj import ObjectNames
    >>> ekm = ExternalKeyMap()
    >>> ekm["shard-%d.tar"] = ObjectNames(["a", "b"])
    >>> ekm.as_dict()
    {'shard-%d.tar': ['a', 'b']}
"""

from __future__ import annotations

from aistore.sdk.multiobj import ObjectNames

__all__ = ["EKM_FILE_NAME", "ExternalKeyMap"]

# Name of the object a dSort job's key map is stored as, in the input bucket.
EKM_FILE_NAME = "ekm-file.json"


class ExternalKeyMap(dict[str, ObjectNames]):
    """Output shard name format → the records (`ObjectNames`) that go into it.

    Example:
        >>> ExternalKeyMap().as_dict()
        {}

    Raises:
        TypeError: a key that is not a string, or a value that is not `ObjectNames`.
    """

    def __setitem__(self, key: str, value: ObjectNames) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Key must be a string, got {type(key).__name__}")
        if not isinstance(value, ObjectNames):
            raise TypeError(f"Value must be an instance of ObjectNames, got {type(value).__name__}")
        super().__setitem__(key, value)

    def as_dict(self) -> dict[str, list[str]]:
        """Format → record names, as the key-map file holds them."""
        return {fmt: list(names.get_value()["objnames"]) for fmt, names in self.items()}

    def __str__(self) -> str:
        # A spec whose output is a key map names no output format.
        return ""
