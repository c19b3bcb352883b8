"""gs:// buckets with a service-account key (GOOGLE_APPLICATION_CREDENTIALS), as on real GCS: the
server signs an RS256 JWT bearer grant with the key, exchanges it at the key's token_uri (a token
endpoint in this test that verifies the assertion with the key's public half) and sends the
access token with every request (the proxy in front of the emulator refuses any other). The
endpoint is AIS_GCP_URL (the emulator behind the proxy), since storage.googleapis.com is not
reachable here. Also: a server with neither variable refuses gs:// buckets, naming them."""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jwt
import pytest
from _gcs import PROJECT, GcsEmulator, GcsJson
from _s3 import FaultProxy, free_port
from _util import raw_request
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from aistore.sdk import Client
from aistore.sdk.errors import AISError
from aistore.server import LocalServer

EMAIL = "loader@test-project.iam.gserviceaccount.com"
SCOPE = "https://www.googleapis.com/auth/devstorage.full_control"


@dataclass
class TokenEndpoint:
    """An OAuth 2.0 token endpoint: checks the JWT bearer grant, answers an access token."""

    public_pem: bytes
    port: int = field(default_factory=free_port)
    refuse: bool = False  # answer 400 invalid_grant
    issued: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each refused grant was refused

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/token"

    def __post_init__(self) -> None:
        ep = self
        counter = itertools.count(1)

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                status, reply = 200, {}
                try:
                    assert self.headers.get("Content-Type") == "application/x-www-form-urlencoded"
                    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
                    claims = jwt.decode(
                        form["assertion"][0],
                        ep.public_pem,
                        algorithms=["RS256"],
                        audience=ep.url,
                        options={"require": ["iss", "aud", "iat", "exp"]},
                    )
                    assert claims["iss"] == EMAIL and claims["scope"] == SCOPE
                    assert claims["exp"] - claims["iat"] == 3600
                    assert jwt.get_unverified_header(form["assertion"][0])["kid"] == "key-1"
                    if ep.refuse:
                        raise AssertionError("refused by the test")
                    token = f"tok-{next(counter)}"
                    ep.issued.append(token)
                    reply = {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}
                except (AssertionError, KeyError, jwt.PyJWTError) as e:
                    ep.rejected.append(repr(e))
                    status, reply = 400, {"error": "invalid_grant", "error_description": str(e)}
                body = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Stack:
    server: LocalServer
    proxy: FaultProxy
    tokens: TokenEndpoint
    gcs: GcsJson


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    tokens = TokenEndpoint(public_pem)
    creds: Path = tmp_path_factory.mktemp("gcs-sa") / "key.json"
    creds.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": PROJECT,
                "private_key_id": "key-1",
                "private_key": private_pem.decode(),
                "client_email": EMAIL,
                "token_uri": tokens.url,
            }
        )
    )
    emulator = GcsEmulator().start()
    proxy = FaultProxy(emulator.port)
    try:
        env = {
            "GOOGLE_APPLICATION_CREDENTIALS": str(creds),
            "AIS_GCP_URL": proxy.endpoint,
            "STORAGE_EMULATOR_HOST": "",  # (none of the host's)
            "GOOGLE_CLOUD_PROJECT": "",
        }
        with LocalServer(num_mountpaths=1, env=env) as srv:
            yield Stack(srv, proxy, tokens, GcsJson(emulator.port))
    finally:
        proxy.close()
        emulator.stop()
        tokens.close()


def test_requests_carry_a_token_from_the_signed_grant(stack: Stack) -> None:
    stack.gcs.create_bucket("sa-bucket")
    stack.gcs.put("sa-bucket", "a", b"alpha")
    stack.gcs.put("sa-bucket", "b", b"beta")
    client: Client = stack.server.client()
    b = client.bucket("sa-bucket", provider="gcp")

    # The token endpoint refuses: the request fails as unauthorized, naming the token request.
    stack.tokens.refuse = True
    stack.proxy.required_auth = "Bearer tok-1"
    with pytest.raises(AISError) as e:
        b.object("a").get_reader().read_all()
    assert e.value.status_code == 401
    assert "gcp-error[" in str(e.value) and "invalid_grant" in str(e.value)
    assert "PRIVATE KEY" not in str(e.value)
    assert stack.tokens.rejected and stack.tokens.issued == []

    # Granted: every request carries the token (the proxy refuses any other), got once.
    stack.tokens.refuse = False
    stack.tokens.rejected.clear()
    assert b.object("a").get_reader().read_all() == b"alpha"
    assert b.object("b").get_reader().read_all() == b"beta"
    assert sorted(e.name for e in b.list_all_objects()) == ["a", "b"]
    b.object("c").get_writer().put_content(b"gamma")
    assert stack.gcs.get("sa-bucket", "c") == b"gamma"
    assert "sa-bucket" in {m.name for m in client.cluster().list_buckets(provider="gcp")}
    assert stack.tokens.issued == ["tok-1"], "one token for every request until it nears expiry"
    assert stack.tokens.rejected == []
    assert stack.proxy.counts["unauthorized"] == 0


def test_no_gcp_environment_is_a_clear_refusal() -> None:
    env = {"GOOGLE_APPLICATION_CREDENTIALS": "", "STORAGE_EMULATOR_HOST": ""}
    with LocalServer(num_mountpaths=1, env=env) as srv:
        c = srv.client()
        with pytest.raises(AISError) as e:
            c.bucket("anything", provider="gcp").list_all_objects()
        assert e.value.status_code == 404
        assert "GOOGLE_APPLICATION_CREDENTIALS" in str(e.value)
        assert "STORAGE_EMULATOR_HOST" in str(e.value)
        r = raw_request(srv.endpoint, "GET", "/v1/cluster?what=backends")
        assert r.status == 200 and "gcp" not in json.loads(r.body)
