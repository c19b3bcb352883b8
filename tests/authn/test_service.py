"""The real `aistore-authn` through our `aistore.sdk.authn.AuthNClient` and raw HTTP: login and
tokens (RS256 against the served JWKS), users, roles and clusters, revocation pushed to a
loopback stand-in cluster, key rotation, refusals, and what the log may never hold."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.metadata
import json
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from _authn import (
    KEY_PASS,
    SU_NAME,
    SU_PASS,
    FakeCluster,
    admin_client,
    authn_process,
    call,
    run_to_exit,
    self_signed_cert,
)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore.authn_service.local import LocalAuthN
from aistore.sdk.authn import AuthNClient
from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.authn.errors import (
    AuthNError,
    ErrClusterAlreadyRegistered,
    ErrClusterNotFound,
    ErrRoleAlreadyExists,
    ErrRoleNotFound,
    ErrUserAlreadyExists,
    ErrUserInvalidCredentials,
    ErrUserNotFound,
)

MAX_BODY = 64 * 1024  # the limits of aistore.authn_service.httpd and .listener
MAX_CONNECTIONS = 256


def claims_of(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def verify_with_jwks(url: str, token: str) -> dict[str, Any]:
    """Verify an RS256 token the way a cluster trusting the issuer does: discovery → JWKS."""
    discovery = requests.get(f"{url}/.well-known/openid-configuration", timeout=5).json()
    path = discovery["jwks_uri"].split("/", 3)[3]  # the issuer says localhost; we dial 127.0.0.1
    jwks = jwt.PyJWKSet.from_dict(requests.get(f"{url}/{path}", timeout=5).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in jwks.keys if k.key_id == kid)
    return dict(
        jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            issuer=discovery["issuer"],
            options={"verify_aud": False, "require": ["exp", "iat", "sub", "iss"]},
        )
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def hs256_by_hand(claims: dict[str, Any], kid: str, key: bytes) -> str:
    """An HS256 token keyed with any bytes (PyJWT refuses a PEM as an HMAC key, rightly)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    payload = _b64(json.dumps(claims).encode())
    mac = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(mac)}"


def _installed_script(name: str) -> Path:
    """The console script the installed package put in place (its RECORD says where: next to
    the interpreter in a venv, /usr/local/bin for a system Python's root install)."""
    dist = importlib.metadata.distribution("aistore-embedded")
    for file in dist.files or ():
        if file.name == name:
            return Path(str(dist.locate_file(file))).resolve()
    raise AssertionError(f"{name} is not among the installed files of aistore-embedded")


def test_help_lists_every_flag_and_variable() -> None:
    script = _installed_script("aistore-authn")
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for flag in (
        "--config", "--host", "--port", "--external-url", "--https", "--cert", "--key",
        "--ttl", "--max-token-age", "--private-key-file", "--private-key-pass-file",
        "--rsa-key-bits", "--secret-key-file", "--cluster-ca", "--cluster-timeout", "--log-level",
        "--read-timeout", "--login-lockout", "--version",
        "AIS_AUTHN_SU_NAME", "AIS_AUTHN_SU_PASS", "AIS_AUTHN_SECRET_KEY",
        "AIS_AUTHN_PRIVATE_KEY_PASS", "AIS_AUTHN_CONF_DIR", "AIS_AUTHN_PORT",
    ):  # fmt: skip
        assert flag in out.stdout, flag


def test_ais_authn_command_line_spelling_works(tmp_path: Path) -> None:
    """`-config <dir>` as AIS AuthN takes it (an unknown flag would exit 2 at once)."""
    proc = authn_process(tmp_path)
    command = [c if c != "--config" else "-config" for c in proc.command()]
    with subprocess.Popen(
        command, env=proc.environment(), stderr=subprocess.PIPE, text=True
    ) as run:
        assert run.stderr is not None
        line = run.stderr.readline()
        while line and "aistore-authn serving" not in line:
            line = run.stderr.readline()
        run.terminate()
    assert "aistore-authn serving" in line and (tmp_path / "authn.db").exists()


