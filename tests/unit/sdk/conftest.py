"""Fixtures of the SDK unit tests: a fake server (plain and TLS) and a client for it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test modules import the helpers in _fakes.py (importlib mode puts no test dir on sys.path).
sys.path.insert(0, str(Path(__file__).parent))

from _fakes import FakeServer, fast_retry_config  # noqa: E402

from aistore import Client  # noqa: E402


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer()
    yield srv
    srv.close()


@pytest.fixture
def client(server: FakeServer) -> Client:
    return Client(server.url, retry_config=fast_retry_config(), timeout=(2, 5))


@pytest.fixture(scope="session")
def tls_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    d: Path = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


@pytest.fixture
def tls_server(tls_cert: tuple[str, str]) -> Iterator[FakeServer]:
    srv = FakeServer(tls=tls_cert)
    yield srv
    srv.close()
