"""The real `aistore-authn` under abuse: failed logins lock a name and an address (429 with
`Retry-After`) until the lockout passes; a request trickling in, or a silent TLS client, is
dropped at the read deadline without stalling anyone; roles and clusters are an admin's to
read; the database and its WAL files are owner-only from their first moment; and a burst of
logins holds at most `MAX_HASHING` scrypt buffers at once."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from _authn import (
    SU_NAME,
    SU_PASS,
    FakeCluster,
    admin_client,
    authn_process,
    call,
    self_signed_cert,
)

from aistore.authn_service.local import LocalAuthN
from aistore.sdk.authn import AuthNClient

FAILURES_PER_USER = 5  # aistore.authn_service.throttle's limits
FAILURES_PER_ADDRESS = 50
MAX_HASHING = 4  # aistore.authn_service.passwords
SCRYPT_BYTES = 128 * (1 << 14) * 8  # 128 * n * r: one hash's buffer, 16 MiB


def login(url: str, user: str, password: str) -> requests.Response:
    return call(url, "POST", f"/v1/users/{user}", json={"password": password})


LOCKOUT = 2  # seconds: --login-lockout of the tests below


def locked_for(reply: requests.Response) -> int:
    """The `Retry-After` of a login refused for failures."""
    assert reply.status_code == 429, reply.text
    assert "too many failed logins" in reply.json()["message"]
    return int(reply.headers["Retry-After"])


def test_failed_logins_lock_the_name_and_the_lockout_doubles(tmp_path: Path) -> None:
    with authn_process(tmp_path, "--login-lockout", f"{LOCKOUT}s") as proc:
        admin = admin_client(proc.url)
        admin.user_manager().create("victim", [], "victim-pass")
        for _ in range(FAILURES_PER_USER):
            assert login(proc.url, "victim", "guess").status_code == 401
        assert 0 < locked_for(login(proc.url, "victim", "guess")) <= LOCKOUT
        wait = locked_for(login(proc.url, "victim", "victim-pass"))  # even the right password
        assert login(proc.url, SU_NAME, SU_PASS).status_code == 200  # another name: not locked
        time.sleep(wait + 0.1)
        # Past the lockout one attempt is let through; its failure doubles the lockout ...
        assert login(proc.url, "victim", "guess").status_code == 401
        wait = locked_for(login(proc.url, "victim", "victim-pass"))
        assert LOCKOUT < wait <= 2 * LOCKOUT
        time.sleep(wait + 0.1)
        # ... and a success clears the count: a fresh allowance of failures.
        assert login(proc.url, "victim", "victim-pass").status_code == 200
        for _ in range(FAILURES_PER_USER):
            assert login(proc.url, "victim", "guess").status_code == 401
        assert 0 < locked_for(login(proc.url, "victim", "victim-pass")) <= LOCKOUT
        # Unknown names are locked alike: a 429 does not tell which names exist.
        for _ in range(FAILURES_PER_USER):
            assert login(proc.url, "nobody", "guess").status_code == 401
        assert 0 < locked_for(login(proc.url, "nobody", "guess")) <= LOCKOUT
        assert "victim-pass" not in proc.log and "guess" not in proc.log


def test_failed_logins_lock_the_address_across_names(tmp_path: Path) -> None:
    with authn_process(tmp_path, "--login-lockout", f"{LOCKOUT}s") as proc:
        for i in range(FAILURES_PER_ADDRESS):  # one guess per name: no name is locked
            assert login(proc.url, f"sprayed-{i}", "guess").status_code == 401
        assert 0 < locked_for(login(proc.url, "one-more", "guess")) <= LOCKOUT
        wait = locked_for(login(proc.url, SU_NAME, SU_PASS))  # this address: any name
        time.sleep(wait + 0.1)
        assert login(proc.url, SU_NAME, SU_PASS).status_code == 200
        # A success does not clear an address: its next failure locks it again, for longer.
        assert login(proc.url, "sprayed-0", "guess").status_code == 401
        assert LOCKOUT < locked_for(login(proc.url, SU_NAME, SU_PASS)) <= 2 * LOCKOUT


def wait_for_log(proc: LocalAuthN, text: str) -> None:
    """The service's log is read as it comes: give a line just written a moment to arrive."""
    deadline = time.monotonic() + 5
    while text not in proc.log:
        assert time.monotonic() < deadline, f"{text!r} not in the log:\n{proc.log[-3000:]}"
        time.sleep(0.05)