def test_admin_login_rs256_token_verifies_against_served_jwks(authn: LocalAuthN) -> None:
    client = AuthNClient(authn.url)
    token = client.login(SU_NAME, SU_PASS, expires_in=3600)
    assert client.client.token == token
    claims = verify_with_jwks(authn.url, token)
    assert claims["sub"] == SU_NAME and claims["admin"] is True
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["clusters"] == [] and "buckets" not in claims
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    # The default lifetime is 24h.
    default = claims_of(client.login(SU_NAME, SU_PASS))
    assert default["exp"] - default["iat"] == 24 * 3600


def test_forged_and_tampered_tokens_are_refused(authn: LocalAuthN) -> None:
    token = admin_client(authn.url).client.token
    header, payload, signature = token.split(".")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = jwt.get_unverified_header(token)["kid"]
    forged = jwt.encode(claims_of(token), other, algorithm="RS256", headers={"kid": kid})
    tampered = f"{header}.{payload[:-4]}AAAA.{signature}"
    public_pem = call(authn.url, "GET", "/v1/public-key").json()["public_key"]
    confused = hs256_by_hand(claims_of(token), kid, public_pem.encode())  # RS/HS confusion
    unsigned = hs256_by_hand(claims_of(token), kid, b"").rsplit(".", 1)[0] + "."
    for bad in (forged, tampered, confused, unsigned, "garbage", token + "x"):
        reply = call(authn.url, "GET", "/v1/users", bad)
        assert reply.status_code == 401, reply.text
        assert "invalid token" in reply.json()["message"]
    assert call(authn.url, "GET", "/v1/users", token).status_code == 200


def test_users_roles_clusters_through_our_client(authn: LocalAuthN, cluster: FakeCluster) -> None:
    admin = admin_client(authn.url)
    clusters, roles, users = admin.cluster_manager(), admin.role_manager(), admin.user_manager()

    info = clusters.register("main", [cluster.url])
    assert (info.id, info.alias, info.urls) == (cluster.uuid, "main", [cluster.url])
    # Before registering, the service asked the cluster whether it accepts this signer.
    check = next(r for r in cluster.requests if r.method == "POST")
    assert check.path == "/v1/tokens"
    assert check.body["public_key"] == call(authn.url, "GET", "/v1/public-key").json()["public_key"]
    assert clusters.get(cluster_alias="main").id == cluster.uuid
    assert cluster.uuid in clusters.list().clusters
    with pytest.raises(ErrClusterAlreadyRegistered):
        clusters.register("main", [cluster.url])
    with pytest.raises(ErrClusterNotFound):
        clusters.get(cluster_id="no-such-cluster")

    # The default roles AIS creates for a cluster.
    owner, bucket_owner, guest = (
        roles.get(f"{p}-main") for p in ("ClusterOwner", "BucketOwner", "Guest")
    )
    assert owner.clusters and owner.clusters[0].perm == str((1 << 64) - 1)
    assert bucket_owner.clusters and bucket_owner.clusters[0].perm == str(int(AccessAttr.ACCESS_RW))
    assert guest.clusters and guest.clusters[0].perm == str(int(AccessAttr.ACCESS_RO))
    assert guest.desc == f"Read-only access to buckets in {cluster.uuid}[main]"

    readers = roles.create(
        "readers", "list and read", "main", [AccessAttr.GET, AccessAttr.OBJ_LIST]
    )
    assert readers.clusters and (readers.clusters[0].id, readers.clusters[0].perm) == (
        cluster.uuid,
        "513",
    )
    roles.create("data-rw", "rw on one bucket", "main", [AccessAttr.ACCESS_RW], bucket_name="data")
    with pytest.raises(ErrRoleAlreadyExists):
        roles.create("readers", "again", "main", [AccessAttr.GET])
    with pytest.raises(ErrRoleNotFound):
        roles.get("no-such-role")
    assert {"Admin", "readers", "data-rw", "Guest-main"} <= {r.name for r in roles.list()}

    alice = users.create("alice", ["readers", "data-rw"], "alice-pass")
    assert [r.name for r in alice.roles] == ["readers", "data-rw"]
    assert alice.password is None  # never sent back
    with pytest.raises(ErrUserAlreadyExists):
        users.create("alice", ["readers"], "other")
    with pytest.raises(ErrUserNotFound):
        users.get("bob")
    assert {"admin", "alice"} <= set(users.list())

    token = AuthNClient(authn.url).login("alice", "alice-pass")
    claims = verify_with_jwks(authn.url, token)
    assert claims["admin"] is False and claims["aud"] == [cluster.uuid]
    assert claims["clusters"] == [{"id": cluster.uuid, "perm": "513"}]
    namespace = {"uuid": cluster.uuid, "name": ""}
    assert claims["buckets"] == [
        {"bck": {"name": "data", "provider": "ais", "namespace": namespace}, "perm": "831"}
    ]

    # A role update reaches the next token; a password change retires the old password.
    roles.update("readers", cluster_alias="main", perms=[AccessAttr.ACCESS_RO])
    users.update("alice", password="alice-pass-2")
    with pytest.raises(ErrUserInvalidCredentials):
        AuthNClient(authn.url).login("alice", "alice-pass")
    claims = claims_of(AuthNClient(authn.url).login("alice", "alice-pass-2"))
    assert claims["clusters"] == [{"id": cluster.uuid, "perm": "771"}]

    # Deleting a role takes it from its users.
    roles.delete("data-rw")
    assert [r.name for r in users.get("alice").roles] == ["readers"]
    roles.delete("data-rw", missing_ok=True)
    with pytest.raises(ErrRoleNotFound):
        roles.delete("data-rw")

    updated = clusters.update(cluster.uuid, cluster_alias="primary")
    assert updated.alias == "primary"
    users.delete("alice")
    with pytest.raises(ErrUserNotFound):
        users.delete("alice")
    users.delete("alice", missing_ok=True)
    clusters.delete(cluster_alias="primary")
    assert cluster.uuid not in clusters.list().clusters


