"""Access control on the real server: tokens required (--auth-required, HS256 secret from
AIS_AUTHN_SECRET_KEY, a required audience), the permission bits of every endpoint (allowed with
exactly its bits, refused without them), bad tokens, revocation, /v1/tokens, set-config, the SDK
with a token, and the cluster UUID kept across restarts."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
import requests
from _util import call
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistore.sdk import Client
from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.errors import AISError
from aistore.server import LocalServer, find_server_binary

SECRET = "test-secret-" + "0123456789abcdef" * 4
AUD = "test-cluster"
ALL = int(AccessAttr.ACCESS_SU)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**over: Any) -> dict[str, Any]:
    now = int(time.time())
    # Valid a day: ADMIN is signed when the module is collected, and a slow run reaches these
    # tests more than 10 minutes later (every admin call then got 401).
    c: dict[str, Any] = {
        "sub": "alice",
        "aud": [AUD],
        "iat": now,
        "exp": now + 86400,
        "admin": False,
    }
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def token_for(
    perm: int = 0, admin: bool = False, buckets: list[dict[str, Any]] | None = None, **over: Any
) -> str:
    c = claims(admin=admin, clusters=[{"id": "", "perm": str(perm)}], **over)
    if buckets:
        c["buckets"] = buckets
    return jwt.encode(c, SECRET, algorithm="HS256")


ADMIN = token_for(admin=True)


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer(
        num_mountpaths=2,
        args=["--auth-required", "--auth-audience", AUD],
        env={"AIS_AUTHN_SECRET_KEY": SECRET},
    ) as srv:
        yield srv


def admin_call(
    server: LocalServer, method: str, path: str, body: Any = None, **kw: Any
) -> requests.Response:
    r = call(server, method, path, ADMIN, body, **kw)
    assert r.status_code < 300, (method, path, r.status_code, r.text)
    return r


@pytest.fixture(scope="module")
def fixture_objects(server: LocalServer) -> None:
    admin_call(server, "POST", "/v1/buckets/authb", {"action": "create-bck"})
    for name in ("o", "o2"):
        admin_call(server, "PUT", f"/v1/objects/authb/{name}", data=b"payload")


def test_health_and_metrics_need_no_token(server: LocalServer) -> None:
    assert call(server, "GET", "/v1/health").status_code == 200
    assert call(server, "GET", "/metrics").status_code == 200


def test_no_token_is_401_token_required(server: LocalServer, fixture_objects: None) -> None:
    r = call(server, "GET", "/v1/objects/authb/o")
    assert r.status_code == 401
    assert "token required" in r.json()["message"]
    r = call(server, "HEAD", "/v1/objects/authb/o")  # HEAD: the error JSON in Hdr-Error
    assert r.status_code == 401 and "token required" in r.headers["Hdr-Error"]


# Every entry: (label, bits it needs, (method, path, body, params)); the object and bucket names
# are fresh per call where the call consumes them.
Req = tuple[str, str, Any, dict[str, str] | None]
Endpoint = tuple[str, int, Callable[[LocalServer, int], Req]]


def _fresh_object(server: LocalServer, n: int) -> str:
    name = f"tmp-{n}-{time.monotonic_ns()}"
    admin_call(server, "PUT", f"/v1/objects/authb/{name}", data=b"x")
    return name


def _fresh_bucket(server: LocalServer, n: int) -> str:
    name = f"tmpb-{n}-{time.monotonic_ns() % 10**9}"
    admin_call(server, "POST", f"/v1/buckets/{name}", {"action": "create-bck"})
    return name


def _fresh_download(server: LocalServer, n: int) -> str:
    """A download job into authb (its link is refused by the egress guard: it ends at once)."""
    body = {"type": "single", "bucket": {"name": "authb"}, "link": "http://127.0.0.1:9/x"}
    body["object_name"] = f"dl-{n}"
    return str(admin_call(server, "POST", "/v1/download", body).json()["id"])


A = AccessAttr
ENDPOINTS: list[Endpoint] = [
    ("GET object", A.GET, lambda s, n: ("GET", "/v1/objects/authb/o", None, None)),
    ("HEAD object", A.OBJ_HEAD, lambda s, n: ("HEAD", "/v1/objects/authb/o", None, None)),
    ("PUT object", A.PUT, lambda s, n: ("PUT", f"/v1/objects/authb/new{n}", None, None)),
    (
        "APPEND",
        A.APPEND,
        lambda s, n: ("PUT", f"/v1/objects/authb/app{n}", None, {"append_type": "append"}),
    ),
    (
        "DELETE object",
        A.OBJ_DELETE,
        lambda s, n: ("DELETE", f"/v1/objects/authb/{_fresh_object(s, n)}", None, None),
    ),
    (
        "rename object",
        A.OBJ_MOVE,
        lambda s, n: (
            "POST",
            f"/v1/objects/authb/{_fresh_object(s, n)}",
            {"action": "rename-obj", "name": f"r{n}"},
            None,
        ),
    ),
    (
        "PATCH custom metadata",
        A.OBJ_UPDATE,
        lambda s, n: ("PATCH", "/v1/objects/authb/o", {"action": "", "value": {"k": "v"}}, None),
    ),
    ("HEAD bucket", A.BCK_HEAD, lambda s, n: ("HEAD", "/v1/buckets/authb", None, None)),
    (
        "list objects",
        A.OBJ_LIST,
        lambda s, n: ("GET", "/v1/buckets/authb", {"action": "list", "value": {}}, None),
    ),
    (
        "set bucket props",
        A.PATCH,
        lambda s, n: (
            "PATCH",
            "/v1/buckets/authb",
            {"action": "set-bprops", "value": {"versioning": {"enabled": True}}},
            None,
        ),
    ),
    ("list buckets", A.LIST_BUCKETS, lambda s, n: ("GET", "/v1/buckets/", None, None)),
    (
        "show every bucket's inventories",
        A.LIST_BUCKETS,
        lambda s, n: ("GET", "/v1/buckets/", {"action": "show-inventory"}, None),
    ),
    ("cluster smap", A.SHOW_CLUSTER, lambda s, n: ("GET", "/v1/cluster", None, {"what": "smap"})),
    ("node config", A.SHOW_CLUSTER, lambda s, n: ("GET", "/v1/daemon", None, {"what": "config"})),
    (
        "create bucket",
        A.CREATE_BUCKET,
        lambda s, n: (
            "POST",
            f"/v1/buckets/cb{n}-{time.monotonic_ns() % 10**9}",
            {"action": "create-bck"},
            None,
        ),
    ),
    (
        "destroy bucket",
        A.DESTROY_BUCKET,
        lambda s, n: (
            "DELETE",
            f"/v1/buckets/{_fresh_bucket(s, n)}",
            {"action": "destroy-bck"},
            None,
        ),
    ),
    (
        "rename bucket",
        A.MOVE_BUCKET,
        lambda s, n: (
            "POST",
            f"/v1/buckets/{_fresh_bucket(s, n)}",
            {"action": "move-bck", "name": f"mv{n}-{time.monotonic_ns() % 10**9}"},
            None,
        ),
    ),
    (
        "delete list",
        A.OBJ_DELETE,
        lambda s, n: (
            "DELETE",
            "/v1/buckets/authb",
            {"action": "delete-listrange", "value": {"objnames": ["nope"]}},
            None,
        ),
    ),
    (
        # (read-write on the source, and on a destination it creates: CREATE-BUCKET too)
        "copy bucket",
        A.ACCESS_RW | A.CREATE_BUCKET,
        lambda s, n: (
            "POST",
            "/v1/buckets/authb",
            {"action": "copy-bck", "value": {}},
            {"bck_to": f"ais/@#/cp{n}-{time.monotonic_ns() % 10**9}/"},
        ),
    ),
    (
        "GetBatch",
        A.GET,
        lambda s, n: ("GET", "/v1/ml/moss/authb", {"in": [{"objname": "o"}], "mime": ".tar"}, None),
    ),
    ("set-config", A.ADMIN, lambda s, n: ("PUT", "/v1/cluster/setconfig", None, {"features": "0"})),
    (
        "set-config (5.0 path)",
        A.ADMIN,
        lambda s, n: ("PUT", "/v1/cluster/set-config", None, {"features": "0"}),
    ),
    # Remote clusters without the headers naming one: allowed, they reach the handler (400).
    (
        "attach remote cluster",
        A.ADMIN,
        lambda s, n: ("PUT", "/v1/cluster/attach", None, {"what": "remote"}),
    ),
    (
        "detach remote cluster",
        A.ADMIN,
        lambda s, n: ("PUT", "/v1/cluster/detach", None, {"what": "remote"}),
    ),
    # Mountpath actions on no mountpath: allowed, they reach the handler (404), change nothing.
    (
        "attach mountpath",
        A.ADMIN,
        lambda s, n: (
            "PUT",
            "/v1/daemon/mountpaths",
            {"action": "attach-mp", "value": f"/no/mp{n}"},
            None,
        ),
    ),
    (
        "detach mountpath",
        A.ADMIN,
        lambda s, n: (
            "DELETE",
            "/v1/daemon/mountpaths",
            {"action": "detach-mp", "value": f"/no/mp{n}"},
            None,
        ),
    ),
    (
        "disable mountpath",
        A.ADMIN,
        lambda s, n: (
            "POST",
            "/v1/daemon/mountpaths",
            {"action": "disable-mp", "value": f"/no/mp{n}"},
            None,
        ),
    ),
    (
        "start a job",
        A.ADMIN,
        lambda s, n: ("PUT", "/v1/cluster", {"action": "stop", "value": {"kind": "nope"}}, None),
    ),
    ("list ETLs", A.ADMIN, lambda s, n: ("GET", "/v1/etl", None, None)),
    # (an init that gets past the check fails on its message: never starts anything here)
    ("init ETL", A.ADMIN, lambda s, n: ("PUT", "/v1/etl", {"name": "x"}, None)),
    (
        "transform bucket",
        A.ACCESS_RW | A.CREATE_BUCKET,
        lambda s, n: (
            "POST",
            "/v1/buckets/authb",
            {"action": "etl-bck", "value": {"id": "no-such-etl"}},
            {"bck_to": f"ais/@#/etl{n}-{time.monotonic_ns() % 10**9}/"},
        ),
    ),
    (
        # (the body names the bucket: read-write on it)
        "start a download",
        A.ACCESS_RW,
        lambda s, n: (
            "POST",
            "/v1/download",
            {"type": "single", "bucket": {"name": "authb"}, "link": "http://127.0.0.1:9/x"},
            None,
        ),
    ),
    (
        # (and CREATE-BUCKET for a bucket it creates)
        "start a download into a new bucket",
        A.ACCESS_RW | A.CREATE_BUCKET,
        lambda s, n: (
            "POST",
            "/v1/download",
            {
                "type": "single",
                "bucket": {"name": f"dl{n}-{time.monotonic_ns() % 10**9}"},
                "link": "http://127.0.0.1:9/x",
            },
            None,
        ),
    ),
    ("download jobs", A.SHOW_CLUSTER, lambda s, n: ("GET", "/v1/download", {}, None)),
    (
        "abort a download",
        A.ACCESS_RW,
        lambda s, n: ("DELETE", "/v1/download/abort", {"id": _fresh_download(s, n)}, None),
    ),
    (
        "remove a download",
        A.ACCESS_RW,
        lambda s, n: ("DELETE", "/v1/download/remove", {"id": _fresh_download(s, n)}, None),
    ),
    (
        "make-n-copies",
        A.ACCESS_RW,
        lambda s, n: ("POST", "/v1/buckets/authb", {"action": "make-n-copies", "value": 1}, None),
    ),
    (
        "create inventory",
        A.ADMIN,
        lambda s, n: (
            "POST",
            "/v1/buckets/authb",
            {"action": "create-inventory", "name": f"inv{n}", "value": {}},
            None,
        ),
    ),
]


@pytest.mark.parametrize("label,bits,make", ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_permission_matrix(
    server: LocalServer, fixture_objects: None, label: str, bits: int, make: Any
) -> None:
    # Denied: every permission but the ones this endpoint needs.
    method, path, body, params = make(server, 0)
    r = call(server, method, path, token_for(ALL & ~int(bits)), body, params=params)
    assert r.status_code == 403, (label, r.status_code, r.text or r.headers.get("Hdr-Error"))
    text = r.text or r.headers.get("Hdr-Error", "")
    assert "user `alice` has insufficient permissions" in text
    # Allowed: exactly its bits.
    method, path, body, params = make(server, 1)
    r = call(server, method, path, token_for(int(bits)), body, params=params)
    assert r.status_code not in (401, 403), (
        label,
        r.status_code,
        r.text or r.headers.get("Hdr-Error"),
    )


SINGLE_BITS = [int(a) for a in AccessAttr if int(a) & (int(a) - 1) == 0 and int(a) <= int(A.ADMIN)]
_fresh = itertools.count(100)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same examples every run: a failure reproduces
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_every_permission_set_is_allowed_exactly_when_the_table_says(
    server: LocalServer, fixture_objects: None, data: st.DataObject
) -> None:
    label, bits, make = data.draw(st.sampled_from(ENDPOINTS), label="endpoint")
    granted = sum(data.draw(st.sets(st.sampled_from(SINGLE_BITS)), label="granted"))
    method, path, body, params = make(server, next(_fresh))
    r = call(server, method, path, token_for(granted), body, params=params)
    detail = (
        label,
        AccessAttr.describe(granted),
        r.status_code,
        r.text or r.headers.get("Hdr-Error"),
    )
    if granted & int(bits) == int(bits):
        assert r.status_code not in (401, 403), detail
    else:
        assert r.status_code == 403, detail


def test_bucket_grant_narrows_the_cluster_grant(server: LocalServer, fixture_objects: None) -> None:
    uuid = call(server, "GET", "/v1/daemon", ADMIN, params={"what": "smap"}).json()["uuid"]
    grant = [
        {
            "bck": {"name": "authb", "provider": "ais", "namespace": {"uuid": uuid, "name": ""}},
            "perm": str(int(A.GET)),
        }
    ]
    tok = token_for(int(A.ACCESS_RW), buckets=grant)
    assert call(server, "GET", "/v1/objects/authb/o", tok).status_code == 200
    r = call(server, "PUT", "/v1/objects/authb/narrow", tok, data=b"x")
    assert r.status_code == 403 and "PUT" in r.json()["message"]
    # A grant for another cluster's namespace does not apply: the cluster grant decides.
    grant[0]["bck"]["namespace"]["uuid"] = "someother"
    assert (
        call(
            server,
            "PUT",
            "/v1/objects/authb/narrow",
            token_for(int(A.ACCESS_RW), buckets=grant),
            data=b"x",
        ).status_code
        == 200
    )


def _forge(header: dict[str, Any], payload: dict[str, Any], sig: str = "c2ln") -> str:
    return f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}.{sig}"


def _tampered() -> str:
    good = token_for(0)
    h, _, s = good.split(".")
    return f"{h}.{b64url(json.dumps(claims(admin=True)).encode())}.{s}"


def _rsa_token() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode(claims(admin=True), key, algorithm="RS256")


def _hs(secret: str, alg: str = "HS256", **over: Any) -> str:
    return jwt.encode(claims(**{"admin": True, **over}), secret, algorithm=alg)


BAD_AUTH_HEADERS: list[tuple[str, Callable[[], str], str]] = [
    ("basic scheme", lambda: "Basic YWxpY2U6cHc=", "token required"),
    ("empty bearer", lambda: "Bearer ", "token required"),
    ("lowercase scheme", lambda: "bearer " + ADMIN, "token required"),
    ("garbage", lambda: "Bearer not-a-jwt", "invalid token"),
    ("two segments", lambda: "Bearer " + ".".join(ADMIN.split(".")[:2]), "invalid token"),
    ("four segments", lambda: "Bearer " + ADMIN + ".x", "invalid token"),
    (
        "alg none unsigned",
        lambda: "Bearer " + _forge({"alg": "none"}, claims(admin=True), ""),
        "invalid token",
    ),
    (
        "alg none signed",
        lambda: "Bearer " + _forge({"alg": "none"}, claims(admin=True)),
        "invalid token",
    ),
    ("wrong secret", lambda: "Bearer " + _hs("another-secret-" + "x" * 64), "signature is invalid"),
    ("RS256 on an HMAC server", lambda: "Bearer " + _rsa_token(), "not configured"),
    ("HS384", lambda: "Bearer " + _hs(SECRET, "HS384"), "invalid token"),
    ("HS512", lambda: "Bearer " + _hs(SECRET, "HS512"), "invalid token"),
    ("expired", lambda: "Bearer " + _hs(SECRET, exp=int(time.time()) - 5), "token expired"),
    ("missing exp", lambda: "Bearer " + _hs(SECRET, exp=None), "exp"),
    ("exp as a date string", lambda: "Bearer " + _hs(SECRET, exp="2030-01-01T00:00:00Z"), "exp"),
    (
        "nbf in the future",
        lambda: "Bearer " + _hs(SECRET, nbf=int(time.time()) + 600),
        "not valid yet",
    ),
    ("missing sub", lambda: "Bearer " + _hs(SECRET, sub=None), "missing 'sub' claim"),
    ("empty sub", lambda: "Bearer " + _hs(SECRET, sub=""), "missing 'sub' claim"),
    ("admin as a string", lambda: "Bearer " + _hs(SECRET, admin="true"), "admin"),
    (
        "perm as a number",
        lambda: (
            "Bearer "
            + jwt.encode(claims(clusters=[{"id": "", "perm": 831}]), SECRET, algorithm="HS256")
        ),
        "perm",
    ),
    ("tampered payload", lambda: "Bearer " + _tampered(), "signature is invalid"),
    (
        "padded header",
        lambda: "Bearer " + ADMIN.split(".")[0] + "==." + ADMIN.split(".", 1)[1],
        "invalid token",
    ),
    ("truncated signature", lambda: "Bearer " + ADMIN[:-4], "invalid token"),
    ("wrong audience", lambda: "Bearer " + _hs(SECRET, aud=["other-cluster"]), "invalid audience"),
    ("no audience", lambda: "Bearer " + _hs(SECRET, aud=None), "invalid audience"),
    (
        "not JSON",
        lambda: "Bearer " + b64url(b"{not json") + "." + b64url(b"{}") + ".c2ln",
        "invalid token",
    ),
]


@pytest.mark.parametrize("label,header,why", BAD_AUTH_HEADERS, ids=[b[0] for b in BAD_AUTH_HEADERS])
def test_bad_tokens_are_401(
    server: LocalServer, fixture_objects: None, label: str, header: Any, why: str
) -> None:
    r = requests.get(
        server.endpoint + "/v1/objects/authb/o", headers={"Authorization": header()}, timeout=10
    )
    assert r.status_code == 401, (label, r.status_code, r.text)
    body = r.json()
    assert body["status"] == 401 and why in body["message"], body
    assert r.headers["Content-Type"].startswith("application/json")


def test_s3_clients_token_header_is_accepted(server: LocalServer, fixture_objects: None) -> None:
    r = requests.get(
        server.endpoint + "/v1/objects/authb/o", headers={"X-Amz-Security-Token": ADMIN}, timeout=10
    )
    assert r.status_code == 200 and r.content == b"payload"
    r = requests.get(
        server.endpoint + "/v1/objects/authb/o",
        headers={"X-Amz-Security-Token": "junk"},
        timeout=10,
    )
    assert r.status_code == 401


def test_sdk_with_a_token(server: LocalServer, fixture_objects: None) -> None:
    client = Client(server.endpoint, token=token_for(int(A.ACCESS_RO | A.PUT | A.LIST_BUCKETS)))
    b = client.bucket("authb")
    b.object("sdk").get_writer().put_content(b"hello")
    assert b.object("sdk").get_reader().read_all() == b"hello"
    assert "sdk" in [e.name for e in b.list_all_objects()]
    with pytest.raises(AISError) as err:
        b.object("sdk").delete()
    assert err.value.status_code == 403
    with pytest.raises(AISError) as err:
        Client(server.endpoint).bucket("authb").object("sdk").get_reader().read_all()
    assert err.value.status_code == 401


def test_revocation(server: LocalServer, fixture_objects: None) -> None:
    mine = token_for(int(A.GET), jti="revoke-me")
    other = token_for(int(A.GET), jti="revoke-me-too")
    assert call(server, "GET", "/v1/objects/authb/o", mine).status_code == 200
    # AuthN pushes revocations without a token: only tokens that verify here are taken.
    r = call(server, "DELETE", "/v1/tokens", None, {"tokens": [mine, "junk" * 10], "version": "1"})
    assert r.status_code == 200
    r = call(server, "GET", "/v1/objects/authb/o", mine)
    assert r.status_code == 401 and "token revoked" in r.json()["message"]
    # An admin revokes anything; a revoked token is refused by POST /v1/tokens too.
    assert call(server, "DELETE", "/v1/tokens", ADMIN, {"tokens": [other]}).status_code == 200
    assert call(server, "POST", "/v1/tokens", other, {}).status_code == 401
    assert call(server, "POST", "/v1/tokens", ADMIN, {}).status_code == 200


def test_authn_registration_key_check(server: LocalServer) -> None:
    good = {"secret": hashlib.sha256(SECRET.encode()).hexdigest(), "public_key": None}
    assert call(server, "POST", "/v1/tokens", None, good).status_code == 200
    bad = {"secret": hashlib.sha256(b"other").hexdigest(), "public_key": None}
    assert call(server, "POST", "/v1/tokens", None, bad).status_code == 401


def test_config_shows_auth_without_the_secret(server: LocalServer) -> None:
    cfg = call(server, "GET", "/v1/cluster", ADMIN, params={"what": "cluster_config"}).json()
    auth = cfg["auth"]
    assert auth["client_auth_required"] is True
    assert auth["required_claims"]["aud"] == [AUD]
    assert SECRET not in json.dumps(cfg)


def test_auth_can_be_turned_off_and_on_at_run_time(
    server: LocalServer, fixture_objects: None
) -> None:
    # Off: admin only (a cluster PUT).
    r = call(
        server,
        "PUT",
        "/v1/cluster/setconfig",
        token_for(int(A.ACCESS_RW)),
        params={"auth.client_auth_required": "false"},
    )
    assert r.status_code == 403
    admin_call(
        server,
        "PUT",
        "/v1/cluster",
        {"action": "set-config", "value": {"auth": {"client_auth_required": False}}},
    )
    try:
        assert call(server, "GET", "/v1/objects/authb/o").status_code == 200
        # On again: only with the caller's own valid admin token.
        r = call(
            server,
            "PUT",
            "/v1/cluster/setconfig",
            None,
            params={"auth.client_auth_required": "true"},
        )
        assert r.status_code == 401
        r = call(
            server,
            "PUT",
            "/v1/cluster/setconfig",
            token_for(ALL),
            params={"auth.client_auth_required": "true"},
        )
        assert r.status_code == 401 and "not admin" in r.json()["message"]
    finally:
        admin_call(
            server, "PUT", "/v1/cluster/setconfig", params={"auth.client_auth_required": "true"}
        )
    assert call(server, "GET", "/v1/objects/authb/o").status_code == 401


def test_cluster_uuid_persists_across_restarts(tmp_path: Any) -> None:
    mps = [tmp_path / "mp1", tmp_path / "mp2"]
    ids = []
    for _ in range(2):
        with LocalServer(mps) as srv:
            smap = requests.get(
                srv.endpoint + "/v1/daemon", params={"what": "smap"}, timeout=10
            ).json()
            ids.append((smap["uuid"], next(iter(smap["tmap"]))))
    assert ids[0] == ids[1]


def test_refuses_to_start_with_tokens_required_and_no_key(tmp_path: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIS_AUTHN_")}
    cmd = [
        str(find_server_binary()),
        "--mountpath",
        str(tmp_path / "mp"),
        "--port",
        "0",
        "--auth-required",
    ]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "signing key" in r.stderr, r.stderr


def test_refuses_an_oidc_issuer_next_to_a_signing_key(tmp_path: Any) -> None:
    """Tokens are verified with the key or by the issuers: both given, the issuer would be
    ignored, so the server refuses to start and says why."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIS_AUTHN_")}
    env["AIS_AUTHN_SECRET_KEY"] = "a-secret"
    cmd = [str(find_server_binary()), "--mountpath", str(tmp_path / "mp"), "--port", "0",
           "--auth-required", "--auth-oidc-issuer", "https://issuer.example"]  # fmt: skip
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--auth-oidc-issuer" in r.stderr, r.stderr
    assert "AIS_AUTHN_SECRET_KEY" in r.stderr, r.stderr


