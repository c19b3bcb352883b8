"""`aistore._internal` is the layer below `aistore.sdk`: no module of it imports the SDK (or the
PyTorch datasets above it), at any depth - functions and TYPE_CHECKING blocks included."""

from __future__ import annotations

import ast
from pathlib import Path

import aistore._internal

_UPPER = ("aistore.sdk", "aistore.pytorch")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_internal_imports_nothing_above_it() -> None:
    root = Path(aistore._internal.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 10
    upward = {
        f"{path.relative_to(root)}: {name}"
        for path in modules
        for name in _imports(path)
        if name.startswith(_UPPER)
    }
    assert not upward