def test_a_user_may_read_itself_and_change_only_its_password(authn: LocalAuthN) -> None:
    admin = admin_client(authn.url)
    admin.role_manager().client.request("POST", "roles", json={"name": "plain", "desc": "none"})
    admin.user_manager().create("carol", ["plain"], "carol-pass")
    carol = AuthNClient(authn.url)
    token = carol.login("carol", "carol-pass")
    assert carol.user_manager().get("carol").id == "carol"
    for method, path, body in (
        ("GET", "/v1/users", None),
        ("GET", f"/v1/users/{SU_NAME}", None),
        ("PUT", "/v1/users/carol", {"id": "carol", "roles": [{"name": "Admin"}]}),
        ("POST", "/v1/roles", {"name": "mine", "desc": ""}),
        ("DELETE", "/v1/users/carol", None),
        ("POST", "/v1/rotate-key", None),
        ("GET", "/v1/daemon", None),
    ):
        reply = call(authn.url, method, path, token, json=body)
        assert reply.status_code == 401, (method, path, reply.text)
    reply = call(
        authn.url, "PUT", "/v1/users/carol", token, json={"id": "carol", "pass": "carol-2"}
    )
    assert reply.status_code == 200, reply.text
    assert AuthNClient(authn.url).login("carol", "carol-2")
    # The superuser and the Admin role stay.
    assert call(authn.url, "DELETE", f"/v1/users/{SU_NAME}", admin.client.token).status_code == 403
    assert call(authn.url, "DELETE", "/v1/roles/Admin", admin.client.token).status_code == 403
    reply = call(
        authn.url,
        "POST",
        "/v1/roles",
        admin.client.token,
        json={"name": "x", "desc": "", "admin": True},
    )
    assert reply.status_code == 403


