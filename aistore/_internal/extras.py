"""What an optional part of the package needs, checked up front so that its absence is said in
one line naming the extra to install, not in a traceback from deep inside an import."""

from __future__ import annotations

import importlib.util

__all__ = ["require_extra"]

DISTRIBUTION = "aistore-embedded"


def require_extra(extra: str, *modules: str, what: str) -> None:
    """Raise ImportError naming `extra` when any of `modules` cannot be imported.

    Args:
        extra: the extra that brings the modules (pyproject.toml's optional-dependencies).
        modules: top-level module names.
        what: the part of the package that needs them, for the message.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(
            f"{what} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f'not installed: pip install "{DISTRIBUTION}[{extra}]"'
        )