def _trickle(sock: socket.socket, data: bytes, interval: float, limit: float) -> float | None:
    """Send `data` a byte per `interval`; the seconds until the service closed the connection
    (None: it never did within `limit`). Any bytes the service sends fail the test."""
    started = time.monotonic()
    for byte in data:
        if time.monotonic() - started > limit:
            return None
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # reset: dropped
            return time.monotonic() - started
        readable, _, _ = select.select([sock], [], [], interval)
        if readable:
            try:
                got = sock.recv(4096)
            except OSError:
                got = b""
            assert not got, f"the service answered a request it never got whole: {got[:200]!r}"
            return time.monotonic() - started
    return None


@pytest.mark.parametrize(
    ("head", "rest"),
    [
        (b"GET /v1/public-key HTTP/1.1\r\n", b"X-Slow: " + b"a" * 64 + b"\r\n\r\n"),
        (
            b"POST /v1/users/admin HTTP/1.1\r\nContent-Length: 64\r\n\r\n",
            b'{"password": "' + b"p" * 48 + b'"}',
        ),
    ],
    ids=["head", "body"],
)
def test_a_request_trickling_in_is_dropped_at_the_read_deadline(
    tmp_path: Path, head: bytes, rest: bytes
) -> None:
    """A byte per second keeps every single read well inside its own timeout (30 s): only the
    deadline over the whole request (2 s here) ends it."""
    with authn_process(tmp_path, "--read-timeout", "2s") as proc:
        host, port = proc.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(head)
            dropped = _trickle(sock, rest, interval=1.0, limit=10)
        assert dropped is not None, "a trickling client kept its connection for 10 s"
        assert 1.0 <= dropped <= 4.0, dropped
        wait_for_log(proc, "dropped 127.0.0.1: request not received within 2s")
        assert call(proc.url, "GET", "/v1/public-key").status_code == 200


def test_an_endless_header_line_is_refused_at_the_head_limit(authn: LocalAuthN) -> None:
    """A header line that never ends is refused once the head passes 64 KiB, at once: not
    buffered until its end (or the read deadline, 10 s)."""
    host, port = authn.url.removeprefix("http://").split(":")
    sent, reply = 0, b""
    with socket.create_connection((host, int(port)), timeout=2) as sock:
        sock.sendall(b"GET /v1/public-key HTTP/1.1\r\nX-Endless: ")
        while sent < 8 << 20 and not reply:
            try:
                sock.sendall(b"a" * 16384)
            except OSError:  # the service stopped reading, or closed
                break
            sent += 16384
            if select.select([sock], [], [], 0)[0]:
                reply = sock.recv(65536)
        started = time.monotonic()
        while not reply.endswith(b"}") and time.monotonic() - started < 2:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            reply += chunk
    # Answered while the line was still coming (what the client sent sits in socket buffers).
    assert reply.startswith(b"HTTP/1.1 431 "), (sent, reply[:300])
    assert sent < 8 << 20 and b'"node": "AuthN"' in reply


