"""The AuthN client against a loopback HTTP peer standing in for the AuthN server: the requests
it sends and how it reads replies and errors (tests/authn runs it against the real service)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from _fakes import FakeServer, Reply, Req

from aistore.sdk.authn import AuthNClient
from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.authn.errors import (
    AuthNError,
    ErrClusterAlreadyRegistered,
    ErrRoleNotFound,
    ErrUserInvalidCredentials,
    ErrUserNotFound,
)

CLUSTER = {"id": "Xk2e9aPq1", "alias": "main", "urls": ["http://ais:51080"]}
ROLE = {"name": "readers", "desc": "read", "clusters": [{"id": "Xk2e9aPq1", "perm": "771"}]}


def _routes(table: dict[tuple[str, str], Callable[[Req], Reply]]) -> Callable[[Req], Reply]:
    def route(req: Req) -> Reply:
        handler = table.get((req.method, req.path))
        return handler(req) if handler else Reply(404, b"no route " + req.path.encode())

    return route


def _json(doc: object) -> Callable[[Req], Reply]:
    return lambda req: Reply(200, json.dumps(doc).encode(), {"Content-Type": "application/json"})


def test_package_reexports_what_the_official_one_does() -> None:
    import aistore.sdk.authn as authn_pkg
    from aistore.sdk.authn.cluster_manager import ClusterManager

    assert authn_pkg.AuthNClient is AuthNClient and authn_pkg.ClusterManager is ClusterManager


@pytest.fixture
def authn(server: FakeServer) -> AuthNClient:
    return AuthNClient(server.url, timeout=(2, 5))


def test_login_sends_nanoseconds_and_keeps_the_token(
    server: FakeServer, authn: AuthNClient
) -> None:
    server.route = _routes(
        {
            ("POST", "/v1/users/alice"): _json({"token": "jwt-1"}),
            ("GET", "/v1/users"): _json({}),
            ("DELETE", "/v1/tokens"): lambda req: Reply(200),
        }
    )
    assert authn.login("alice", "pw", expires_in=2.5) == "jwt-1"
    login = server.requests[0]
    assert json.loads(login.body) == {"password": "pw", "expires_in": 2_500_000_000}
    assert "Authorization" not in login.headers
    assert len(authn.user_manager().list()) == 0
    assert server.requests[1].headers["Authorization"] == "Bearer jwt-1"
    authn.logout()
    assert json.loads(server.requests[2].body) == {"token": "jwt-1"}
    assert authn.client.token == ""
    with pytest.raises(ValueError):
        authn.logout()
    with pytest.raises(ValueError):
        authn.login("alice", "  ")


def test_errors_are_classified(server: FakeServer, authn: AuthNClient) -> None:
    server.route = _routes(
        {
            ("POST", "/v1/users/bob"): lambda req: Reply(401, b"invalid credentials"),
            ("GET", "/v1/users/ghost"): lambda req: Reply(404, b'user "ghost" does not exist'),
            ("DELETE", "/v1/users/ghost"): lambda req: Reply(404, b'user "ghost" does not exist'),
            ("DELETE", "/v1/roles/none"): lambda req: Reply(404, b'role "none" not found'),
            ("POST", "/v1/clusters"): lambda req: Reply(409, b'cluster "x" already registered'),
        }
    )
    with pytest.raises(ErrUserInvalidCredentials) as info:
        authn.login("bob", "wrong")
    assert info.value.status_code == 401
    with pytest.raises(ErrUserNotFound):
        authn.user_manager().get("ghost")
    authn.user_manager().delete("ghost", missing_ok=True)
    with pytest.raises(ErrUserNotFound):
        authn.user_manager().delete("ghost")
    authn.role_manager().delete("none", missing_ok=True)
    with pytest.raises(ErrRoleNotFound):
        authn.role_manager().delete("none")
    with pytest.raises(AuthNError) as other:
        authn.token_manager().client.request("GET", "nowhere")
    assert type(other.value) is AuthNError


def test_roles_and_users(server: FakeServer, authn: AuthNClient) -> None:
    server.route = _routes(
        {
            ("GET", "/v1/clusters/main"): _json({"clusters": {"Xk2e9aPq1": CLUSTER}}),
            ("POST", "/v1/roles"): lambda req: Reply(200),
            ("GET", "/v1/roles/readers"): _json(ROLE),
            ("PUT", "/v1/roles/readers"): lambda req: Reply(200),
            ("POST", "/v1/users"): lambda req: Reply(200),
            ("GET", "/v1/users/alice"): _json({"id": "alice", "roles": [ROLE]}),
        }
    )
    role = authn.role_manager().create(
        "readers", "read", "main", [AccessAttr.GET, AccessAttr.OBJ_LIST], bucket_name="data"
    )
    assert role.clusters is not None and role.clusters[0].describe() == (
        "GET,OBJ_HEAD,BCK_HEAD,OBJ_LIST"
    )
    sent = json.loads(next(r for r in server.requests if r.method == "POST").body)
    assert sent["buckets"] == [
        {
            "bck": {
                "name": "data",
                "provider": "ais",
                "namespace": {"uuid": "Xk2e9aPq1", "name": ""},
            },
            "perm": "513",
        }
    ]
    authn.role_manager().update(
        "readers", desc="new", cluster_alias="main", perms=[AccessAttr.ACCESS_RW]
    )
    put = json.loads([r for r in server.requests if r.method == "PUT"][-1].body)
    assert put["desc"] == "new" and put["clusters"] == [{"id": "Xk2e9aPq1", "perm": "831"}]
    with pytest.raises(ValueError):
        authn.role_manager().update("readers", perms=[AccessAttr.GET])

    user = authn.user_manager().create("alice", ["readers"], "pw")
    assert user.id == "alice" and user.roles[0].name == "readers"
    body = json.loads([r for r in server.requests if r.method == "POST"][-1].body)
    assert body["id"] == "alice" and body["pass"] == "pw" and body["roles"][0]["name"] == "readers"


def test_cluster_register_reads_the_uuid_from_the_cluster(
    server: FakeServer, authn: AuthNClient
) -> None:
    ais = FakeServer()
    snode = {"daemon_id": "p1", "daemon_type": "proxy"}
    ais.route = _routes(
        {
            ("GET", "/v1/daemon"): _json(
                {"tmap": {}, "pmap": {}, "proxy_si": snode, "uuid": "Xk2e9aPq1"}
            )
        }
    )
    server.route = _routes(
        {
            ("POST", "/v1/clusters"): lambda req: Reply(200),
            ("GET", "/v1/clusters/Xk2e9aPq1"): _json({"clusters": {"Xk2e9aPq1": CLUSTER}}),
        }
    )
    try:
        info = authn.cluster_manager().register("main", [ais.url])
        assert info.alias == "main"
        sent = json.loads(server.requests[0].body)
        assert sent == {"id": "Xk2e9aPq1", "alias": "main", "urls": [ais.url]}
        server.route = lambda req: Reply(409, b'cluster "Xk2e9aPq1" already registered')
        with pytest.raises(ErrClusterAlreadyRegistered):
            authn.cluster_manager().register("main", [ais.url])
    finally:
        ais.close()
    with pytest.raises(ValueError):
        authn.cluster_manager().get()


def test_access_attr_values() -> None:
    assert int(AccessAttr.ACCESS_SU) == 262143
    assert int(AccessAttr.CLUSTER_ACCESS_RW) == 126976
    assert int(AccessAttr.ACCESS_BUCKET_ADMIN) == 3200
    assert ErrClusterAlreadyRegistered.__mro__[1] is AuthNError
