"""The AuthN service's pure parts and its store and keyring on a temp directory (no server)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from _authn import FakeCluster
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from aistore.authn_service import passwords
from aistore.authn_service.clusters import ClusterClient
from aistore.authn_service.httpd import Request, route
from aistore.authn_service.keys import HMACSigner, KeyFileError, RSAKeyring
from aistore.authn_service.service import AuthNService, ServiceError, ServiceSettings
from aistore.authn_service.store import Store
from aistore.authn_service.throttle import (
    LOGIN_FAILURES_PER_ADDRESS,
    LOGIN_FAILURES_PER_USER,
    LOGIN_TRACKED,
    LoginThrottle,
    Throttled,
)
from aistore.authn_service.wire import (
    BckACL,
    Bucket,
    CluACL,
    LoginMsg,
    Namespace,
    Role,
    User,
    WireError,
    decode,
    format_duration,
    parse_duration,
    parse_perm,
)

PASSPHRASE = b"unit-test-passphrase"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("24h", 86400.0),
        ("1h30m", 5400.0),
        ("90s", 90.0),
        ("0", 0.0),
        ("1.5h", 5400.0),
        ("500ms", 0.5),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "24", "1d", "-1h", "1h 30m", "soon"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


def test_format_duration() -> None:
    assert [format_duration(s) for s in (86400, 5400, 90, 5)] == [
        "24h0m0s",
        "1h30m0s",
        "1m30s",
        "5s",
    ]


def test_permission_strings() -> None:
    assert parse_perm("", "x") == 0 and parse_perm("831", "x") == 831
    assert parse_perm(str((1 << 64) - 1), "x") == (1 << 64) - 1
    for bad in (str(1 << 64), "-1", "1e3", "0x10", " 1", "١"):  # the last: an Arabic-Indic digit
        with pytest.raises(WireError, match="decimal uint64"):
            parse_perm(bad, "x")


def test_decode_names_the_field() -> None:
    with pytest.raises(WireError, match=r"\$.roles\[0\].clusters"):
        decode(b'{"id": "u", "roles": [{"clusters": 5}]}', User)


def test_password_hashes_are_salted_and_checked() -> None:
    first, second = passwords.hash_password("pw"), passwords.hash_password("pw")
    assert first != second and first.startswith("scrypt$16384$8$1$")
    assert passwords.verify_password("pw", first) and passwords.verify_password("pw", second)
    assert not passwords.verify_password("pW", first)
    for malformed in ("", "scrypt$1$2", "bcrypt$16384$8$1$AAAA$AAAA", "scrypt$x$8$1$AAAA$AAAA"):
        assert not passwords.verify_password("pw", malformed)


def test_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "authn.db")
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.put("users", "u", {"id": "u"})
        raise RuntimeError("midway")
    with store.transaction() as tx:
        assert tx.get("users", "u") is None
        tx.revoke("old", int(time.time()) - 1)
        tx.revoke("live", int(time.time()) + 60)
        assert tx.revoked(int(time.time())) == ["live"]
        assert not tx.is_revoked("old") and tx.is_revoked("live")
    store.close()


def test_the_database_files_are_created_owner_only(tmp_path: Path) -> None:
    """Whatever the umask: a new database, and an old one made world-readable, end up 0600 with
    their WAL files (SQLite gives those the database's mode)."""
    old_umask = os.umask(0)
    try:
        fresh = Store(tmp_path / "fresh.db")
        (tmp_path / "old.db").touch(mode=0o666)
        old = Store(tmp_path / "old.db")
    finally:
        os.umask(old_umask)
    for store in (fresh, old):
        with store.transaction() as tx:
            tx.put("users", "u", {"id": "u"})
        for suffix in ("", "-wal", "-shm"):
            path = store.path.with_name(store.path.name + suffix)
            assert path.stat().st_mode & 0o777 == 0o600, path
        store.close()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fail(throttle: LoginThrottle, user: str, address: str = "10.0.0.1") -> None:
    throttle.begin(user, address)
    throttle.end(user, address, ok=False)


def test_a_name_is_locked_after_its_failures_and_the_lockout_doubles() -> None:
    clock = FakeClock()
    throttle = LoginThrottle(lockout=60, clock=clock)
    for _ in range(LOGIN_FAILURES_PER_USER):
        _fail(throttle, "alice")
    with pytest.raises(Throttled) as locked:
        throttle.begin("alice", "10.0.0.2")  # from anywhere
    assert locked.value.locked and locked.value.retry_after == 60
    throttle.begin("bob", "10.0.0.1")  # other names are not locked
    throttle.end("bob", "10.0.0.1", ok=True)
    clock.now += 61
    for expected in (120, 240, 480, 960, 960):  # doubled per failure, at most 4 times
        _fail(throttle, "alice")
        with pytest.raises(Throttled) as locked:
            throttle.begin("alice", "10.0.0.1")
        assert locked.value.retry_after == expected
        clock.now += expected + 1
    throttle.begin("alice", "10.0.0.1")
    throttle.end("alice", "10.0.0.1", ok=True)  # a success starts the count over
    for _ in range(LOGIN_FAILURES_PER_USER - 1):
        _fail(throttle, "alice", "10.0.0.3")
    throttle.begin("alice", "10.0.0.3")
    throttle.end("alice", "10.0.0.3", ok=None)  # neither (a 503): counts for nothing


def test_an_address_is_locked_and_a_success_does_not_clear_it() -> None:
    clock = FakeClock()
    throttle = LoginThrottle(lockout=60, clock=clock)
    for i in range(LOGIN_FAILURES_PER_ADDRESS):
        _fail(throttle, f"name-{i}")
    with pytest.raises(Throttled):
        throttle.begin("admin", "10.0.0.1")
    throttle.begin("admin", "10.0.0.2")  # another address
    throttle.end("admin", "10.0.0.2", ok=True)
    clock.now += 61
    throttle.begin("admin", "10.0.0.1")
    throttle.end("admin", "10.0.0.1", ok=True)
    _fail(throttle, "name-0")
    with pytest.raises(Throttled) as locked:
        throttle.begin("admin", "10.0.0.1")
    assert locked.value.retry_after == 120
    # Quiet for twice the longest lockout: forgotten.
    clock.now += 2 * 60 * 16 + 1
    for i in range(LOGIN_FAILURES_PER_ADDRESS - 1):
        _fail(throttle, f"again-{i}")
    throttle.begin("admin", "10.0.0.1")


def test_attempts_in_progress_count_against_the_allowance() -> None:
    throttle = LoginThrottle(lockout=60, admit_wait=0.2)
    for _ in range(LOGIN_FAILURES_PER_USER):
        throttle.begin("carol", "10.0.0.1")  # all undecided
    with pytest.raises(Throttled) as busy:
        throttle.begin("carol", "10.0.0.1")
    assert not busy.value.locked
    # The attempt beyond the allowance waits for one in progress to end, then goes ahead.
    admitted = threading.Event()

    def one_more() -> None:
        throttle.begin("carol", "10.0.0.1")
        admitted.set()

    waiter = threading.Thread(target=one_more)
    waiter.start()
    time.sleep(0.05)
    assert not admitted.is_set()
    throttle.end("carol", "10.0.0.1", ok=True)
    waiter.join()
    assert admitted.is_set()


def test_the_throttle_forgets_the_least_recent_beyond_its_capacity() -> None:
    throttle = LoginThrottle(lockout=60)
    for i in range(LOGIN_TRACKED + 100):
        _fail(throttle, f"user-{i}", f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}")
    assert throttle.tracked() == (LOGIN_TRACKED, LOGIN_TRACKED)
    _fail(throttle, "x" * 100_000)  # a name longer than any user's is kept cut short
    assert max(len(name) for name in throttle._users.entries) <= 129


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "authn.db")
    yield s
    s.close()


