"""Remote gs:// buckets against a real GCS JSON API (gcp-storage-emulator) behind _s3.py's fault
proxy: one emulator, proxy and aistore-server per module (_gcs.remote_gcs); each test makes its
own GCS bucket. The proxy counts what the server sends to GCS and injects faults."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest
from _gcs import GcsJson, RemoteGcs, remote_gcs
from _s3 import FaultProxy

from aistore.sdk import Client
from aistore.server import LocalServer

_names = itertools.count()


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteGcs]:
    with remote_gcs() as r:
        yield r


@pytest.fixture(scope="module")
def server(remote: RemoteGcs) -> LocalServer:
    return remote.server


@pytest.fixture(scope="module")
def proxy(remote: RemoteGcs) -> FaultProxy:
    return remote.proxy


@pytest.fixture(scope="module")
def gcs(remote: RemoteGcs) -> GcsJson:
    return remote.gcs


@pytest.fixture
def client(remote: RemoteGcs) -> Client:
    """The SDK on the module's server, with the proxy's counts and faults cleared."""
    remote.proxy.reset()
    return remote.server.client()


@pytest.fixture
def bucket(request: pytest.FixtureRequest, gcs: GcsJson) -> str:
    """A fresh GCS bucket (the server has never seen it), named after its module."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    name = f"{module}-{next(_names)}-{os.getpid()}"
    gcs.create_bucket(name)
    return name