def test_revocation_is_pushed_and_a_down_cluster_blocks_nothing(
    authn: LocalAuthN, cluster: FakeCluster
) -> None:
    admin = admin_client(authn.url)
    admin.cluster_manager().register("live", [cluster.url])
    flaky = FakeCluster("flaky-uuid")
    admin.cluster_manager().register("flaky", [flaky.url])
    port = int(flaky.url.rsplit(":", 1)[1])
    flaky.close()  # down from now on

    victim = AuthNClient(authn.url)
    token = victim.login(SU_NAME, SU_PASS)
    started = time.monotonic()
    victim.logout()
    assert time.monotonic() - started < 2.0  # answered at once, whatever the clusters do
    assert victim.client.token == ""
    tokens = cluster.wait_for_push(token)
    assert tokens == [token]
    push = next(r for r in cluster.requests if r.method == "DELETE")
    assert push.body == {"tokens": [token], "version": "0"}
    assert push.headers["Content-Type"] == "application/json"

    # The service still answers while the push to the down cluster waits for a retry ...
    reply = call(authn.url, "GET", "/v1/users", token)
    assert reply.status_code == 401 and "token revoked" in reply.json()["message"]
    assert call(authn.url, "GET", "/v1/users", admin.client.token).status_code == 200
    # ... and the retry lands once the cluster is back on its address.
    back = FakeCluster("flaky-uuid", port=port)
    try:
        assert back.wait_for_push(token, timeout=30) == [token]
    finally:
        back.close()
    assert "revocation push to cluster flaky-uuid failed" in authn.log

    # A cluster registered later receives every revoked token before it is registered.
    late = FakeCluster("late-uuid")
    try:
        admin.cluster_manager().register("late", [late.url])
        assert token in late.pushes()[0]
    finally:
        late.close()
    for alias in ("live", "flaky", "late"):
        admin.cluster_manager().delete(cluster_alias=alias)


def test_a_cluster_refusing_the_signer_is_not_registered(
    authn: LocalAuthN, cluster: FakeCluster
) -> None:
    cluster.signer_status = 400
    admin = admin_client(authn.url)
    with pytest.raises(AuthNError) as err:
        admin.cluster_manager().register("refusing", [cluster.url])
    assert err.value.status_code == 400 and "validate signer" in err.value.message
    assert cluster.uuid not in admin.cluster_manager().list().clusters


def test_a_silent_cluster_costs_a_registration_at_most_the_call_bound(tmp_path: Path) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts connections, never answers
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with authn_process(tmp_path, "--cluster-timeout", "1") as proc:
            admin = admin_client(proc.url)
            started = time.monotonic()
            reply = call(
                proc.url,
                "POST",
                "/v1/clusters",
                admin.client.token,
                json={"id": "s1", "urls": [url]},
            )
            assert reply.status_code == 400 and "validate signer" in reply.json()["message"]
            assert time.monotonic() - started < 5
            clusters = call(proc.url, "GET", "/v1/clusters", admin.client.token).json()
            assert clusters == {"clusters": {}}
    finally:
        silent.close()


def test_key_rotation_keeps_old_tokens_verifying(authn: LocalAuthN) -> None:
    admin = admin_client(authn.url)
    old = admin.client.token
    old_kid = jwt.get_unverified_header(old)["kid"]
    reply = call(authn.url, "POST", "/v1/rotate-key", old)
    assert reply.status_code == 200, reply.text
    new = AuthNClient(authn.url).login(SU_NAME, SU_PASS)
    new_kid = jwt.get_unverified_header(new)["kid"]
    assert new_kid != old_kid
    served = call(authn.url, "GET", "/.well-known/jwks.json")
    assert served.headers["Cache-Control"] == "max-age=300, public"
    kids = [k["kid"] for k in served.json()["keys"]]
    assert kids[0] == new_kid and old_kid in kids
    assert verify_with_jwks(authn.url, old)["sub"] == verify_with_jwks(authn.url, new)["sub"]
    assert call(authn.url, "GET", "/v1/users", old).status_code == 200  # still verifies here
    pem = call(authn.url, "GET", "/v1/public-key").json()["public_key"]
    jwt.decode(new, pem, algorithms=["RS256"], options={"verify_aud": False})


BAD_LOGIN_BODIES = [
    (b'{"password": 5}', "Expected `str`, got `int` - at `$.password`"),
    (b'{"password": "x", "expires_in": "1h"}', "at `$.expires_in`"),
    (b"[]", "Expected `object`"),
    (b'{"password": ', "malformed JSON"),
    (b"\xff\xfe", "malformed JSON"),
    (b"", "empty request body"),
]