def _token(ring: RSAKeyring, exp: float) -> str:
    return ring.sign({"sub": "u", "iat": int(time.time()), "exp": int(exp)})


def test_rotation_serves_the_old_key_until_its_last_token_expires(
    tmp_path: Path, store: Store
) -> None:
    key_file = tmp_path / "key.pem"
    ring = RSAKeyring.open(store, key_file, PASSPHRASE, 2048)
    first_kid = ring.kid
    long_lived = _token(ring, time.time() + 3600)
    ring.rotate()
    assert ring.kid != first_kid
    assert [k["kid"] for k in ring.jwks()["keys"]] == [ring.kid, first_kid]
    assert ring.verify(long_lived)["sub"] == "u"
    second_kid = ring.kid
    short = _token(ring, time.time() + 1)
    assert jwt.get_unverified_header(short)["kid"] == second_kid

    # A key whose every token has expired leaves the JWKS and verifies nothing.
    ring.rotate()
    time.sleep(1.1)
    assert second_kid not in [k["kid"] for k in ring.jwks()["keys"]]
    with pytest.raises(jwt.InvalidTokenError):
        ring.verify(short)
    # Reopened from the same files: same signing key, the first key still served.
    again = RSAKeyring.open(store, key_file, PASSPHRASE, 2048)
    assert again.kid == ring.kid and again.verify(long_lived)["sub"] == "u"


