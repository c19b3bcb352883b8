"""Every public name of the official SDK imports from ours, from the same module.

A module's public names are what `from <module> import <name>` finds there: the names that
`dir(module)` shows without a leading underscore, whether the module defines them or imports
them (`aistore.sdk` re-exports `AuthNClient` from `aistore.sdk.authn.authn_client`). Of those,
the ones that come from the aistore package are the contract: submodules of aistore, objects
whose `__module__` is aistore's, and the names the module's source defines or imports from
aistore (plain constants such as a `str` carry no `__module__`). Third-party names a module
happens to import (`typing.Optional`, `requests`, `Path`) are not.

The official names come from the official wheel itself, listed by the official venv's
interpreter. Our side imports each module and looks each name up the way `from m import n`
does: an attribute, or else a submodule, which that statement imports even when the package
did not.
"""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path
from types import ModuleType
from typing import TypedDict

import pytest

# Printed as JSON by the official interpreter: {module: {"names": [...], "read": how}}.
# Each module is imported and its dir() read. A module that cannot be imported there because it
# needs a dependency of one of the official package's extras, which its venv does not install
# (torch for aistore.pytorch, fastapi/flask for the ETL web servers, mcp, wrapt for
# botocore_patch), is read from its source with `ast` instead: the names it defines at top
# level and those it imports from aistore. It is listed all the same, and "read" says how and
# why. Any other import failure stops the listing.
_LIST_OFFICIAL_NAMES = r"""
import ast, importlib, importlib.metadata, importlib.util, json, pathlib, re, types

# Import names of the dependencies behind the official package's extras (`mcp[cli]; extra ==
# "mcp"` gives "mcp").
optional = {
    re.match(r"[A-Za-z0-9_.-]+", req).group().lower().replace("-", "_")
    for req in importlib.metadata.requires("aistore") or ()
    if "extra ==" in req
}

def is_aistore(module_name):
    return module_name == "aistore" or module_name.startswith("aistore.")

def source_names(tree):
    # Top-level names the source defines, and those it imports from aistore.
    defined, imported = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and (node.level or is_aistore(node.module or "")):
            imported.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            imported.update(a.asname for a in node.names if a.asname and is_aistore(a.name))
    return defined, imported

root = pathlib.Path(importlib.util.find_spec("aistore").origin).parent
out = {}
for f in sorted(root.rglob("*.py")):
    parts = list(f.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if any(p.startswith("_") for p in parts):
        continue
    name = ".".join(parts)
    defined, imported = source_names(ast.parse(f.read_text()))
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] not in optional:
            raise
        names = defined | imported
        read = f"ast (import needs {err.name})"
    else:
        names, read = set(), "dir"
        for n in dir(module):
            obj = getattr(module, n)
            if isinstance(obj, types.ModuleType):
                keep = is_aistore(obj.__name__)
            else:
                origin = getattr(obj, "__module__", None)
                keep = n in defined or n in imported or is_aistore(str(origin or ""))
            if keep:
                names.add(n)
    # pydantic enters its parametrized models (`RootModel[List[X]]`) in the module namespace:
    # not identifiers, so no import statement can name them.
    public = sorted(n for n in names if not n.startswith("_") and n.isidentifier())
    out[name] = {"names": public, "read": read}
print(json.dumps(out))
"""

_NO_MODULE = "<module: "


class OfficialModule(TypedDict):
    names: list[str]  # public names from aistore, sorted
    read: str  # "dir", or why the module was read from its source instead


def _official_listing(official_python: Path) -> dict[str, OfficialModule]:
    res = subprocess.run(
        [str(official_python), "-I", "-c", _LIST_OFFICIAL_NAMES],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, f"listing the official names failed:\n{res.stderr[-4000:]}"
    listing: dict[str, OfficialModule] = json.loads(res.stdout)
    return listing


def _importable(module: ModuleType, name: str) -> bool:
    """Whether `from <module> import <name>` succeeds."""
    if hasattr(module, name):
        return True
    if not hasattr(module, "__path__"):
        return False
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return False
    return True


def _missing_in_ours(official: dict[str, OfficialModule]) -> dict[str, list[str]]:
    """Official names that ours lacks, by module (labelled with how the official was read)."""
    missing: dict[str, list[str]] = {}
    for module_name, entry in sorted(official.items()):
        label = module_name if entry["read"] == "dir" else f"{module_name} [{entry['read']}]"
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            missing[label] = [f"{_NO_MODULE}{err}>", *entry["names"]]
            continue
        lacking = [n for n in entry["names"] if not _importable(module, n)]
        if lacking:
            missing[label] = lacking
    return missing


def _listing(names: dict[str, list[str]]) -> str:
    return "\n".join(f"  {mod}: {', '.join(ns)}" for mod, ns in names.items())


@pytest.fixture(scope="module")
def official_listing(official_python: Path) -> dict[str, OfficialModule]:
    listing = _official_listing(official_python)
    sdk = listing["aistore.sdk"]
    # The namespace, not the definitions: aistore.sdk defines nothing, it re-exports.
    assert sdk["read"] == "dir" and {"Client", "AuthNClient", "Etl"} <= set(sdk["names"]), sdk
    return listing


def test_every_official_public_name_exists(official_listing: dict[str, OfficialModule]) -> None:
    missing = _missing_in_ours(official_listing)
    total = sum(len(v) for v in missing.values())
    assert not missing, f"{total} official names missing in ours:\n{_listing(missing)}"
