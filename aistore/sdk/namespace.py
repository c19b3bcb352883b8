"""Bucket namespaces: `@<cluster uuid>#<name>`; the global namespace is `@#`.

Example:
    >>> from aistore.sdk.namespace import Namespace
    >>> Namespace(uuid="u1", name="ns").get_path()
    '@u1#ns'
"""

from pydantic import BaseModel

__all__ = ["Namespace"]


class Namespace(BaseModel):
    """A bucket namespace: the uuid of a (remote) cluster and a name within it.

    Example:
        >>> Namespace(name="ns").get_path()
        '@#ns'
    """

    uuid: str = ""
    name: str = ""

    def get_path(self) -> str:
        """The namespace as it appears in query parameters and unames."""
        return f"@{self.uuid}#{self.name}"
