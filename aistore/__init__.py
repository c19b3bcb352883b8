"""AIStore-compatible Python SDK with an embedded storage server.

Example:
    >>> from aistore import Client
    >>> client = Client("http://localhost:8080")
"""

from aistore.sdk.client import Client
from aistore.version import __version__

__all__ = ["Client", "__version__"]
