"""Fixtures of the AuthN service tests: the service in a subprocess, stand-in clusters."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test modules import _authn.py, and official_sdk.py from tests/compat (importlib mode puts no
# test directory on sys.path).
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "compat"))

from _authn import FakeCluster, authn_process  # noqa: E402

from aistore.authn_service.local import LocalAuthN  # noqa: E402


@pytest.fixture(scope="module")
def authn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAuthN]:
    """One RS256 service per module, with its own config directory."""
    with authn_process(tmp_path_factory.mktemp("authn")) as proc:
        yield proc


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    """A stand-in cluster with a fresh UUID."""
    import uuid

    fake = FakeCluster(uuid.uuid4().hex[:10])
    yield fake
    fake.close()