def test_tokens_signed_while_keys_rotate_all_verify(tmp_path: Path, store: Store) -> None:
    ring = RSAKeyring.open(store, tmp_path / "key.pem", PASSPHRASE, 2048)
    tokens = [_token(ring, time.time() + 60)]
    done = threading.Event()

    def sign_until_done() -> None:
        while not done.is_set():
            tokens.append(_token(ring, time.time() + 60))

    signers = [threading.Thread(target=sign_until_done) for _ in range(3)]
    for thread in signers:
        thread.start()
    try:
        for _ in range(3):
            ring.rotate()
            time.sleep(0.05)  # the signers use each key
    finally:
        done.set()
        for thread in signers:
            thread.join()
    served = {k["kid"] for k in ring.jwks()["keys"]}
    assert ring.kid in served and len({jwt.get_unverified_header(t)["kid"] for t in tokens}) > 1
    for token in tokens:
        assert jwt.get_unverified_header(token)["kid"] in served
        assert ring.verify(token)["sub"] == "u"


def test_the_key_file_opens_only_with_its_passphrase(tmp_path: Path, store: Store) -> None:
    key_file = tmp_path / "key.pem"
    RSAKeyring.open(store, key_file, PASSPHRASE, 2048)
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        RSAKeyring.open(store, key_file, b"another-passphrase", 2048)
    plain = tmp_path / "plain.pem"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    plain.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(KeyFileError, match="not encrypted"):
        RSAKeyring.open(store, plain, PASSPHRASE, 2048)


@pytest.fixture
def service(store: Store) -> Iterator[AuthNService]:
    settings = ServiceSettings(
        issuer="https://authn.test:52001", ttl=3600, max_token_age=86400, su_name="admin", config={}
    )
    svc = AuthNService(store, HMACSigner("x" * 32), settings, ClusterClient(timeout=1))
    svc.init_db("admin-pass")
    yield svc
    svc.pusher.stop()


def test_a_users_token_grants_the_union_of_its_roles(service: AuthNService, store: Store) -> None:
    with store.transaction() as tx:
        tx.put("clusters", "C1", {"id": "C1", "alias": "one", "urls": ["http://h"]})
    service.add_role(Role(name="ro", clusters=[_acl("one", "771")]))  # by alias
    service.add_role(Role(name="put", clusters=[_acl("C1", "4")], buckets=[_bck("C1", "b", "1")]))
    service.add_role(Role(name="all", clusters=[_acl("", "12288")]))
    service.add_user(
        User(id="u", password="pw", roles=[Role(name=n) for n in ("ro", "put", "all")])
    )
    claims = service.signer.verify(service.login("u", LoginMsg(password="pw"))["token"])
    assert claims["clusters"] == [{"id": "C1", "perm": "775"}, {"id": "", "perm": "12288"}]
    assert claims["buckets"] == [
        {
            "bck": {"name": "b", "provider": "ais", "namespace": {"uuid": "C1", "name": ""}},
            "perm": "1",
        }
    ]
    assert claims["aud"] == ["C1"] and claims["iss"] == "https://authn.test:52001"
    assert claims["exp"] - claims["iat"] == 3600
    admin = service.signer.verify(service.login("admin", LoginMsg(password="admin-pass"))["token"])
    assert admin["admin"] is True and admin["aud"] == ["C1"]


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [(None, 3600), (0, 86400), (60 * 10**9, 60), (86400 * 10**9, 86400)],
)
def test_requested_lifetimes(service: AuthNService, expires_in: int | None, lifetime: int) -> None:
    token = service.login("admin", LoginMsg(password="admin-pass", expires_in=expires_in))["token"]
    claims = service.signer.verify(token)
    assert claims["exp"] - claims["iat"] == lifetime