def _s3(server: LocalServer, token: str | None) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=server.endpoint + "/s3",
        aws_access_key_id="any",
        aws_secret_access_key="any",
        aws_session_token=token,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )


def test_s3_front_end_takes_the_token_as_the_session_token(
    server: LocalServer, fixture_objects: None
) -> None:
    from botocore.exceptions import ClientError

    assert _s3(server, ADMIN).get_object(Bucket="authb", Key="o")["Body"].read() == b"payload"
    reader = _s3(server, token_for(int(A.GET | A.OBJ_LIST)))
    assert reader.get_object(Bucket="authb", Key="o")["Body"].read() == b"payload"
    assert "o" in [c["Key"] for c in reader.list_objects_v2(Bucket="authb")["Contents"]]
    for attempt in (
        lambda: reader.put_object(Bucket="authb", Key="s3-denied", Body=b"x"),
        lambda: reader.delete_object(Bucket="authb", Key="o"),
        lambda: reader.list_buckets(),
        # CopyObject needs PUT on the destination and GET on the source.
        lambda: _s3(server, token_for(int(A.PUT))).copy_object(
            Bucket="authb", Key="s3-copy", CopySource={"Bucket": "authb", "Key": "o"}
        ),
    ):
        with pytest.raises(ClientError) as err:
            attempt()
        assert err.value.response["Error"]["Code"] == "AccessDenied"
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    with pytest.raises(ClientError) as err:
        _s3(server, None).get_object(Bucket="authb", Key="o")
    # S3 answers a missing credential with 403 AccessDenied too; the message says which it was.
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "token required" in err.value.response["Error"]["Message"]
    # A presigned URL carries the session token as a query parameter.
    url = _s3(server, token_for(int(A.GET))).generate_presigned_url(
        "get_object", Params={"Bucket": "authb", "Key": "o"}, ExpiresIn=60
    )
    assert requests.get(url, timeout=10).content == b"payload"


