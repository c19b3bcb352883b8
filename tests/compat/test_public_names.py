"""Every public name of the official SDK exists in ours, in the same module.

The official names come from the official wheel itself: a script run by the official venv's
interpreter finds its installed `aistore` package and reads each public module's top-level
definitions (classes, functions, assignments) with `ast`, without importing it. Our side
imports each module and looks the name up.
"""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path

import pytest

# The official package's public names by module, printed as JSON by the official interpreter.
_LIST_OFFICIAL_NAMES = r"""
import ast, json, pathlib, importlib.util
root = pathlib.Path(importlib.util.find_spec("aistore").origin).parent
out = {}
for f in sorted(root.rglob("*.py")):
    parts = list(f.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if any(p.startswith("_") for p in parts):
        continue
    names = set()
    for node in ast.parse(f.read_text()).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    out[".".join(parts)] = sorted(n for n in names if not n.startswith("_"))
print(json.dumps(out))
"""

_NO_MODULE = "<module: "


def _official_names(official_python: Path) -> dict[str, list[str]]:
    res = subprocess.run(
        [str(official_python), "-I", "-c", _LIST_OFFICIAL_NAMES],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    names: dict[str, list[str]] = json.loads(res.stdout)
    return names


def _missing_in_ours(official: dict[str, list[str]]) -> dict[str, list[str]]:
    missing: dict[str, list[str]] = {}
    for module_name, names in sorted(official.items()):
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            missing[module_name] = [f"{_NO_MODULE}{err}>", *names]
            continue
        lacking = [n for n in names if not hasattr(module, n)]
        if lacking:
            missing[module_name] = lacking
    return missing


def _listing(names: dict[str, list[str]]) -> str:
    return "\n".join(f"  {mod}: {', '.join(ns)}" for mod, ns in names.items())


@pytest.fixture(scope="module")
def official_names(official_python: Path) -> dict[str, list[str]]:
    names = _official_names(official_python)
    assert "aistore.sdk.client" in names and "Client" in names["aistore.sdk.client"]
    return names


def test_every_official_public_name_exists(official_names: dict[str, list[str]]) -> None:
    missing = _missing_in_ours(official_names)
    total = sum(len(v) for v in missing.values())
    assert not missing, f"{total} official names missing in ours:\n{_listing(missing)}"
