"""Remote s3:// buckets against a real S3 server (moto in server mode) behind the fault proxy of
_s3.py: one S3 server, proxy and aistore-server per module; each test makes its own S3 bucket.
The proxy counts the requests the server sends to S3 and injects faults (a status, a cut body, a
dead endpoint), so the tests show both what the user sees and what reached the backend."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
from _s3 import FaultProxy, RemoteS3, remote_s3

from aistore.sdk import Client
from aistore.server import LocalServer

_names = itertools.count()


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteS3]:
    with remote_s3() as r:
        yield r


@pytest.fixture(scope="module")
def server(remote: RemoteS3) -> LocalServer:
    return remote.server


@pytest.fixture(scope="module")
def proxy(remote: RemoteS3) -> FaultProxy:
    return remote.proxy


@pytest.fixture(scope="module")
def s3(remote: RemoteS3) -> Any:
    return remote.s3


@pytest.fixture
def client(remote: RemoteS3) -> Client:
    """The SDK on the module's server, with the proxy's counts and faults cleared."""
    remote.proxy.reset()
    return remote.server.client()


@pytest.fixture
def bucket(request: pytest.FixtureRequest, s3: Any) -> str:
    """A fresh S3 bucket (the server has never seen it), named after its module."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    name = f"{module}-{next(_names)}-{os.getpid()}"
    s3.create_bucket(Bucket=name)
    return name
