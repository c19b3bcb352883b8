"""Prints the requirements `pip install .[EXTRAS]` would install besides the package itself, one per
line, as pyproject.toml states them (extras that name this distribution are expanded).

    python scripts/dependencies.py [EXTRAS]      e.g. torch  or  dev,torch

setup.sh installs them while the C++ build runs (pip would do one after the other). Exits 2
where Python has no tomllib (before 3.11): setup.sh then lets pip resolve them after the build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    sys.exit(2)

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def requirements(extras: list[str]) -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    own = re.compile(rf"^{re.escape(project['name'])}\[([^\]]*)\]\s*$")
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    out: list[str] = list(project.get("dependencies", []))
    pending, seen = list(extras), set()
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"dependencies.py: no extra {extra!r} in {PYPROJECT}")
        seen.add(extra)
        for req in optional[extra]:
            m = own.match(req)
            if m:
                pending.extend(e.strip() for e in m.group(1).split(",") if e.strip())
            elif req not in out:
                out.append(req)
    return out


if __name__ == "__main__":
    arg = sys.argv[1] if len(sys.argv) > 1 else ""
    print("\n".join(requirements([e.strip() for e in arg.split(",") if e.strip()])))
