"""The official SDK's ETL calls (aistore==2.0.0, in its venv with this interpreter's site-packages
for fastapi and flask) against our server: classes subclassing the official webservers are
initialized, run inline, offline and single-object, in a pipeline, stopped and deleted."""

from __future__ import annotations

import uuid
from pathlib import Path

import official_sdk
import pytest

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "etl_calls.py"

pytest.importorskip(
    "fastapi", reason="the ETL webservers need the etl extra: pip install aistore-embedded[etl]"
)


def test_official_sdk_etl_calls(ais_server: LocalServer, official_python: Path) -> None:
    result = official_sdk.run_script(
        SCRIPT.read_text(),
        ais_server.endpoint,
        [uuid.uuid4().hex[:8]],
        timeout=300,
        with_torch=True,
    )
    checks = result["checks"]
    failed = {name: err for name, err in checks.items() if err != "ok"}
    assert not failed, "official SDK ETL checks failed:\n" + "\n".join(
        f"--- {name}\n{err}" for name, err in failed.items()
    )
    assert len(checks) == 11
