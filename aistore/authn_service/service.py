"""The AuthN operations: users, roles, clusters, tokens; no HTTP here.

Each operation returns a JSON-ready value or raises `ServiceError(status, message)`, which the
server turns into AIS's error reply. Messages follow AIS AuthN's wording where clients decide on
it: the SDKs pick their error class from the status and the words "user ", "role ", "cluster "
and "invalid credentials", so a message names only the entity it is about.

Authorization: login needs no token; every write, reading users, roles and clusters, the config
and key rotation need an admin token; a user may read itself and change its own password. "No
token", "bad token" and "not admin" are all 401, as AIS AuthN answers them. (AIS AuthN answers
roles and clusters to anyone, token or not; here they are admin calls like the rest.)

Logins are throttled per user name and client address (`throttle`: 429 with a retry delay), and
every password hash and check waits for one of `passwords.MAX_HASHING` slots (503 when none
frees up in time): `ServiceError.retry_after` carries the delay either way.

Invariants:
- A user document stores role *names*; the roles are resolved on every read and login, so a
  role update reaches its users' next tokens, and a deleted role is removed from every user in
  the same transaction.
- The superuser (`su_name`) and the `Admin` role cannot be deleted or demoted.
- A token is handed out only after its key recorded the token's expiry (see `keys`).

Example:
    >>> svc = AuthNService(store, signer, settings, ClusterClient())  # doctest: +SKIP
    >>> svc.login("admin", LoginMsg(password="pw"), client="10.0.0.7")  # doctest: +SKIP
    {'token': 'eyJ...'}
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import jwt

from aistore.authn_service import passwords
from aistore.authn_service.clusters import ClusterCallError, ClusterClient, RevocationPusher
from aistore.authn_service.keys import Signer
from aistore.authn_service.store import Store, Tx
from aistore.authn_service.throttle import LOGIN_LOCKOUT_S, LoginThrottle, Throttled
from aistore.authn_service.wire import (
    ACCESS_ALL,
    ACCESS_RO,
    ACCESS_RW,
    BckACL,
    CluACL,
    ConfigToUpdate,
    LoginMsg,
    Role,
    User,
    WireError,
    format_duration,
    parse_duration,
    parse_perm,
)

__all__ = ["ADMIN_ROLE", "AuthNService", "ServiceError", "ServiceSettings"]

logger = logging.getLogger("aistore.authn")

ADMIN_ROLE = "Admin"
MIN_EXPIRY_S = 60  # `authn.MinAuthExpiration`: a requested lifetime is 0 or at least a minute
_NS = 1_000_000_000
_MAX_NAME = 128
# AIS `cos.IsAlphaNice`: letters, digits, '-', '_', '.', not starting with '-' or '.'.
_NICE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

# Roles AIS creates for each registered cluster: (prefix, description, permissions).
_CLUSTER_ROLES = (
    ("ClusterOwner", "Admin access to %s", ACCESS_ALL),
    ("BucketOwner", "Full access to buckets in %s", ACCESS_RW),
    ("Guest", "Read-only access to buckets in %s", ACCESS_RO),
)


class ServiceError(Exception):
    """An operation refused: the HTTP status and AIS-style message to answer with, and for a
    429 or 503 the seconds after which to retry (`Retry-After`)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[type[ServiceError], tuple[int, str, int | None]]:
        return ServiceError, (self.status, self.message, self.retry_after)


@contextmanager
def _hashing() -> Iterator[None]:
    """Hash or check passwords inside: no free hashing slot in time is a 503."""
    try:
        yield
    except passwords.HashingBusy:
        raise ServiceError(
            503, "too many password checks in progress: retry later", retry_after=1
        ) from None


@dataclass
class ServiceSettings:
    """What the operations need to know about the deployment.

    Attributes:
        issuer: the external URL (`iss` of every token, base of the discovery document).
        ttl: default token lifetime, seconds.
        max_token_age: the longest lifetime a login may ask for, seconds (also what 0 asks for).
        su_name: the superuser, created on first start.
        config: the AIS-shaped config document `GET /v1/daemon` shows.
        login_lockout: the first lockout of a name or address with too many failed logins,
            seconds (see `throttle`).
    """

    issuer: str
    ttl: float
    max_token_age: float
    su_name: str
    config: dict[str, Any]
    login_lockout: float = LOGIN_LOCKOUT_S


