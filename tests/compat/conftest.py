"""Fixtures of the compatibility tests: the official SDK's venv, built once and cached."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Test modules import official_sdk.py (importlib mode puts no test dir on sys.path).
sys.path.insert(0, str(Path(__file__).parent))

import official_sdk  # noqa: E402


@pytest.fixture(scope="session")
def official_python() -> Path:
    """Interpreter of the official SDK's venv; skips only when PyPI is unreachable."""
    try:
        return official_sdk.ensure_venv()
    except official_sdk.PyPIUnreachable as e:
        pytest.skip(f"official aistore=={official_sdk.OFFICIAL_SDK_VERSION} not installable: {e}")