def test_bucket_access_property(server: LocalServer, fixture_objects: None) -> None:
    admin_call(server, "POST", "/v1/buckets/acl", {"action": "create-bck"})
    admin_call(server, "PUT", "/v1/objects/acl/o", data=b"x")
    rw = token_for(int(A.ACCESS_RW | A.PATCH | A.BCK_SET_ACL))
    # Changing `access` needs SET-BUCKET-ACL besides PATCH.
    set_ro = {"action": "set-bprops", "value": {"access": str(int(A.ACCESS_RO))}}
    assert (
        call(server, "PATCH", "/v1/buckets/acl", token_for(int(A.PATCH)), set_ro).status_code == 403
    )
    assert call(server, "PATCH", "/v1/buckets/acl", rw, set_ro).status_code == 200
    head = call(server, "HEAD", "/v1/buckets/acl", ADMIN)
    assert json.loads(head.headers["Ais-Bucket-Props"])["access"] == str(int(A.ACCESS_RO))
    # Now a read-only bucket: even a read-write token cannot write; reads go on.
    assert call(server, "GET", "/v1/objects/acl/o", rw).status_code == 200
    r = call(server, "PUT", "/v1/objects/acl/o2", rw, data=b"x")
    assert r.status_code == 403 and "access denied" in r.json()["message"]
    # Without tokens required the property alone decides writes (reads and PATCH always pass).
    admin_call(
        server, "PUT", "/v1/cluster/setconfig", params={"auth.client_auth_required": "false"}
    )
    try:
        assert call(server, "DELETE", "/v1/objects/acl/o").status_code == 403
        assert call(server, "GET", "/v1/objects/acl/o").status_code == 200
        back = {"action": "set-bprops", "value": {"access": str(ALL)}}
        assert call(server, "PATCH", "/v1/buckets/acl", None, back).status_code == 200
        assert call(server, "DELETE", "/v1/objects/acl/o").status_code == 200
    finally:
        admin_call(
            server, "PUT", "/v1/cluster/setconfig", params={"auth.client_auth_required": "true"}
        )