def test_silent_tls_clients_stall_nobody_and_are_dropped(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    args = ("--https", "--cert", str(cert), "--key", str(key), "--read-timeout", "2s")
    with authn_process(tmp_path / "conf", *args) as proc:
        host, port = proc.url.removeprefix("https://").split(":")
        silent = [socket.create_connection((host, int(port)), timeout=10) for _ in range(3)]
        try:
            time.sleep(0.2)  # accepted, each waiting for a handshake that never comes
            started = time.monotonic()
            reply = requests.get(proc.url + "/v1/public-key", verify=str(cert), timeout=10)
            assert reply.status_code == 200 and time.monotonic() - started < 1.5
            for sock in silent:  # closed at the deadline, without a byte
                sock.settimeout(5)
                assert sock.recv(1) == b""
            assert time.monotonic() - started < 4.0
        finally:
            for sock in silent:
                sock.close()


@pytest.fixture
def plain_user(authn: LocalAuthN) -> Iterator[str]:
    """A token of a user holding no role."""
    admin = admin_client(authn.url)
    admin.user_manager().create("plain-user", [], "plain-pass")
    yield AuthNClient(authn.url).login("plain-user", "plain-pass")
    admin.user_manager().delete("plain-user")


def test_roles_and_clusters_are_read_by_admins_only(
    authn: LocalAuthN, cluster: FakeCluster, plain_user: str
) -> None:
    """AIS AuthN answers these reads to anyone; here they are admin calls like every other
    (and, as for every other, "not admin" is 401)."""
    admin = admin_client(authn.url)
    admin.cluster_manager().register("readable", [cluster.url])
    try:
        paths = ["/v1/roles", "/v1/roles/Admin", "/v1/clusters", f"/v1/clusters/{cluster.uuid}"]
        for path in paths:
            for token in (None, "not-a-token", plain_user):
                reply = call(authn.url, "GET", path, token)
                assert reply.status_code == 401, (path, token, reply.text)
            assert call(authn.url, "GET", path, admin.client.token).status_code == 200, path
        denied = call(authn.url, "GET", "/v1/roles", plain_user).json()["message"]
        assert denied == "not authorized: requires admin (user plain-user)"
    finally:
        admin.cluster_manager().delete(cluster_alias="readable")


def test_the_database_files_are_owner_only_from_their_first_moment(tmp_path: Path) -> None:
    """Started with umask 0 (files would be world-writable by default), watched from before
    the start: the first mode seen of each file is 0600."""
    names = ("authn.db", "authn.db-wal", "authn.db-shm")
    first_seen: dict[str, int] = {}
    watching = threading.Event()
    watching.set()

    def watch() -> None:
        while watching.is_set():
            for name in names:
                if name not in first_seen:
                    with contextlib.suppress(FileNotFoundError):  # not yet
                        first_seen[name] = os.lstat(tmp_path / name).st_mode & 0o777

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    proc = authn_process(tmp_path)
    old_umask = os.umask(0)
    try:
        proc.start()  # the service inherits the umask
    finally:
        os.umask(old_umask)
    try:
        admin_client(proc.url)  # a login: the database is read and written
        deadline = time.monotonic() + 10
        while len(first_seen) < len(names) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watching.clear()
        watcher.join()
        proc.stop()
    assert first_seen == {name: 0o600 for name in names}


def _memory(pid: int) -> dict[str, int]:
    """The process's current and peak resident size (`VmRSS`, `VmHWM`), bytes."""
    sizes = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            sizes[key] = int(value.split()[0]) * 1024
    return sizes


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_burst_of_logins_holds_at_most_max_hashing_scrypt_buffers(authn: LocalAuthN) -> None:
    """48 users log in at once (48 workers, no lockout in the way). Each scrypt check holds
    16 MiB while it runs and the service returns it when done, so the resident size peaks at
    the checks running at once: at most MAX_HASHING of them (48 would be 768 MiB)."""
    token = admin_client(authn.url).client.token

    def create(user: str) -> int:
        doc = {"id": user, "pass": f"{user}-pass"}
        return call(authn.url, "POST", "/v1/users", token, json=doc).status_code

    users = [f"burst-{i}" for i in range(48)]
    with ThreadPoolExecutor(len(users)) as pool:
        assert set(pool.map(create, users)) == {200}
        assert authn.pid is not None
        before = _memory(authn.pid)["VmRSS"]
        for _ in range(2):
            replies = list(pool.map(lambda u: login(authn.url, u, f"{u}-pass"), users))
            assert {r.status_code for r in replies} <= {200, 503}, [r.text for r in replies]
            assert sum(r.status_code == 200 for r in replies) >= MAX_HASHING
            assert all(r.headers["Retry-After"] for r in replies if r.status_code == 503)
        peak = _memory(authn.pid)["VmHWM"]
    for user in users:
        call(authn.url, "DELETE", f"/v1/users/{user}", token)
    growth = peak - before
    bound = (MAX_HASHING + 2) * SCRYPT_BYTES  # two buffers of slack: requests, threads, heap
    assert growth <= bound, f"peak grew {growth >> 20} MiB (bound {bound >> 20} MiB)"