def _q(text: str) -> str:
    """`text` quoted as Go's %q quotes it in AIS's messages."""
    return json.dumps(text)


def _check_name(kind: str, name: str) -> None:
    if not name:
        raise ServiceError(400, f"{kind} name is undefined")
    if len(name) > _MAX_NAME or not _NICE.fullmatch(name):
        raise ServiceError(
            400,
            f"{kind} name {_q(name[:_MAX_NAME])} is invalid: may only contain letters, digits, "
            f"'-', '_' and '.' (at most {_MAX_NAME} characters)",
        )


def _role_doc(role: Role) -> dict[str, Any]:
    """The stored (and wire) form of a role, with its permission strings checked."""
    clusters = None
    if role.clusters:
        clusters = []
        for acl in role.clusters:
            perm = parse_perm(acl.perm, f"role {_q(role.name)} cluster {_q(acl.id)}")
            clusters.append({"id": acl.id, "perm": str(perm)})
    buckets = None
    if role.buckets:
        buckets = [_bck_acl_doc(acl, f"role {_q(role.name)}") for acl in role.buckets]
    return {
        "name": role.name,
        "desc": role.desc,
        "clusters": clusters,
        "buckets": buckets,
        "admin": role.admin,
    }


def _bck_acl_doc(acl: BckACL, where: str) -> dict[str, Any]:
    ns = acl.bck.namespace
    return {
        "bck": {
            "name": acl.bck.name,
            "provider": acl.bck.provider,
            "namespace": {"uuid": ns.uuid if ns else "", "name": ns.name if ns else ""},
        },
        "perm": str(parse_perm(acl.perm, f"{where} bucket {_q(acl.bck.name)}")),
    }


def _merge_acls(
    into: list[dict[str, Any]], new: list[dict[str, Any]] | None, key: str
) -> list[dict[str, Any]]:
    """`into` with each ACL of `new` replacing the one with the same `key` (a role update)."""
    out = list(into)
    for acl in new or []:
        for i, old in enumerate(out):
            if old[key] == acl[key]:
                out[i] = acl
                break
        else:
            out.append(acl)
    return out


