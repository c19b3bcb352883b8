"""Run in the official SDK's venv (see official_sdk.run_script): the official AuthN client
against our aistore-authn. argv: AuthN URL, stand-in cluster URL, superuser name, password.
Prints one JSON document: what each call returned, and the error class each refusal raised."""

import json
import sys

from aistore.sdk.authn import AuthNClient
from aistore.sdk.authn.access_attr import AccessAttr

url, cluster_url, su_name, su_pass = sys.argv[1:5]
out = {}


def error_of(call):
    try:
        call()
    except Exception as e:  # the class name is the result
        return type(e).__name__
    return None


authn = AuthNClient(url)
out["admin_token"] = authn.login(su_name, su_pass, expires_in=600)
clusters, roles, users = authn.cluster_manager(), authn.role_manager(), authn.user_manager()

info = clusters.register("official", [cluster_url])
out["cluster"] = info.model_dump()
out["cluster_ids"] = sorted(clusters.list().clusters)
out["cluster_by_alias"] = clusters.get(cluster_alias="official").id
out["cluster_updated"] = clusters.update(info.id, cluster_alias="official2").alias
clusters.update(info.id, cluster_alias="official")

role = roles.create("off-readers", "read", "official", [AccessAttr.GET, AccessAttr.OBJ_HEAD])
out["role"] = role.model_dump()
roles.create("off-bucket", "one bucket", "official", [AccessAttr.ACCESS_RW], bucket_name="data")
out["role_names"] = sorted(r.name for r in roles.list())
roles.update("off-readers", desc="read, described again")
out["role_desc"] = roles.get("off-readers").desc
roles.update("off-readers", cluster_alias="official", perms=[AccessAttr.ACCESS_RO])
out["role_perm"] = roles.get("off-readers").clusters[0].perm

user = users.create("off-user", ["off-readers", "off-bucket"], "off-pass")
out["user_roles"] = [r.name for r in user.roles]
out["user_ids"] = sorted(users.list())
users.update("off-user", password="off-pass-2")
out["user_token"] = AuthNClient(url).login("off-user", "off-pass-2")

out["errors"] = {
    "get_unknown_user": error_of(lambda: users.get("nobody")),
    "create_existing_user": error_of(lambda: users.create("off-user", ["off-readers"], "x")),
    "get_unknown_role": error_of(lambda: roles.get("no-role")),
    "create_existing_role": error_of(
        lambda: roles.create("off-readers", "again", "official", [AccessAttr.GET])
    ),
    "register_again": error_of(lambda: clusters.register("official", [cluster_url])),
    "get_unknown_cluster": error_of(lambda: clusters.get(cluster_id="no-cluster")),
    "wrong_password": error_of(lambda: AuthNClient(url).login("off-user", "wrong")),
    "unknown_user_login": error_of(lambda: AuthNClient(url).login("nobody", "wrong")),
}

authn.token_manager().revoke(out["user_token"])
roles.delete("off-bucket")
out["user_roles_after_role_delete"] = [r.name for r in users.get("off-user").roles]
users.delete("off-user")
users.delete("off-user", missing_ok=True)
roles.delete("off-readers")
clusters.delete(cluster_alias="official")
out["cluster_ids_after_delete"] = sorted(clusters.list().clusters)
authn.logout()
print(json.dumps(out))