def test_oversized_token_is_refused_cleanly(server: LocalServer) -> None:
    huge = "Bearer " + b64url(b'{"alg":"HS256"}') + "." + "A" * 40_000 + ".c2ln"
    r = requests.get(server.endpoint + "/v1/buckets/", headers={"Authorization": huge}, timeout=10)
    assert r.status_code == 401 and "invalid token" in r.json()["message"]
    # Over the header limit: the server's own 431, and it goes on serving.
    r = requests.get(
        server.endpoint + "/v1/buckets/", headers={"Authorization": huge * 3}, timeout=10
    )
    assert r.status_code == 431
    assert call(server, "GET", "/v1/buckets/", ADMIN).status_code == 200


def test_getbatch_parallel_download_and_a_dataloader_with_a_token(
    server: LocalServer, fixture_objects: None
) -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    from aistore.pytorch import AISMapDataset
    from aistore.sdk.batch import Batch  # noqa: F401 (the public name the SDK exposes)

    client = Client(server.endpoint, token=token_for(int(A.ACCESS_RO | A.PUT)))
    b = client.bucket("authb")
    big = bytes(range(256)) * 16384  # 4 MiB: parallel download in chunks
    b.object("big").get_writer().put_content(big)
    with b.object("big").get_reader(num_workers=4).read_all() as pb:
        assert bytes(pb.buf) == big
    batch = client.batch(bucket=b)
    for name in ("o", "o2"):
        batch.add(b.object(name))
    got = [data for _, data in batch.get()]
    assert got == [b"payload", b"payload"]
    ds = AISMapDataset(ais_source_list=[b.objects(obj_names=["o", "o2"])])
    loader = torch_data.DataLoader(ds, batch_size=2, num_workers=2)
    items = [x for batch_ in loader for x in batch_[1]]
    assert sorted(bytes(x) for x in items) == [b"payload", b"payload"]
    # The same without a token: refused.
    with pytest.raises(AISError) as err:
        Client(server.endpoint).batch(bucket=b).add(b.object("o")).get()
    assert err.value.status_code == 401


def test_revocation_requests_are_bounded(server: LocalServer) -> None:
    r = call(server, "DELETE", "/v1/tokens", None, {"tokens": ["x"] * 1025})
    assert r.status_code == 400 and "too many tokens" in r.json()["message"]