def _union_acls(acls: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """One ACL per `key`, granting the union of the bits every role grants (a user's token)."""
    merged: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for acl in acls:
        k = repr(acl[key])
        merged[k] = merged.get(k, 0) | int(acl["perm"])
        first.setdefault(k, acl)
    return [{**first[k], "perm": str(bits)} for k, bits in merged.items()]


# Revoked tokens per push: a cluster's body limit must not turn a long list into a push that
# never lands (a token is ~0.5-2 KiB).
PUSH_BATCH = 256


def _batches(tokens: list[str]) -> list[list[str]]:
    return [tokens[i : i + PUSH_BATCH] for i in range(0, len(tokens), PUSH_BATCH)]


class AuthNService:
    """The operations of the AuthN API; see the module docstring for the rules."""

    def __init__(
        self, store: Store, signer: Signer, settings: ServiceSettings, clusters: ClusterClient
    ) -> None:
        self.store = store
        self.signer = signer
        self.settings = settings
        self._clusters = clusters
        self.pusher = RevocationPusher(clusters, self.cluster_urls)  # stop() it when done
        self.throttle = LoginThrottle(settings.login_lockout)

    # Bootstrap

    def init_db(self, su_pass: str | None) -> bool:
        """On an empty database, create the Admin role and the superuser; whether it did.

        Raises:
            ServiceError: empty database and no superuser password.
        """
        with self.store.transaction() as tx:
            if not tx.is_empty("users"):
                return False
            if not su_pass:
                raise ServiceError(
                    500,
                    "failed to initialize the database: no password for the admin user "
                    "(set AIS_AUTHN_SU_PASS)",
                )
            admin = Role(name=ADMIN_ROLE, desc="AuthN administrator", admin=True)
            tx.put("roles", ADMIN_ROLE, _role_doc(admin))
            name = self.settings.su_name
            with _hashing():
                hashed = passwords.hash_password(su_pass)
            doc = {"id": name, "pass": hashed, "roles": [ADMIN_ROLE]}
            tx.put("users", name, doc)
        return True

    # Tokens

    def authenticate(self, authorization: str | None) -> dict[str, Any]:
        """The claims of the caller's bearer token.

        Raises:
            ServiceError: 401 for no token, a bad one, or a revoked one.
        """
        scheme, _, token = (authorization or "").partition(" ")
        if scheme != "Bearer" or not token:
            raise ServiceError(401, "token required")
        return self._verify(token)

    def _verify(self, token: str, allow_revoked: bool = False) -> dict[str, Any]:
        try:
            claims = self.signer.verify(token)
        except jwt.ExpiredSignatureError:
            raise ServiceError(401, "invalid token [err: token expired]") from None
        except jwt.InvalidTokenError as e:
            raise ServiceError(401, f"invalid token [err: {e}]") from None
        if not allow_revoked:
            with self.store.transaction() as tx:
                if tx.is_revoked(token):
                    raise ServiceError(401, "invalid token [err: token revoked]")
        return claims

    @staticmethod
    def require_admin(claims: dict[str, Any]) -> None:
        """Raises: ServiceError 401 unless the token is an admin's."""
        if claims.get("admin") is not True:
            raise ServiceError(401, f"not authorized: requires admin (user {claims['sub']})")

    def _expiry(self, now: float, msg: LoginMsg) -> float:
        if msg.expires_in is None:
            return now + self.settings.ttl
        delta = msg.expires_in / _NS
        max_age = self.settings.max_token_age
        if delta == 0:
            delta = max_age
        elif delta < MIN_EXPIRY_S:
            raise ServiceError(400, "invalid requested expiry date: must be 0 or >= 1m0s")
        if delta > max_age:
            raise ServiceError(
                400,
                "invalid requested expiry date: cannot exceed configured max token age: "
                + format_duration(max_age),
            )
        return now + delta

    def login(self, user_id: str, msg: LoginMsg, client: str = "") -> dict[str, str]:
        """Check the password and issue a token.

        Args:
            user_id: the name logged in as.
            msg: the password and requested lifetime.
            client: the caller's address, for the per-address throttle ("" leaves it out).

        Raises:
            ServiceError: 401 "invalid credentials" (unknown user or wrong password, not told
                apart), 429 the name or address is locked after failed logins, 503 no hashing
                slot or no room among the attempts in progress, 400 a lifetime out of range.
        """
        if not msg.password:
            raise ServiceError(401, "empty password")
        try:
            self.throttle.begin(user_id, client)
        except Throttled as e:
            logger.info("refused a login as %r from %s: %s", user_id[:_MAX_NAME], client, e)
            status = 429 if e.locked else 503
            raise ServiceError(status, str(e), retry_after=e.retry_after) from None
        ok: bool | None = None  # None: neither a success nor a failure (e.g. a 503)
        try:
            with self.store.transaction() as tx:
                user = tx.get("users", user_id)
                roles = self._roles_of(tx, user) if user else []
                clusters = tx.all("clusters")
            with _hashing():
                if user is None:
                    passwords.waste_time(msg.password)  # as long as a wrong password
                    ok = False
                else:
                    ok = passwords.verify_password(msg.password, str(user.get("pass", "")))
        finally:
            self.throttle.end(user_id, client, ok)
        if user is None or not ok:
            logger.info("refused a login as %r: invalid credentials", user_id[:_MAX_NAME])
            raise ServiceError(401, "invalid credentials")
        now = time.time()
        exp = self._expiry(now, msg)
        claims = self._claims(user_id, roles, clusters, int(now), int(exp))
        token = self.signer.sign(claims)
        logger.info(
            "issued a token to user %s (expires in %s)", user_id, format_duration(exp - now)
        )
        return {"token": token}

    def _claims(
        self,
        user_id: str,
        roles: list[dict[str, Any]],
        clusters: dict[str, dict[str, Any]],
        iat: int,
        exp: int,
    ) -> dict[str, Any]:
        """The claim set of spec §2 for a user with these roles."""
        claims: dict[str, Any] = {
            "sub": user_id,
            "iss": self.settings.issuer,
            "iat": iat,
            "exp": exp,
        }
        if any(role["name"] == ADMIN_ROLE for role in roles):
            aud = sorted(clusters)  # admin tokens name every registered cluster
            claims.update(clusters=[], admin=True)
        else:
            by_alias = {doc.get("alias"): cid for cid, doc in clusters.items() if doc.get("alias")}
            clu_acls: list[dict[str, Any]] = []
            bck_acls: list[dict[str, Any]] = []
            for role in roles:
                for acl in role.get("clusters") or []:
                    cid = acl["id"] if acl["id"] in clusters else by_alias.get(acl["id"], acl["id"])
                    clu_acls.append({"id": cid, "perm": acl["perm"]})
                bck_acls += role.get("buckets") or []
            clu_acls = _union_acls(clu_acls, "id")
            bck_acls = _union_acls(bck_acls, "bck")
            aud = sorted(
                {acl["id"] for acl in clu_acls if acl["id"]}
                | {acl["bck"]["namespace"]["uuid"] for acl in bck_acls} - {""}
            )
            claims["clusters"] = clu_acls
            if bck_acls:
                claims["buckets"] = bck_acls
            claims["admin"] = False
        if aud:
            claims["aud"] = aud
        return claims

    def revoke(self, token: str) -> None:
        """Revoke one of this service's tokens and push it to every registered cluster.

        Raises:
            ServiceError: 400 empty, 401 not a valid token of this service.
        """
        if not token:
            raise ServiceError(400, "empty token")
        claims = self._verify(token, allow_revoked=True)  # revoking twice is not an error
        exp = int(claims["exp"])
        with self.store.transaction() as tx:
            tx.revoke(token, exp)
            cluster_ids = list(tx.all("clusters"))
        for cid in cluster_ids:
            self.pusher.push(cid, [token], exp)
        logger.info("revoked a token of user %s", claims["sub"])

    def push_all_revoked(self) -> None:
        """Push the whole revoked list to every registered cluster (after a restart)."""
        with self.store.transaction() as tx:
            tokens = tx.revoked(int(time.time()))
            cluster_ids = list(tx.all("clusters"))
        for batch in _batches(tokens):
            for cid in cluster_ids:
                self.pusher.push(cid, batch, time.time() + self.settings.max_token_age)

    def cluster_urls(self, cluster_id: str) -> list[str] | None:
        """The URLs of a registered cluster (None: not registered)."""
        with self.store.transaction() as tx:
            doc = tx.get("clusters", cluster_id)
        return None if doc is None else list(doc.get("urls") or [])

    # Users

    def _roles_of(self, tx: Tx, user: dict[str, Any]) -> list[dict[str, Any]]:
        roles = (tx.get("roles", name) for name in user.get("roles") or [])
        return [role for role in roles if role is not None]

    def _user_out(self, tx: Tx, user: dict[str, Any]) -> dict[str, Any]:
        return {"id": user["id"], "roles": self._roles_of(tx, user)}

    @staticmethod
    def _role_names(tx: Tx, roles: list[Role] | None) -> list[str]:
        names = []
        for role in roles or []:
            if tx.get("roles", role.name) is None:
                raise ServiceError(404, f"role {_q(role.name)} does not exist")
            if role.name not in names:
                names.append(role.name)
        return names

    def add_user(self, user: User) -> None:
        """Raises: ServiceError 400 (bad id or no password), 404 (unknown role), 409 (exists)."""
        if not user.password:
            raise ServiceError(400, "invalid credentials: a password is required")
        _check_name("user", user.id)
        with _hashing():  # before the lock: it is slow on purpose
            hashed = passwords.hash_password(user.password)
        with self.store.transaction() as tx:
            if tx.get("users", user.id) is not None:
                raise ServiceError(409, f"user {_q(user.id)} already exists")
            names = self._role_names(tx, user.roles)
            tx.put("users", user.id, {"id": user.id, "pass": hashed, "roles": names})
        logger.info("added user %s", user.id)

    def update_user(self, user_id: str, update: User, claims: dict[str, Any]) -> None:
        """Change a user's password and/or roles (roles: admin only; password: admin or self).

        Raises:
            ServiceError: 401 not allowed, 403 the superuser's roles, 404 unknown user or role.
        """
        is_admin = claims.get("admin") is True
        if not is_admin and not (claims["sub"] == user_id and not update.roles):
            raise ServiceError(
                401, f"not authorized: user {claims['sub']} may change only its own password"
            )
        if user_id == self.settings.su_name and update.roles:
            raise ServiceError(403, "cannot change administrator's role")
        with _hashing():
            hashed = passwords.hash_password(update.password) if update.password else None
        with self.store.transaction() as tx:
            doc = tx.get("users", user_id)
            if doc is None:
                raise ServiceError(404, f"user {_q(user_id)} does not exist")
            if hashed is not None:
                doc["pass"] = hashed
            if update.roles:
                doc["roles"] = self._role_names(tx, update.roles)
            tx.put("users", user_id, doc)
        logger.info("updated user %s", user_id)

    def delete_user(self, user_id: str) -> None:
        """Raises: ServiceError 403 the superuser, 404 unknown user."""
        if user_id == self.settings.su_name:
            raise ServiceError(403, f"cannot remove built-in {_q(user_id)} account")
        with self.store.transaction() as tx:
            if not tx.delete("users", user_id):
                raise ServiceError(404, f"user {_q(user_id)} does not exist")
        logger.info("deleted user %s", user_id)

    def get_user(self, user_id: str, claims: dict[str, Any]) -> dict[str, Any]:
        """One user, password left out (admin or self).

        Raises:
            ServiceError: 401 neither admin nor self, 404 unknown user.
        """
        if claims.get("admin") is not True and claims["sub"] != user_id:
            raise ServiceError(401, "not authorized: requires admin or self")
        with self.store.transaction() as tx:
            doc = tx.get("users", user_id)
            if doc is None:
                raise ServiceError(404, f"user {_q(user_id)} does not exist")
            return self._user_out(tx, doc)

    def list_users(self) -> dict[str, Any]:
        """Every user by id, passwords left out."""
        with self.store.transaction() as tx:
            return {uid: self._user_out(tx, doc) for uid, doc in tx.all("users").items()}

    # Roles

    def add_role(self, role: Role) -> None:
        """Raises: ServiceError 400 bad name/permissions, 403 `admin` set, 409 exists."""
        _check_name("role", role.name)
        if role.admin:
            raise ServiceError(403, "only built-in roles can have admin permissions")
        doc = self._checked_role_doc(role)
        with self.store.transaction() as tx:
            if tx.get("roles", role.name) is not None:
                raise ServiceError(409, f"role {_q(role.name)} already exists")
            tx.put("roles", role.name, doc)
        logger.info("added role %s", role.name)

    @staticmethod
    def _checked_role_doc(role: Role) -> dict[str, Any]:
        try:
            return _role_doc(role)
        except WireError as e:
            raise ServiceError(400, str(e)) from None

    def update_role(self, name: str, update: Role) -> None:
        """Change a role's description and ACLs (an ACL replaces the one for the same cluster
        or bucket; others are kept).

        Raises:
            ServiceError: 403 the Admin role, 404 unknown role, 400 bad permissions.
        """
        if name == ADMIN_ROLE:
            raise ServiceError(403, f"cannot modify built-in {_q(ADMIN_ROLE)} role")
        new = self._checked_role_doc(
            Role(name=name, clusters=update.clusters, buckets=update.buckets)
        )
        with self.store.transaction() as tx:
            doc = tx.get("roles", name)
            if doc is None:
                raise ServiceError(404, f"role {_q(name)} does not exist")
            if update.desc:
                doc["desc"] = update.desc
            clusters = _merge_acls(doc.get("clusters") or [], new["clusters"], "id")
            buckets = _merge_acls(doc.get("buckets") or [], new["buckets"], "bck")
            doc["clusters"], doc["buckets"] = clusters or None, buckets or None
            tx.put("roles", name, doc)
        logger.info("updated role %s", name)

    def delete_role(self, name: str) -> None:
        """Delete a role and take it from every user.

        Raises:
            ServiceError: 403 the Admin role, 404 unknown role.
        """
        if name == ADMIN_ROLE:
            raise ServiceError(403, f"cannot remove built-in {_q(ADMIN_ROLE)} role")
        with self.store.transaction() as tx:
            if not tx.delete("roles", name):
                raise ServiceError(404, f"role {_q(name)} does not exist")
            for uid, doc in tx.all("users").items():
                if name in (doc.get("roles") or []):
                    doc["roles"] = [r for r in doc["roles"] if r != name]
                    tx.put("users", uid, doc)
        logger.info("deleted role %s", name)

    def get_role(self, name: str) -> dict[str, Any]:
        """One role, with the aliases of its clusters filled in.

        Raises:
            ServiceError: 404 unknown role.
        """
        with self.store.transaction() as tx:
            doc = tx.get("roles", name)
            clusters = tx.all("clusters")
        if doc is None:
            raise ServiceError(404, f"role {_q(name)} does not exist")
        for acl in doc.get("clusters") or []:
            alias = clusters.get(acl["id"], {}).get("alias")
            if alias:
                acl["alias"] = alias
        return doc

    def list_roles(self) -> list[dict[str, Any]]:
        """Every role, by name."""
        with self.store.transaction() as tx:
            return list(tx.all("roles").values())

    # Clusters

    @staticmethod
    def _lookup(clusters: dict[str, dict[str, Any]], key: str) -> str | None:
        """The ID of the cluster whose ID or alias is `key`."""
        if key in clusters:
            return key
        return next((cid for cid, doc in clusters.items() if key and doc.get("alias") == key), None)

    def _check_cluster(self, clu: CluACL) -> None:
        """The signer check and the revoked-list sync AIS runs before (re)registering."""
        if not clu.urls:
            raise ServiceError(400, f"cluster {_q(clu.id)}: at least one URL is required")
        try:
            self._clusters.call(clu.urls, "POST", self.signer.validation_conf())
        except ClusterCallError as e:
            raise ServiceError(
                400, f"failed to validate signer with cluster {clu.id}: {e}"
            ) from None

    def register_cluster(self, clu: CluACL) -> None:
        """Register a cluster (after checking it accepts this signer and sending it every
        revoked token) and create its default roles.

        Raises:
            ServiceError: 400 bad input or the cluster refused, 409 already registered.
        """
        if not clu.id:
            raise ServiceError(400, "cluster UUID is undefined")
        if clu.alias:
            _check_name("cluster alias", clu.alias)
        with self.store.transaction() as tx:
            known = self._lookup(tx.all("clusters"), clu.id) or self._lookup(
                tx.all("clusters"), clu.alias
            )
            revoked = tx.revoked(int(time.time()))
        if known:
            raise ServiceError(409, f"cluster {clu.id}[{known}] already registered")
        self._check_cluster(clu)  # network: outside the lock
        try:
            for batch in _batches(revoked):
                self._clusters.call(clu.urls, "DELETE", {"tokens": batch, "version": "0"})
        except ClusterCallError as e:
            raise ServiceError(
                400, f"failed to sync revoked tokens with cluster {clu.id}: {e}"
            ) from None
        doc = {"id": clu.id, "alias": clu.alias, "urls": list(clu.urls)}
        with self.store.transaction() as tx:
            clusters = tx.all("clusters")
            known = self._lookup(clusters, clu.id) or self._lookup(clusters, clu.alias)
            if known:
                raise ServiceError(409, f"cluster {clu.id}[{known}] already registered")
            tx.put("clusters", clu.id, doc)
            self._create_cluster_roles(tx, clu)
        logger.info("registered cluster %s (alias %r, %s)", clu.id, clu.alias, ", ".join(clu.urls))

    @staticmethod
    def _create_cluster_roles(tx: Tx, clu: CluACL) -> None:
        label = f"{clu.id}[{clu.alias}]" if clu.alias else clu.id
        for prefix, desc, perm in _CLUSTER_ROLES:
            name = f"{prefix}-{clu.alias or clu.id}"
            if tx.get("roles", name) is None:
                role = {
                    "name": name,
                    "desc": desc % label,
                    "clusters": [{"id": clu.id, "perm": str(perm)}],
                    "buckets": None,
                    "admin": False,
                }
                tx.put("roles", name, role)

    def update_cluster(self, cluster_id: str, update: CluACL) -> None:
        """Change a cluster's alias and/or URLs (the new URLs are checked as at registration).

        Raises:
            ServiceError: 400 bad input, 404 unknown cluster, 409 alias taken.
        """
        if not update.id:
            raise ServiceError(400, "cluster ID is undefined")
        if update.alias:
            _check_name("cluster alias", update.alias)
        with self.store.transaction() as tx:
            clusters = tx.all("clusters")
        doc = clusters.get(cluster_id)
        if doc is None:
            raise ServiceError(404, f"cluster {_q(cluster_id)} does not exist")
        if update.alias:
            other = self._lookup(clusters, update.alias)
            if other is not None and other != cluster_id:
                raise ServiceError(409, f"alias {_q(update.alias)} is used for cluster {_q(other)}")
            doc["alias"] = update.alias
        if update.urls:
            doc["urls"] = list(update.urls)
        self._check_cluster(CluACL(id=cluster_id, urls=doc["urls"]))
        with self.store.transaction() as tx:
            if tx.get("clusters", cluster_id) is None:
                raise ServiceError(404, f"cluster {_q(cluster_id)} does not exist")
            tx.put("clusters", cluster_id, doc)
        logger.info("updated cluster %s", cluster_id)

    def delete_cluster(self, key: str) -> None:
        """Unregister a cluster by ID or alias.

        Raises:
            ServiceError: 404 unknown cluster.
        """
        with self.store.transaction() as tx:
            cid = self._lookup(tx.all("clusters"), key)
            if cid is None:
                raise ServiceError(404, f"cluster {_q(key)} does not exist")
            tx.delete("clusters", cid)
        logger.info("unregistered cluster %s", cid)

    def get_cluster(self, key: str) -> dict[str, Any]:
        """`{"clusters": {id: cluster}}` for the cluster whose ID or alias is `key`.

        Raises:
            ServiceError: 404 unknown cluster.
        """
        with self.store.transaction() as tx:
            clusters = tx.all("clusters")
        cid = self._lookup(clusters, key)
        if cid is None:
            raise ServiceError(404, f"cluster {_q(key)} does not exist")
        return {"clusters": {cid: clusters[cid]}}

    def list_clusters(self) -> dict[str, Any]:
        """`{"clusters": {id: cluster}}` of every registered cluster."""
        with self.store.transaction() as tx:
            return {"clusters": tx.all("clusters")}

    # Config, discovery, keys

    def config(self) -> dict[str, Any]:
        """The config document, secrets censored."""
        conf = self.settings.config
        conf["auth"]["expiration_time"] = format_duration(self.settings.ttl)
        return conf

    def update_config(self, update: ConfigToUpdate) -> None:
        """Change the default token lifetime (`auth.expiration_time`).

        Raises:
            ServiceError: 400 empty update, a bad duration, or a secret change.
        """
        if update.auth is None:
            raise ServiceError(400, "configuration is empty")
        if update.auth.secret is not None:
            raise ServiceError(
                400,
                "the signing secret cannot change at runtime: restart with AIS_AUTHN_SECRET_KEY",
            )
        if update.auth.expiration_time is not None:
            try:
                ttl = parse_duration(update.auth.expiration_time)
            except ValueError as e:
                raise ServiceError(400, str(e)) from None
            if ttl and ttl < MIN_EXPIRY_S:
                raise ServiceError(400, "invalid auth.expiration_time (expected 0 or >= 1m)")
            self.settings.ttl = ttl or self.settings.max_token_age

    def openid_configuration(self) -> dict[str, Any]:
        """The OIDC discovery document (`authn.OIDCConfiguration`)."""
        base = self.settings.issuer.rstrip("/")
        return {
            "issuer": self.settings.issuer,
            "token_endpoint": f"{base}/v1/tokens",
            "userinfo_endpoint": f"{base}/v1/users",
            "jwks_uri": f"{base}/.well-known/jwks.json",
            "id_token_signing_alg_values_supported": ["HS256", "RS256"],
        }

    def jwks(self) -> dict[str, Any]:
        """Raises: ServiceError 400 when signing with a shared secret."""
        jwks = self.signer.jwks()
        if jwks is None:
            raise ServiceError(400, "JWKS not available for current signing method")
        return jwks

    def public_key(self) -> dict[str, str]:
        """Raises: ServiceError 400 when signing with a shared secret."""
        pem = self.signer.public_pem()
        if pem is None:
            raise ServiceError(400, "current signing method does not have a public key")
        return {"public_key": pem}

    def rotate_key(self) -> None:
        """Raises: ServiceError 400 when signing with a shared secret."""
        try:
            kid = self.signer.rotate()
        except ValueError as e:
            raise ServiceError(400, str(e)) from None
        logger.info("rotated the signing key: new kid %s", kid)
