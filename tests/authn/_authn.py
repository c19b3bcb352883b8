"""Test helpers: the real `aistore-authn` as a subprocess, and a recording stand-in cluster.

`authn_process` makes an `aistore.authn_service.LocalAuthN` (the installed service in a
subprocess on an ephemeral loopback port, its log kept: tests check that no secret reaches it)
with known secrets; `admin_client` logs in as its superuser, `call` sends one raw request.

`FakeCluster` is a real loopback HTTP server playing an AIS proxy's side of AuthN: it answers
`GET /v1/daemon?what=smap` (what the SDKs read at registration), `POST /v1/tokens` (the signer
check) and `DELETE /v1/tokens` (revocation pushes), and records every request. The C++ server
gets these endpoints later; this stands in for it.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

from aistore.authn_service.local import LocalAuthN
from aistore.sdk.authn import AuthNClient

SU_NAME = "admin"
SU_PASS = "admin-pass-1"
KEY_PASS = "key-passphrase-1"


def authn_process(conf_dir: Path, *args: str, secret_key: str | None = None) -> LocalAuthN:
    """The service (not started) with this module's superuser and key passphrase."""
    return LocalAuthN(
        conf_dir,
        su_name=SU_NAME,
        su_pass=SU_PASS,
        key_passphrase=KEY_PASS,
        secret_key=secret_key,
        args=args,
    )


def admin_client(url: str) -> AuthNClient:
    """Our SDK's client, logged in as the superuser."""
    client = AuthNClient(url, timeout=(5, 30))
    client.login(SU_NAME, SU_PASS)
    return client


def call(
    url: str, method: str, path: str, token: str | None = None, **kw: Any
) -> requests.Response:
    """One request to the service (with `token` as the bearer, when given)."""
    headers = kw.pop("headers", {})
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return requests.request(method, url + path, headers=headers, timeout=10, **kw)


def run_to_exit(
    conf_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the service expecting it to exit (bad settings): its exit status and output."""
    proc = authn_process(conf_dir, *args)
    return subprocess.run(
        proc.command(),
        env={**proc.environment(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeCluster:
    """A loopback stand-in for an AIS proxy (see the module docstring).

    `token_status` is what `DELETE /v1/tokens` answers (200 by default); `signer_status` what
    `POST /v1/tokens` answers.
    """

    def __init__(self, uuid: str, port: int = 0) -> None:
        self.uuid = uuid
        self.requests: list[Recorded] = []
        self.token_status = 200
        self.signer_status = 200
        self._lock = threading.Lock()
        cluster = self

        class Handler(BaseHTTPRequestHandler):
            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                return json.loads(raw) if raw else None

            def _answer(self, status: int, doc: Any = None) -> None:
                body = json.dumps(doc).encode() if doc is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _record(self, status: int, doc: Any = None) -> None:
                with cluster._lock:
                    cluster.requests.append(
                        Recorded(self.command, self.path, dict(self.headers), self._body())
                    )
                self._answer(status, doc)

            def do_GET(self) -> None:
                if self.path.startswith("/v1/daemon"):
                    node = {"daemon_id": "p1", "daemon_type": "proxy"}
                    smap = {
                        "tmap": {},
                        "pmap": {"p1": node},
                        "proxy_si": node,
                        "uuid": cluster.uuid,
                    }
                    self._record(200, smap)
                else:
                    self._record(404, {"message": "not found"})

            def do_POST(self) -> None:
                self._record(cluster.signer_status)

            def do_DELETE(self) -> None:
                self._record(cluster.token_status)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def pushes(self) -> list[list[str]]:
        """The token lists of the revocation pushes received so far."""
        with self._lock:
            return [
                r.body["tokens"]
                for r in self.requests
                if r.method == "DELETE" and r.path == "/v1/tokens"
            ]

    def wait_for_push(self, token: str, timeout: float = 15.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for tokens in self.pushes():
                if token in tokens:
                    return tokens
            time.sleep(0.05)
        raise AssertionError(f"no revocation push of the token reached {self.url}")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key (PEM files)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    san = x509.SubjectAlternativeName(
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(san, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path