@pytest.mark.parametrize("expires_in", [1, 59 * 10**9, -(10**9), 86401 * 10**9])
def test_lifetimes_out_of_range(service: AuthNService, expires_in: int) -> None:
    with pytest.raises(ServiceError, match="invalid requested expiry date") as err:
        service.login("admin", LoginMsg(password="admin-pass", expires_in=expires_in))
    assert err.value.status == 400


def _acl(cid: str, perm: str) -> CluACL:
    return CluACL(id=cid, perm=perm)


def _bck(uuid: str, name: str, perm: str) -> BckACL:
    return BckACL(bck=Bucket(name=name, namespace=Namespace(uuid=uuid)), perm=perm)


def test_long_revoked_lists_travel_in_batches(service: AuthNService) -> None:
    now = int(time.time())
    tokens = [
        service.signer.sign({"sub": f"u{i}", "iat": now, "exp": now + 600}) for i in range(300)
    ]
    for token in tokens:
        service.revoke(token)
    cluster = FakeCluster("batch-uuid")
    try:
        service.register_cluster(CluACL(id="batch-uuid", alias="b", urls=[cluster.url]))
        sent = cluster.pushes()
        assert [len(batch) for batch in sent] == [256, 44]
        assert sorted(t for batch in sent for t in batch) == sorted(tokens)
        service.push_all_revoked()  # as at a restart: the same batches, in the background
        deadline = time.monotonic() + 10
        while len(cluster.pushes()) < 4:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert sorted(len(batch) for batch in cluster.pushes()[2:]) == [44, 256]
    finally:
        cluster.close()


def test_roles_and_clusters_share_one_admin_dispatch(service: AuthNService) -> None:
    """`/v1/roles` and `/v1/clusters`: an admin's GET, POST, PUT and DELETE; anyone else's
    401; other methods 405; a wrong number of path items 400 (an unnamed cluster DELETE with
    AIS's own message)."""
    admin = "Bearer " + service.login("admin", LoginMsg(password="admin-pass"))["token"]
    service.add_user(User(id="u", password="pw"))
    user = "Bearer " + service.login("u", LoginMsg(password="pw"))["token"]

    def call(method: str, path: str, auth: str = admin, body: bytes = b"") -> Any:
        return route(service, Request(method, path, auth, body)).body

    def refused(method: str, path: str, auth: str = admin) -> tuple[int, str]:
        with pytest.raises(ServiceError) as err:
            call(method, path, auth)
        return err.value.status, err.value.message

    call("POST", "/v1/roles", body=b'{"name": "r", "desc": "one"}')
    call("PUT", "/v1/roles/r", body=b'{"desc": "two"}')
    assert call("GET", "/v1/roles/r")["desc"] == "two"
    assert "r" in {role["name"] for role in call("GET", "/v1/roles")}
    call("DELETE", "/v1/roles/r")
    assert refused("GET", "/v1/roles/r")[0] == 404
    assert call("GET", "/v1/clusters") == {"clusters": {}}
    for collection in ("/v1/roles", "/v1/clusters"):
        assert refused("GET", collection, user)[0] == 401
        assert refused("PATCH", collection)[0] == 405
        assert refused("GET", collection + "/a/b") == (
            400,
            "invalid URL path: unexpected number of path items",
        )
    assert refused("DELETE", "/v1/roles")[0] == 400
    assert refused("DELETE", "/v1/clusters") == (400, "cluster name or ID not defined")