@pytest.mark.parametrize(("body", "why"), BAD_LOGIN_BODIES)
def test_malformed_or_wrong_typed_bodies_are_400(authn: LocalAuthN, body: bytes, why: str) -> None:
    reply = call(authn.url, "POST", f"/v1/users/{SU_NAME}", data=body)
    assert reply.status_code == 400 and why in reply.json()["message"], reply.text
    assert reply.json()["status"] == 400 and reply.json()["url_path"] == f"/v1/users/{SU_NAME}"


def test_bad_requests_are_4xx_and_the_service_lives_on(authn: LocalAuthN) -> None:
    token = admin_client(authn.url).client.token
    wrong = call(authn.url, "POST", f"/v1/users/{SU_NAME}", json={"password": "wrong"})
    unknown = call(authn.url, "POST", "/v1/users/nobody", json={"password": "wrong"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["message"] == unknown.json()["message"] == "invalid credentials"
    cases = [
        ("POST", f"/v1/users/{SU_NAME}", None, {"password": ""}, 401),
        ("POST", f"/v1/users/{SU_NAME}", None, {"password": SU_PASS, "expires_in": 10**9}, 400),
        ("POST", f"/v1/users/{SU_NAME}", None, {"password": SU_PASS, "expires_in": -1}, 400),
        ("POST", f"/v1/users/{SU_NAME}", None, {"password": SU_PASS, "expires_in": 10**18}, 400),
        ("POST", "/v1/users", token, {"id": 5, "pass": "p"}, 400),
        ("POST", "/v1/users", token, {"id": "a/b", "pass": "p"}, 400),
        ("POST", "/v1/users", token, {"id": "nopass"}, 400),
        ("POST", "/v1/users", token, {"id": "u1", "pass": "p", "roles": [{"name": "nope"}]}, 404),
        ("POST", "/v1/roles", token, {"name": "r", "clusters": [{"id": "", "perm": "abc"}]}, 400),
        (
            "POST",
            "/v1/roles",
            token,
            {"name": "r", "clusters": [{"id": "", "perm": str(1 << 64)}]},
            400,
        ),
        ("POST", "/v1/roles", token, {"name": "r", "clusters": {"id": ""}}, 400),
        ("POST", "/v1/roles", token, {"name": "r", "buckets": [{"perm": "1"}]}, 400),
        ("POST", "/v1/clusters", token, {"alias": "x", "urls": ["http://h"]}, 400),
        ("POST", "/v1/clusters", token, {"id": "c", "urls": "http://h"}, 400),
        ("DELETE", "/v1/tokens", None, {"token": ""}, 400),
        ("DELETE", "/v1/tokens", None, {"token": "not-a-jwt"}, 401),
        ("GET", "/v1/users", None, None, 401),
        ("GET", "/v1/nothing", token, None, 404),
        ("PATCH", "/v1/users", token, None, 405),
        ("GET", "/v1/tokens", token, None, 405),
        ("GET", "/v1/users/a/b", token, None, 400),
        ("PUT", "/v1/daemon", token, {"auth": {"expiration_time": "soon"}}, 400),
        ("PUT", "/v1/daemon", token, {"auth": {"secret": "new"}}, 400),
    ]
    for method, path, auth, body, status in cases:
        reply = call(authn.url, method, path, auth, json=body)
        assert reply.status_code == status, (method, path, body, reply.text)
        assert reply.json()["message"] and reply.json()["status"] == status
    for header in ("Basic abc", "Bearer", "Bearer ", "bearer " + token, token):
        reply = call(authn.url, "GET", "/v1/users", headers={"Authorization": header})
        assert reply.status_code == 401, header
    big = b'{"password": "' + b"x" * MAX_BODY + b'"}'
    assert call(authn.url, "POST", f"/v1/users/{SU_NAME}", data=big).status_code == 413
    chunked = call(authn.url, "POST", f"/v1/users/{SU_NAME}", data=iter([b'{"password": "x"}']))
    assert chunked.status_code == 411
    assert call(authn.url, "GET", "/v1/users", token).status_code == 200


def raw_exchange(url: str, data: bytes) -> bytes:
    """Send raw bytes on a fresh connection; everything the service answers before closing."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /v1/users/admin HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello", 400),
        (b"POST /v1/users/admin HTTP/1.1\r\nContent-Length: 1_0\r\n\r\n0123456789", 400),
        (b"POST /v1/users/admin HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"GET /v1/roles HTTP/7.1\r\n\r\n", 505),
        (b"GET /v1/roles HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", 431),
        (b"OPTIONS /v1/roles HTTP/1.1\r\n\r\n", 501),
        (b"GET /" + b"x" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
    ],
)
def test_malformed_http_gets_an_ais_error_reply(
    authn: LocalAuthN, request_bytes: bytes, status: int
) -> None:
    reply = raw_exchange(authn.url, request_bytes)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and int(head.split()[1]) == status, reply[:300]
    doc = json.loads(body)
    assert doc["status"] == status and doc["node"] == "AuthN" and doc["message"]
    assert call(authn.url, "GET", "/v1/public-key").status_code == 200


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_FIELDS = (
    *("id", "pass", "password", "name", "desc", "roles", "clusters", "buckets", "admin"),
    *("perm", "bck", "alias", "urls", "token", "expires_in", "auth", "namespace", "provider"),
)
_DOCS = st.dictionaries(st.sampled_from(_FIELDS), _JSON_VALUES, max_size=5) | _JSON_VALUES
_TARGETS = [
    ("POST", "/v1/users/fuzz-login"),  # not the admin: failed logins lock the name they try
    ("POST", "/v1/users"),
    ("PUT", "/v1/users/fuzz-user"),
    ("POST", "/v1/roles"),
    ("PUT", "/v1/roles/fuzz-role"),
    ("POST", "/v1/clusters"),
    ("PUT", "/v1/clusters/fuzz-cluster"),
    ("DELETE", "/v1/tokens"),
    ("PUT", "/v1/daemon"),
]


def test_no_body_gets_a_5xx(authn: LocalAuthN) -> None:
    """Arbitrary JSON (and bytes) to every endpoint that reads a body, as the admin: refused
    with a 4xx or accepted, never a 5xx; the service answers normally afterwards."""
    token = admin_client(authn.url).client.token
    call(authn.url, "POST", "/v1/roles", token, json={"name": "fuzz-role", "desc": ""})
    call(authn.url, "POST", "/v1/users", token, json={"id": "fuzz-login", "pass": "fuzz-pass"})
    seen: list[int] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(target=st.sampled_from(_TARGETS), doc=_DOCS, raw=st.none() | st.binary(max_size=64))
    def one(target: tuple[str, str], doc: object, raw: bytes | None) -> None:
        method, path = target
        body = raw if raw is not None else json.dumps(doc).encode()
        reply = call(authn.url, method, path, token, data=body)
        seen.append(reply.status_code)
        assert reply.status_code < 500, (method, path, body[:200], reply.text)

    one()
    assert any(400 <= status < 500 for status in seen)
    assert call(authn.url, "GET", "/v1/users", token).status_code == 200
    call(authn.url, "DELETE", "/v1/users/fuzz-user", token)
    call(authn.url, "DELETE", "/v1/users/fuzz-login", token)
    call(authn.url, "PUT", "/v1/daemon", token, json={"auth": {"expiration_time": "24h"}})


def test_config_shows_and_changes_the_default_lifetime(authn: LocalAuthN) -> None:
    token = admin_client(authn.url).client.token
    conf = call(authn.url, "GET", "/v1/daemon", token).json()
    assert conf["net"]["http"]["port"] == int(authn.url.rsplit(":", 1)[1])
    assert conf["auth"]["expiration_time"] == "24h0m0s" and conf["auth"]["public_key"]
    assert call(authn.url, "PUT", "/v1/daemon", token, json={"auth": {"expiration_time": "2h"}}).ok
    claims = claims_of(AuthNClient(authn.url).login(SU_NAME, SU_PASS))
    assert claims["exp"] - claims["iat"] == 7200
    assert call(authn.url, "PUT", "/v1/daemon", token, json={"auth": {"expiration_time": "24h"}}).ok


def test_concurrent_requests_each_get_a_consistent_answer(authn: LocalAuthN) -> None:
    token = admin_client(authn.url).client.token

    def life_of_a_user(i: int) -> tuple[int, int, int, int]:
        user = f"conc-{i}"
        made = call(authn.url, "POST", "/v1/users", token, json={"id": user, "pass": f"pw-{i}"})
        login = call(authn.url, "POST", f"/v1/users/{user}", json={"password": f"pw-{i}"})
        own = call(authn.url, "GET", f"/v1/users/{user}", login.json().get("token"))
        gone = call(authn.url, "DELETE", f"/v1/users/{user}", token)
        return made.status_code, login.status_code, own.status_code, gone.status_code

    def same_role(_: int) -> int:
        return call(
            authn.url, "POST", "/v1/roles", token, json={"name": "contested", "desc": ""}
        ).status_code

    with ThreadPoolExecutor(16) as pool:
        assert set(pool.map(life_of_a_user, range(32))) == {(200, 200, 200, 200)}
        assert sorted(pool.map(same_role, range(16))) == [200] + [409] * 15
    call(authn.url, "DELETE", "/v1/roles/contested", token)


def test_connections_beyond_the_limit_get_503(authn: LocalAuthN) -> None:
    host, port = authn.url.removeprefix("http://").split(":")
    held = [socket.create_connection((host, int(port)), timeout=10) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)  # every one of them accepted and holding a slot
        with socket.create_connection((host, int(port)), timeout=10) as extra:
            assert extra.recv(64).startswith(b"HTTP/1.1 503")
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 10
    while call(authn.url, "GET", "/v1/public-key").status_code != 200:  # slots come back
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_the_log_holds_no_password_and_no_token(authn: LocalAuthN) -> None:
    """Runs after the module's other tests (file order): everything they did is in the log."""
    text = authn.log
    assert "aistore-authn serving http://127.0.0.1:" in text
    assert "plain HTTP on a non-loopback address" not in text  # bound to loopback
    for secret in (SU_PASS, KEY_PASS, "alice-pass", "carol-pass", "eyJ"):
        assert secret not in text, secret


def test_state_persists_across_restarts_and_the_key_needs_its_passphrase(
    tmp_path: Path, cluster: FakeCluster
) -> None:
    with authn_process(tmp_path) as first:
        admin = admin_client(first.url)
        admin.cluster_manager().register("main", [cluster.url])
        admin.role_manager().create("readers", "r", "main", [AccessAttr.GET])
        admin.user_manager().create("dave", ["readers"], "dave-pass")
        token = AuthNClient(first.url).login("dave", "dave-pass")
        kid = jwt.get_unverified_header(token)["kid"]
    key_file, db_file = tmp_path / "authn_key.pem", tmp_path / "authn.db"
    assert key_file.read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    assert key_file.stat().st_mode & 0o777 == 0o600 and db_file.stat().st_mode & 0o777 == 0o600
    with pytest.raises(TypeError):
        serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    with pytest.raises(ValueError):
        serialization.load_pem_private_key(key_file.read_bytes(), password=b"not the passphrase")
    assert b"dave-pass" not in db_file.read_bytes()

    with authn_process(tmp_path) as second:
        again = AuthNClient(second.url)
        assert jwt.get_unverified_header(again.login("dave", "dave-pass"))["kid"] == kid
        assert [r.name for r in again.user_manager().get("dave").roles] == ["readers"]
        assert call(second.url, "GET", "/v1/users/dave", token).status_code == 200  # old token
        assert second.url and "new database" not in second.log
        assert cluster.uuid in admin_client(second.url).cluster_manager().list().clusters

    refused = run_to_exit(tmp_path, env={"AIS_AUTHN_PRIVATE_KEY_PASS": "wrong-passphrase"})
    assert refused.returncode != 0 and "cannot decrypt private key file" in refused.stderr


@pytest.mark.parametrize(
    ("env", "args", "why"),
    [
        ({"AIS_AUTHN_SU_PASS": ""}, (), "AIS_AUTHN_SU_PASS"),
        ({"AIS_AUTHN_PRIVATE_KEY_PASS": "short"}, (), "AIS_AUTHN_PRIVATE_KEY_PASS"),
        ({}, ("--https",), "--https needs --cert and --key"),
        ({}, ("--ttl", "tomorrow"), "invalid duration"),
        ({}, ("--rsa-key-bits", "1024"), "at least 2048 bits"),
        ({}, ("--port", "70000"), "port 70000 is out of range"),
        ({}, ("--cluster-timeout", "0"), "--cluster-timeout must be positive"),
        ({}, ("--read-timeout", "0s"), "--read-timeout must be positive"),
        ({}, ("--login-lockout", "soon"), "--login-lockout: invalid duration"),
    ],
)
def test_startup_refusals_say_why(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], why: str
) -> None:
    out = run_to_exit(tmp_path, *args, env=env)
    assert out.returncode != 0 and why in out.stderr, out.stderr


@pytest.mark.parametrize(
    ("conf", "why"),
    [
        ("{not json", "cannot read"),
        ("[1]", "expected a JSON object"),
        ('{"auth": {"rsa_key_bits": "many"}}', "RSA key bits: expected an integer"),
        ('{"auth": {"expiration_time": 5}}', "token lifetime: expected a duration"),
        ('{"net": {"http": {"server_crt": 5}}}', "net.http.server_crt must be a string"),
    ],
)
def test_a_bad_authn_json_is_refused(tmp_path: Path, conf: str, why: str) -> None:
    """AIS AuthN's config file is read too (port, TLS, lifetime, key size, secret)."""
    (tmp_path / "authn.json").write_text(conf)
    out = run_to_exit(tmp_path)
    assert out.returncode != 0 and why in out.stderr, out.stderr


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        out = run_to_exit(tmp_path, "--port", port)
    assert out.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in out.stderr, out.stderr


def test_a_corrupt_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / "authn.db").write_bytes(b"this is not a SQLite database" * 100)
    out = run_to_exit(tmp_path)
    assert out.returncode != 0 and "cannot use the database" in out.stderr, out.stderr


