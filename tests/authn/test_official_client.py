"""The official SDK's AuthN client (`aistore` 2.0.0 from PyPI, in its own venv) against our
aistore-authn: every manager's calls, the error classes it picks, tokens a cluster can verify."""

from __future__ import annotations

from pathlib import Path

import jwt
import official_sdk
import pytest
import requests
from _authn import SU_NAME, SU_PASS, FakeCluster

from aistore.authn_service.local import LocalAuthN

SCRIPT = (Path(__file__).parent / "official_authn_calls.py").read_text()


@pytest.fixture(scope="module")
def official_python() -> Path:
    try:
        return official_sdk.ensure_venv()
    except official_sdk.PyPIUnreachable as e:
        pytest.skip(f"official aistore=={official_sdk.OFFICIAL_SDK_VERSION} not installable: {e}")


def test_official_authn_client_against_our_service(
    official_python: Path, authn: LocalAuthN, cluster: FakeCluster
) -> None:
    out = official_sdk.run_script(SCRIPT, authn.url, [cluster.url, SU_NAME, SU_PASS], timeout=300)

    assert out["cluster"] == {"id": cluster.uuid, "alias": "official", "urls": [cluster.url]}
    assert cluster.uuid in out["cluster_ids"]
    assert out["cluster_by_alias"] == cluster.uuid
    assert out["cluster_updated"] == "official2"
    assert out["role"]["clusters"] == [{"id": cluster.uuid, "perm": "3"}]
    assert {"Admin", "off-readers", "off-bucket", "Guest-official"} <= set(out["role_names"])
    assert out["role_desc"] == "read, described again"
    assert out["role_perm"] == "771"
    assert out["user_roles"] == ["off-readers", "off-bucket"]
    assert {SU_NAME, "off-user"} <= set(out["user_ids"])
    assert out["errors"] == {
        "get_unknown_user": "ErrUserNotFound",
        "create_existing_user": "ErrUserAlreadyExists",
        "get_unknown_role": "ErrRoleNotFound",
        "create_existing_role": "ErrRoleAlreadyExists",
        "register_again": "ErrClusterAlreadyRegistered",
        "get_unknown_cluster": "ErrClusterNotFound",
        "wrong_password": "ErrUserInvalidCredentials",
        "unknown_user_login": "ErrUserInvalidCredentials",
    }
    assert out["user_roles_after_role_delete"] == ["off-readers"]
    assert cluster.uuid not in out["cluster_ids_after_delete"]

    # The user's token carries the roles' ACLs and verifies with the public key.
    pem = requests.get(f"{authn.url}/v1/public-key", timeout=5).json()["public_key"]
    claims = jwt.decode(out["user_token"], pem, algorithms=["RS256"], audience=cluster.uuid)
    assert claims["sub"] == "off-user" and claims["admin"] is False
    assert claims["clusters"] == [{"id": cluster.uuid, "perm": "771"}]
    assert claims["buckets"][0]["bck"]["name"] == "data"
    # Revoked through the official client: pushed to the cluster; logout revoked the admin's.
    cluster.wait_for_push(out["user_token"])
    reply = requests.get(
        f"{authn.url}/v1/users",
        headers={"Authorization": f"Bearer {out['admin_token']}"},
        timeout=5,
    )
    assert reply.status_code == 401 and "token revoked" in reply.json()["message"]
