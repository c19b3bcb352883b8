"""AIStore-compatible Python SDK with an embedded storage server.

Example:
    >>> from aistore import Client
    >>> client = Client("http://localhost:8080")
"""

import importlib.util as _importlib_util
from pathlib import Path as _Path

if _importlib_util.find_spec("aistore._native") is None:
    # A source checkout's aistore/ (on sys.path first: the working directory) has no built
    # extension; say so, instead of the circular-import error the first import of it would raise.
    raise ImportError(
        f"aistore's native extension is not built in {_Path(__file__).parent}: this is a source "
        "checkout. Build and install the package (scripts/setup.sh, or pip install .), then run "
        "from outside the checkout (or with PYTHONSAFEPATH=1)"
    )
del _importlib_util, _Path

from aistore.sdk.client import Client  # noqa: E402
from aistore.version import __version__  # noqa: E402

__all__ = ["Client", "__version__"]
