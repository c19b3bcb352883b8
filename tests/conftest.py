"""Shared fixtures: the real C++ server on an ephemeral port with four temporary mountpaths."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer


@pytest.fixture(scope="session")
def ais_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One server for the whole session (tests use their own buckets)."""
    root = tmp_path_factory.mktemp("ais")
    srv = LocalServer(mountpaths=[root / f"mp{i}" for i in range(4)]).start()
    yield srv
    srv.stop()


@pytest.fixture
def client(ais_server: LocalServer) -> Client:
    return ais_server.client()


@pytest.fixture
def bucket(client: Client) -> Iterator[Bucket]:
    """A fresh bucket per test, destroyed afterwards."""
    bck = client.bucket(f"test-{uuid.uuid4().hex[:12]}").create()
    yield bck
    bck.delete(missing_ok=True)


@pytest.fixture
def spawnable_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets spawned processes import test modules by name (`tests.unit...`): scripts/test.sh runs
    pytest with PYTHONSAFEPATH=1, so the repository root is not on sys.path. Appended, not
    prepended: the source tree's aistore/ must not shadow the installed package."""
    monkeypatch.setattr(sys, "path", [*sys.path, str(Path(__file__).resolve().parents[1])])
