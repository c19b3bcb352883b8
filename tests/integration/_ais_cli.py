"""The official `ais` CLI (AIStore 5.0) as the integration tests run it: found at
$AIS_TOOLS_DIR/bin/ais, else at ../shared/tools/ais/bin/ais beside the checkout (NEEDS_CLI skips a
module without it), with a HOME of its own (its config and credentials never come from, or go to,
the machine's). Used by test_ais_cli.py and remote_s3/test_ais_cli_remote.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("AIS_TOOLS_DIR", REPO.parent / "shared" / "tools" / "ais"))
AIS = TOOLS / "bin" / "ais"

NEEDS_CLI = pytest.mark.skipif(
    not os.access(AIS, os.X_OK),
    reason=f"the official ais CLI is not at {AIS} (set AIS_TOOLS_DIR to the directory of bin/ais)",
)

# What the CLI prints when a request or a decode failed, even when it exits 0 (`show cluster`
# puts a node's error in its ALERT column; a node whose status it could not read shows up as
# "empty version from t[...]").
PROBLEM = re.compile(r"\berror\b|unexpected|failed|empty version from", re.IGNORECASE)


@dataclass
class Cli:
    """The `ais` binary pointed at one endpoint, with a HOME of its own."""

    endpoint: str
    home: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "AIS_ENDPOINT": self.endpoint,
        }
        return subprocess.run(
            [str(AIS), *args],
            env=env,
            cwd=self.home,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",  # a decode error quotes the raw bytes it choked on
            timeout=60,
        )

    def ok(self, *args: str) -> str:
        """Runs `ais *args`; REQUIRES exit 0 and no error printed. Returns stdout."""
        r = self.run(*args)
        assert r.returncode == 0 and not PROBLEM.search(r.stdout + r.stderr), describe(args, r)
        return r.stdout


def describe(args: tuple[str, ...], r: subprocess.CompletedProcess[str]) -> str:
    return f"`ais {' '.join(args)}` exited {r.returncode}:\n{r.stdout}{r.stderr}"


def rows(out: str) -> list[list[str]]:
    """A table the CLI printed (tab-separated, padded), as lists of non-empty cells."""
    cells = ([c.strip() for c in line.split("\t")] for line in out.splitlines())
    return [[c for c in row if c] for row in cells if any(row)]


def props_table(out: str) -> dict[str, str]:
    """A PROPERTY/VALUE table printed with -H: property -> value."""
    table = {}
    for line in out.splitlines():
        if line.strip():
            key, _, value = line.partition("\t")
            table[key.strip()] = value.strip()
    return table
