"""The official AIStore Python SDK (PyPI aistore==2.0.0) against our server.

The SDK runs in its own venv (both packages import as `aistore`); the script in
scripts/core_calls.py exercises the core calls and reports one verdict per check.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import official_sdk
import requests

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "core_calls.py"
CHUNK_LIMIT = 128 * 1024  # objects of this size or more are stored as chunks
CHUNK_SIZE = 64 * 1024


def create_chunked_bucket(endpoint: str, name: str) -> None:
    """Create a bucket and set its chunk props through the REST API (the official SDK has no
    set-props call)."""
    url = f"{endpoint}/v1/buckets/{name}"
    resp = requests.post(url, json={"action": "create-bck"}, params={"provider": "ais"}, timeout=10)
    resp.raise_for_status()
    chunks = {"objsize_limit": CHUNK_LIMIT, "chunk_size": CHUNK_SIZE}
    resp = requests.patch(
        url,
        json={"action": "set-bprops", "value": {"chunks": chunks}},
        params={"provider": "ais"},
        timeout=10,
    )
    resp.raise_for_status()


def test_official_sdk_core_calls(ais_server: LocalServer, official_python: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    chunked = f"compat-chunked-{tag}"
    create_chunked_bucket(ais_server.endpoint, chunked)
    try:
        result = official_sdk.run_script(
            SCRIPT.read_text(),
            ais_server.endpoint,
            [tag, chunked, str(CHUNK_LIMIT), str(CHUNK_SIZE)],
            timeout=240,
        )
    finally:
        requests.delete(
            f"{ais_server.endpoint}/v1/buckets/{chunked}",
            json={"action": "destroy-bck"},
            params={"provider": "ais"},
            timeout=10,
        )
    assert result["version"] == official_sdk.OFFICIAL_SDK_VERSION
    checks = result["checks"]
    failed = {name: err for name, err in checks.items() if err != "ok"}
    assert not failed, "official SDK checks failed:\n" + "\n".join(
        f"--- {name}\n{err}" for name, err in failed.items()
    )
    assert len(checks) >= 20, sorted(checks)
