"""A real Azure Blob service for tests: Azurite on loopback, behind _s3.py's fault proxy.

The server reaches Azurite through the proxy (AIS_AZURE_URL, Shared Key with Azurite's
development account), so tests count the requests it sends and inject faults; the tests' own
view of "Azure" (`AzureBlobs`, Microsoft's azure-storage-blob) talks to Azurite past the proxy.

Azurite comes from npm (`scripts/setup.sh --test` installs it into
$XDG_CACHE_HOME/aistore-embedded/azurite, ~/.cache by default, when npm is there); AZURITE_BLOB
names another `azurite-blob`. Without it, or without azure-storage-blob, its tests are skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _s3 import FaultProxy, LoopbackService

from aistore.server import LocalServer

# Azurite's development account (public: Microsoft's docs print it).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azurite_blob() -> str | None:
    """The `azurite-blob` to run, or None."""
    if os.environ.get("AZURITE_BLOB"):
        return os.environ["AZURITE_BLOB"]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cached = cache / "aistore-embedded/azurite/node_modules/.bin/azurite-blob"
    if cached.exists():
        return str(cached)
    return shutil.which("azurite-blob")


def skip_reason() -> str | None:
    """Why Azurite tests cannot run here, or None."""
    try:
        import azure.storage.blob  # noqa: F401
    except ImportError:
        return "azure-storage-blob is not installed (the dev extra has it)"
    exe = azurite_blob()
    if exe is not None and not os.access(exe, os.X_OK):
        return f"AZURITE_BLOB={exe} is not an executable"
    if exe is None:
        return (
            "Azurite is not installed: npm install azurite into ~/.cache/aistore-embedded/azurite "
            "(scripts/setup.sh --test does when npm is there) or set AZURITE_BLOB"
        )
    return None


class Azurite(LoopbackService):
    """``azurite-blob`` in memory on a free loopback port (strict: no --loose)."""

    name = "azurite"

    def command(self) -> list[str]:
        exe = azurite_blob()
        assert exe is not None
        return [
            exe,
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(self.port),
            "--inMemoryPersistence",
            "--silent",
            "--disableTelemetry",
        ]


class AzureBlobs:
    """Azurite through Microsoft's client, straight (not counted by the proxy): what the tests
    see of "Azure"."""

    def __init__(self, port: int) -> None:
        from azure.storage.blob import BlobServiceClient

        url = f"http://127.0.0.1:{port}/{ACCOUNT}"
        # (the server's x-ms-version: a current client's default is newer than Azurite knows)
        self.service = BlobServiceClient(
            url, credential={"account_name": ACCOUNT, "account_key": KEY}, api_version="2021-08-06"
        )

    def create_container(self, name: str) -> None:
        self.service.create_container(name)

    def put(self, container: str, name: str, data: bytes) -> dict[str, Any]:
        """Upload (one Put Blob, with its Content-MD5 kept); the blob's properties."""
        from azure.storage.blob import ContentSettings

        blob = self.service.get_blob_client(container, name)
        blob.upload_blob(data, overwrite=True, content_settings=ContentSettings())
        return self.props(container, name) or {}

    def props(self, container: str, name: str) -> dict[str, Any] | None:
        """etag (unquoted), md5 (hex, or ""), size; None when there is no such blob."""
        from azure.core.exceptions import ResourceNotFoundError

        try:
            p = self.service.get_blob_client(container, name).get_blob_properties()
        except ResourceNotFoundError:
            return None
        md5 = p.content_settings.content_md5
        return {"etag": p.etag.strip('"'), "md5": bytes(md5).hex() if md5 else "", "size": p.size}

    def get(self, container: str, name: str) -> bytes | None:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            return bytes(self.service.get_blob_client(container, name).download_blob().readall())
        except ResourceNotFoundError:
            return None

    def delete(self, container: str, name: str) -> None:
        self.service.get_blob_client(container, name).delete_blob()

    def names(self, container: str) -> list[str]:
        return sorted(b.name for b in self.service.get_container_client(container).list_blobs())

    def block_count(self, container: str, name: str) -> int:
        """Committed blocks of a block blob (0: it was written in one Put Blob)."""
        blocks = self.service.get_blob_client(container, name).get_block_list("committed")
        return len(blocks[0])


@dataclass
class RemoteAzure:
    """An aistore-server whose az:// buckets live in Azurite, reached through the proxy."""

    azurite: Azurite
    proxy: FaultProxy
    server: LocalServer
    azure: AzureBlobs  # straight to Azurite (not counted by the proxy)


@contextlib.contextmanager
def remote_azure(num_mountpaths: int = 2, args: tuple[str, ...] = ()) -> Iterator[RemoteAzure]:
    """Azurite, the proxy in front of it and an aistore-server using it as Azure (Shared Key,
    Azurite's account); all stopped after. Skips the caller when Azurite cannot run here."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    azurite = Azurite().start()
    proxy = FaultProxy(azurite.port)
    try:
        env = {
            "AZURE_STORAGE_ACCOUNT": ACCOUNT,
            "AZURE_STORAGE_KEY": KEY,
            "AIS_AZURE_URL": f"{proxy.endpoint}/{ACCOUNT}",
        }
        with LocalServer(num_mountpaths=num_mountpaths, env=env, args=args) as srv:
            yield RemoteAzure(azurite, proxy, srv, AzureBlobs(azurite.port))
    finally:
        proxy.close()
        azurite.stop()
