"""The AuthN service and the real storage server together: tokens from `aistore-authn` are
verified by the server with the service's RSA public key (`LocalServer(authn=...)`) or as an
OIDC issuer over HTTPS (discovery + JWKS), roles narrow what a user may do, a logout is pushed to
the server and refused there, and a signing-key rotation needs no server restart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from _authn import self_signed_cert

from aistore.authn_service.local import LocalAuthN
from aistore.sdk import Client
from aistore.sdk.authn import AuthNClient
from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.errors import AISError
from aistore.server import LocalServer


def _login(authn: LocalAuthN, user: str, password: str, ca: Path | None = None) -> AuthNClient:
    client = AuthNClient(authn.url, ca_cert=str(ca) if ca else None)
    client.login(user, password)
    return client


def _status(fn: object) -> int:
    try:
        fn()  # type: ignore[operator]
    except AISError as e:
        return e.status_code
    return 200


@pytest.fixture(scope="module")
def rsa_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalAuthN, LocalServer]]:
    with (
        LocalAuthN(tmp_path_factory.mktemp("authn")) as authn,
        LocalServer(num_mountpaths=1, authn=authn) as srv,
    ):
        yield authn, srv


def test_roles_and_logout_with_the_rsa_key(rsa_pair: tuple[LocalAuthN, LocalServer]) -> None:
    authn, srv = rsa_pair
    admin = _login(authn, authn.su_name, authn.su_pass)
    assert admin.client.token
    cluster = Client(srv.endpoint, token=admin.client.token)
    cluster.bucket("shared").create().object("doc").get_writer().put_content(b"data")
    # Register the server (AuthN checks its key over POST /v1/tokens), then a read-only user.
    admin.cluster_manager().register("local", [srv.endpoint])
    admin.role_manager().create(
        "reader", "read-only", "local", [AccessAttr.ACCESS_RO, AccessAttr.LIST_BUCKETS]
    )
    admin.user_manager().create("reader1", ["reader"], "pw-reader1")
    reader = _login(authn, "reader1", "pw-reader1")
    as_reader = Client(srv.endpoint, token=reader.client.token)
    assert as_reader.bucket("shared").object("doc").get_reader().read_all() == b"data"
    assert (
        _status(lambda: as_reader.bucket("shared").object("new").get_writer().put_content(b"x"))
        == 403
    )
    assert _status(lambda: as_reader.bucket("shared").object("doc").delete()) == 403
    # Logout revokes the token at AuthN, which pushes it to the server.
    reader.logout()
    deadline = time.monotonic() + 20  # the push is asynchronous
    read = lambda: as_reader.bucket("shared").object("doc").get_reader().read_all()  # noqa: E731
    while _status(read) == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _status(read) == 401
    assert (
        _status(lambda: Client(srv.endpoint).bucket("shared").object("doc").get_reader().read_all())
        == 401
    )


@pytest.fixture(scope="module")
def oidc_pair(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LocalAuthN, LocalServer, Path]]:
    d = tmp_path_factory.mktemp("oidc")
    cert, key = self_signed_cert(d)
    with LocalAuthN(d / "conf", args=["--https", "--cert", str(cert), "--key", str(key)]) as authn:
        # The issuer as its tokens name it (AuthN's external URL: https://localhost:<port>).
        issuer = requests.get(
            f"{authn.url}/.well-known/openid-configuration", verify=str(cert), timeout=10
        ).json()["issuer"]
        args = ["--auth-required", "--auth-oidc-issuer", issuer, "--auth-oidc-ca", str(cert)]
        with LocalServer(num_mountpaths=1, args=args) as srv:
            yield authn, srv, cert


def test_oidc_issuer_and_key_rotation_without_restart(
    oidc_pair: tuple[LocalAuthN, LocalServer, Path],
) -> None:
    authn, srv, ca = oidc_pair
    first = _login(authn, authn.su_name, authn.su_pass, ca).client.token
    cluster = Client(srv.endpoint, token=first)
    cluster.bucket("oidc").create().object("o").get_writer().put_content(b"v1")
    # The issuer rotates its signing key: a token signed with the new key (new kid) is accepted
    # at once, and the old key keeps verifying its unexpired tokens.
    r = requests.post(
        f"{authn.url}/v1/rotate-key",
        headers={"Authorization": f"Bearer {first}"},
        verify=str(ca),
        timeout=10,
    )
    assert r.status_code == 200, r.text
    second = _login(authn, authn.su_name, authn.su_pass, ca).client.token
    assert second != first
    assert (
        Client(srv.endpoint, token=second).bucket("oidc").object("o").get_reader().read_all()
        == b"v1"
    )
    assert (
        Client(srv.endpoint, token=first).bucket("oidc").object("o").get_reader().read_all()
        == b"v1"
    )


def test_oidc_refuses_other_issuers_and_unknown_kids(
    oidc_pair: tuple[LocalAuthN, LocalServer, Path],
) -> None:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    authn, srv, _ = oidc_pair
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    issuer = authn.url.replace("127.0.0.1", "localhost")
    for iss, kid, why in (
        ("https://evil.example", "k1", "not trusted"),
        (issuer, "no-such-kid", "unknown 'kid'"),
        (issuer, "../etc", "invalid 'kid'"),
        (issuer, None, "missing 'kid'"),
    ):
        headers = {"kid": kid} if kid else {}
        tok = jwt.encode(
            {"sub": "mallory", "iss": iss, "exp": now + 60, "admin": True},
            key,
            "RS256",
            headers=headers,
        )
        r = requests.get(
            srv.endpoint + "/v1/buckets/", headers={"Authorization": f"Bearer {tok}"}, timeout=30
        )
        assert r.status_code == 401 and why in r.json()["message"], (iss, kid, r.text)


def test_the_public_key_is_no_hmac_secret(rsa_pair: tuple[LocalAuthN, LocalServer]) -> None:
    """The classic forgery: an HS256 token keyed with the server's RSA public key."""
    import base64
    import hashlib
    import hmac
    import json

    authn, srv = rsa_pair
    public_pem = authn.cluster_env()["AIS_AUTHN_PUBLIC_KEY"]

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    payload = {"sub": "mallory", "admin": True, "exp": int(time.time()) + 60}
    header = json.dumps({"alg": "HS256"}).encode()
    signing_input = f"{b64(header)}.{b64(json.dumps(payload).encode())}"
    sig = hmac.new(public_pem.encode(), signing_input.encode(), hashlib.sha256).digest()
    r = requests.get(
        srv.endpoint + "/v1/buckets/",
        headers={"Authorization": f"Bearer {signing_input}.{b64(sig)}"},
        timeout=10,
    )
    assert r.status_code == 401 and "not configured" in r.json()["message"], r.text


def test_dataloader_epochs_with_auth_and_tls(tmp_path: Path) -> None:
    """Tokens from AuthN over a TLS server: DataLoader workers read an epoch, twice."""
    torch_data = pytest.importorskip("torch.utils.data")
    from aistore.pytorch import AISMapDataset

    with (
        LocalAuthN(tmp_path / "authn") as authn,
        LocalServer(num_mountpaths=1, authn=authn, tls=True) as srv,
    ):
        token = _login(authn, authn.su_name, authn.su_pass).client.token
        bucket = srv.client(token=token).bucket("epochs").create()
        want = {f"s{i:03}": bytes([i]) * (100 + i) for i in range(40)}
        for name, data in want.items():
            bucket.object(name).get_writer().put_content(data)
        loader = torch_data.DataLoader(
            AISMapDataset(bucket), batch_size=8, num_workers=2, collate_fn=lambda b: b
        )
        for _ in range(2):
            got = {name: data for batch in loader for name, data in batch}
            assert got == want
        assert _status(lambda: srv.client().bucket("epochs").list_all_objects()) == 401