def test_hs256_with_the_shared_secret(tmp_path: Path, cluster: FakeCluster) -> None:
    secret = "a-shared-hmac-secret-of-32-bytes-or-more"
    with authn_process(tmp_path, secret_key=secret) as proc:
        admin = admin_client(proc.url)
        token = admin.client.token
        assert jwt.get_unverified_header(token) == {"alg": "HS256", "typ": "JWT"}
        claims = jwt.decode(token, secret, algorithms=["HS256"], options={"verify_aud": False})
        assert claims["sub"] == SU_NAME and claims["admin"] is True
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(token, "another-secret-also-32-bytes-long!!", algorithms=["HS256"])
        for method, path in (
            ("GET", "/.well-known/jwks.json"),
            ("GET", "/v1/public-key"),
            ("POST", "/v1/rotate-key"),
        ):
            assert call(proc.url, method, path, token).status_code == 400, path
        admin.cluster_manager().register("main", [cluster.url])
        check = next(r for r in cluster.requests if r.method == "POST")
        assert check.body["secret"] == hashlib.sha256(secret.encode()).hexdigest()
        assert check.body["public_key"] is None
        assert not (tmp_path / "authn_key.pem").exists()


def test_plain_http_on_all_interfaces_is_warned_about(tmp_path: Path) -> None:
    with authn_process(tmp_path, "--host", "0.0.0.0") as proc:  # the last --host wins
        deadline = time.monotonic() + 10
        while "plain HTTP on a non-loopback address (0.0.0.0)" not in proc.log:
            assert time.monotonic() < deadline, proc.log
            time.sleep(0.05)
        assert "WARNING" in proc.log and call(proc.url, "GET", "/v1/public-key").ok


def test_https_with_a_certificate(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    with authn_process(
        tmp_path / "conf", "--https", "--cert", str(cert), "--key", str(key)
    ) as proc:
        assert proc.url.startswith("https://127.0.0.1:")
        client = AuthNClient(proc.url, ca_cert=str(cert))
        claims = claims_of(client.login(SU_NAME, SU_PASS))
        assert claims["iss"].startswith("https://localhost:")
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(proc.url + "/v1/public-key", timeout=5)  # not trusted without the CA
        # Plain HTTP to the TLS port is refused, and the service lives on.
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(proc.url.replace("https", "http") + "/v1/public-key", timeout=5)
        assert requests.get(proc.url + "/v1/public-key", timeout=5, verify=str(cert)).ok
