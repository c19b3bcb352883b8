"""Build the HTML API reference of the public modules with pdoc (`scripts/docs.sh` runs it).

    python3 scripts/api_docs.py [OUTPUT_DIR]      # default: build/api

Public modules are those users may import: `aistore`, `aistore.server`, and every module under
`aistore.sdk` and `aistore.pytorch` whose dotted path has no part starting with an underscore
(see docs/user-guide.md). Any warning pdoc raises (an annotation it cannot resolve, a module that
does not import, ...) is printed and makes the exit status 1, so the reference cannot rot
silently.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import types
import warnings
from pathlib import Path

import pdoc
import pdoc.render

PACKAGE = "aistore"


def public_modules() -> list[str]:
    """Dotted names of the public modules, parents before children."""
    root = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(root.__path__, f"{PACKAGE}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def specs_for(names: list[str]) -> list[str]:
    """The pdoc module specs for `names`: pdoc walks the submodules of a package by itself
    (those its `__all__` lists, when it has one), so only modules it would not reach are
    named; a final pattern drops private modules found by walking."""
    reached: set[str] = set()
    specs: list[str] = []
    for name in names:
        parent, _, short = name.rpartition(".")
        if parent in reached:
            parent_all = getattr(importlib.import_module(parent), "__all__", None)
            if parent_all is None or short in parent_all:
                reached.add(name)
                continue
        specs.append(name)
        reached.add(name)
    return [*specs, r"!.*\._"]


def _typeshed_stand_in() -> None:
    """`_typeshed` exists only for type checkers; pdoc evaluates `if TYPE_CHECKING:` imports to
    resolve annotations, so give it the buffer aliases our annotations use."""
    if "_typeshed" in sys.modules:
        return
    try:
        from collections.abc import Buffer  # type: ignore[attr-defined]  # Python >= 3.12
    except ImportError:
        from typing_extensions import Buffer
    stand_in = types.ModuleType("_typeshed")
    stand_in.ReadableBuffer = Buffer  # type: ignore[attr-defined]
    stand_in.WriteableBuffer = Buffer  # type: ignore[attr-defined]
    sys.modules["_typeshed"] = stand_in


def build(output: Path) -> list[str]:
    """Write the reference into `output`; returns pdoc's warnings (empty when clean).

    Documents the `aistore` this interpreter imports (installed, or first on `PYTHONPATH`).
    """
    _typeshed_stand_in()
    output = output.resolve()
    output.mkdir(parents=True, exist_ok=True)
    # pdoc also resolves module names against the working directory (a source checkout has an
    # aistore/ folder); from the output folder, only the importable package is seen.
    cwd = Path.cwd()
    os.chdir(output)
    pdoc.render.configure(
        docformat="google",
        footer_text="aistore API reference",
        search=True,
        show_source=True,
    )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pdoc.pdoc(*specs_for(public_modules()), output_directory=output)
    finally:
        os.chdir(cwd)
    return [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))
    ]


def main() -> int:
    output = Path(sys.argv[1] if len(sys.argv) > 1 else "build/api")
    problems = build(output)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"API reference: {output / 'index.html'} ({len(problems)} warnings)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
