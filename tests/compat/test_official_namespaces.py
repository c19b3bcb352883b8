"""The official SDK (PyPI aistore==2.0.0, its own venv) with namespaces against our server: a
local namespace and a second server of ours attached as a remote AIS cluster
(scripts/namespace_calls.py reports one verdict per check)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import official_sdk
import pytest
import requests

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "namespace_calls.py"
ALIAS = "second"


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[LocalServer, LocalServer]]:
    with LocalServer(num_mountpaths=1) as remote, LocalServer(num_mountpaths=1) as local:
        r = requests.put(
            f"{local.endpoint}/v1/cluster/attach",
            params={"what": "remote"},
            headers={"Ais-Remote-Ais-Alias": ALIAS, "Ais-Remote-Ais-Url": remote.endpoint},
            timeout=30,
        )
        r.raise_for_status()
        yield local, remote


def test_official_sdk_namespaces(
    servers: tuple[LocalServer, LocalServer], official_python: Path
) -> None:
    local, remote = servers
    tag = uuid.uuid4().hex[:8]
    remote_bucket = f"rb{tag}"
    bck = remote.client().bucket(remote_bucket).create()
    bck.object("r.txt").get_writer().put_content(b"remote bytes")
    result = official_sdk.run_script(
        SCRIPT.read_text(), local.endpoint, [tag, ALIAS, remote_bucket], timeout=240
    )
    failed = {name: err for name, err in result.items() if err != "ok"}
    assert len(result) == 4 and not failed, "official SDK checks failed:\n" + "\n".join(
        f"--- {name}\n{err}" for name, err in failed.items()
    )
    assert b"".join(bck.object("w.txt").get_reader()) == b"written through"
