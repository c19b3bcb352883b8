"""Remote az:// buckets against a real Azure Blob service (Azurite) behind _s3.py's fault proxy:
one Azurite, proxy and aistore-server per module (_azure.remote_azure); each test makes its own
container. The proxy counts what the server sends to Azure and injects faults. Every test here
is skipped, saying why, when Azurite or azure-storage-blob is not installed."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest
from _azure import AzureBlobs, RemoteAzure, remote_azure
from _s3 import FaultProxy

from aistore.sdk import Client
from aistore.server import LocalServer

_names = itertools.count()


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteAzure]:
    with remote_azure() as r:
        yield r


@pytest.fixture(scope="module")
def server(remote: RemoteAzure) -> LocalServer:
    return remote.server


@pytest.fixture(scope="module")
def proxy(remote: RemoteAzure) -> FaultProxy:
    return remote.proxy


@pytest.fixture(scope="module")
def azure(remote: RemoteAzure) -> AzureBlobs:
    return remote.azure


@pytest.fixture
def client(remote: RemoteAzure) -> Client:
    """The SDK on the module's server, with the proxy's counts and faults cleared."""
    remote.proxy.reset()
    return remote.server.client()


@pytest.fixture
def bucket(request: pytest.FixtureRequest, azure: AzureBlobs) -> str:
    """A fresh container (the server has never seen it), named after its module (Azure: lower
    case letters, digits and dashes)."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    name = f"{module}-{next(_names)}-{os.getpid()}"
    azure.create_container(name)
    return name
