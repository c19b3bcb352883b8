"""Virtual environments that see what this interpreter imports.

`python -m venv --system-site-packages` gives a new environment the *base* interpreter's
site-packages. When this interpreter runs in a virtual environment itself (the project's .venv,
a user's venv), its packages are not there: `link_site_packages` adds them, after the new
environment's own, so that what the new one installs comes first.
"""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["link_site_packages"]

_PTH = "_aistore_parent_env.pth"


def link_site_packages(venv: Path) -> None:
    """Make this interpreter's site-packages importable in `venv` (a virtual environment made by
    this interpreter with ``--system-site-packages``); nothing to do outside a venv."""
    if sys.prefix == sys.base_prefix:
        return
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    lines = [f"import site; site.addsitedir({d!r})\n" for d in site.getsitepackages()]
    Path(purelib, _PTH).write_text("".join(lines))
