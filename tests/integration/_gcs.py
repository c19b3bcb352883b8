"""A real GCS JSON API for tests: gcp-storage-emulator on loopback, behind _s3.py's fault proxy.

The server reaches the emulator through the proxy (STORAGE_EMULATOR_HOST, no auth), so tests
count the requests it sends and inject faults; the tests' own view of "GCS" (`GcsJson`) talks
plain HTTP to the emulator's JSON API, past the proxy.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _s3 import FaultProxy, LoopbackService

from aistore.server import LocalServer

PROJECT = "test-project"


class GcsEmulator(LoopbackService):
    """``gcp-storage-emulator start --in-memory`` on a free loopback port."""

    name = "gcp-storage-emulator"

    def command(self) -> list[str]:
        exe = Path(sys.executable).with_name("gcp-storage-emulator")
        cmd = [str(exe)] if exe.exists() else ["gcp-storage-emulator"]
        return [*cmd, "start", "--host", "127.0.0.1", "--port", str(self.port), "--in-memory", "-q"]


class GcsJson:
    """Plain HTTP against the emulator's JSON API: what the tests see of "GCS"."""

    def __init__(self, port: int) -> None:
        self.port = port

    def _call(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    @staticmethod
    def _o(bucket: str, name: str) -> str:
        return f"/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}"

    def create_bucket(self, bucket: str) -> None:
        status, body = self._call(
            "POST",
            f"/storage/v1/b?project={PROJECT}",
            json.dumps({"name": bucket}).encode(),
            {"Content-Type": "application/json"},
        )
        assert status == 200, body

    def put(self, bucket: str, name: str, data: bytes) -> dict[str, Any]:
        """A media upload; the object's resource."""
        q = urllib.parse.urlencode({"uploadType": "media", "name": name})
        status, body = self._call(
            "POST",
            f"/upload/storage/v1/b/{bucket}/o?{q}",
            data,
            {"Content-Type": "application/octet-stream"},
        )
        assert status == 200, body
        return dict(json.loads(body))

    def meta(self, bucket: str, name: str) -> dict[str, Any] | None:
        status, body = self._call("GET", self._o(bucket, name))
        return dict(json.loads(body)) if status == 200 else None

    def get(self, bucket: str, name: str) -> bytes | None:
        status, body = self._call("GET", self._o(bucket, name) + "?alt=media")
        return body if status == 200 else None

    def delete(self, bucket: str, name: str) -> None:
        status, body = self._call("DELETE", self._o(bucket, name))
        assert status in (200, 204), body

    def names(self, bucket: str) -> list[str]:
        status, body = self._call("GET", f"/storage/v1/b/{bucket}/o")
        assert status == 200, body
        return sorted(o["name"] for o in json.loads(body).get("items") or [])


@dataclass
class RemoteGcs:
    """An aistore-server whose gs:// buckets live in the emulator, reached through the proxy."""

    emulator: GcsEmulator
    proxy: FaultProxy
    server: LocalServer
    gcs: GcsJson  # straight to the emulator (not counted by the proxy)


@contextlib.contextmanager
def remote_gcs(num_mountpaths: int = 2, args: tuple[str, ...] = ()) -> Iterator[RemoteGcs]:
    """The emulator, the proxy in front of it and an aistore-server using it as GCS (no auth,
    project PROJECT); all stopped after."""
    emulator = GcsEmulator().start()
    proxy = FaultProxy(emulator.port)
    try:
        env = {
            "STORAGE_EMULATOR_HOST": proxy.endpoint,
            "GOOGLE_CLOUD_PROJECT": PROJECT,
            "GOOGLE_APPLICATION_CREDENTIALS": "",  # (the emulator wins anyway)
        }
        with LocalServer(num_mountpaths=num_mountpaths, env=env, args=args) as srv:
            yield RemoteGcs(emulator, proxy, srv, GcsJson(emulator.port))
    finally:
        proxy.close()
        emulator.stop()
