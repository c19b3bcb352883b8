"""The official AIStore Python SDK (PyPI aistore==2.0.0) against our server: bucket, object,
multi-object, job and cluster management (scripts/parity_calls.py, in the official venv).

The server runs with a promote root the script can write into, as a real target's
/var/lib/ais/promote.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import official_sdk
import pytest

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "parity_calls.py"


def add_webdataset(python: Path) -> None:
    """The official `Bucket.write_dataset` writes shards with webdataset: add it to the venv
    (best effort: without it the script reports that check as skipped)."""
    probe = [str(python), "-I", "-c", "import webdataset"]
    if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "--timeout", "30", "webdataset"], capture_output=True, check=False, timeout=300
    )


@pytest.fixture(scope="module")
def promote_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, Path]]:
    root = tmp_path_factory.mktemp("promote-root")
    data = tmp_path_factory.mktemp("parity-data")
    srv = LocalServer(mountpaths=[data / "mp0", data / "mp1"], promote_root=root).start()
    yield srv, root
    srv.stop()


def test_official_sdk_parity_calls(
    promote_server: tuple[LocalServer, Path], official_python: Path
) -> None:
    srv, root = promote_server
    add_webdataset(official_python)
    tag = uuid.uuid4().hex[:10]
    result = official_sdk.run_script(
        SCRIPT.read_text(), srv.endpoint, [tag, str(root)], timeout=300
    )
    assert result["version"] == official_sdk.OFFICIAL_SDK_VERSION
    checks = result["checks"]
    failed = {name: e for name, e in checks.items() if e != "ok" and not e.startswith("skipped:")}
    assert not failed, "official SDK checks failed:\n" + "\n".join(
        f"--- {name}\n{e}" for name, e in failed.items()
    )
    assert len(checks) >= 20, sorted(checks)
