"""The official SDK's internal seams (`SessionManager`, `RequestClient`, `RetryConfig`,
`get_logger`) used as a user of aistore 2.0.0 uses them: scripts/internals_calls.py runs
unchanged with the official SDK in its venv and with ours, both against our server."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import official_sdk

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "internals_calls.py"


def _failed(result: dict[str, object]) -> str:
    checks = result["checks"]
    assert isinstance(checks, dict) and len(checks) == 7, checks
    return "\n".join(f"--- {name}\n{err}" for name, err in checks.items() if err != "ok")


def test_official_sdk_runs_the_script(ais_server: LocalServer, official_python: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    result = official_sdk.run_script(SCRIPT.read_text(), ais_server.endpoint, [tag], timeout=120)
    assert result["version"] == official_sdk.OFFICIAL_SDK_VERSION
    assert not _failed(result), "official SDK:\n" + _failed(result)


def test_our_sdk_runs_the_same_script(ais_server: LocalServer, tmp_path: Path) -> None:
    # -I and a scratch cwd: the installed package, never the source tree's aistore/
    tag = uuid.uuid4().hex[:10]
    res = subprocess.run(
        [sys.executable, "-I", str(SCRIPT), ais_server.endpoint, tag],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    result = json.loads(res.stdout.strip().splitlines()[-1])
    assert not _failed(result), "our SDK:\n" + _failed(result)
