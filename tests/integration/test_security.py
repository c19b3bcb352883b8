"""Attacks on the real server with tokens required, each refused with nothing changed (issue 42):
writes into a bucket the token has no grant on through a request that names another bucket
(object copy, copy/move bucket, copy-listrange, archive, S3 CopyObject), an APPEND grant used to
overwrite, an endpoint or profile set on a bucket to make the server fetch from an address of the
caller's choice, promote through symlinks and FIFOs, and unbounded work per request (GetBatch
bodies, open appends).

Tokens carry bucket ACLs as AIS AuthN issues them: cluster perms plus
`buckets: [{bck: {name, provider, namespace: {uuid: <cluster uuid>}}, perm}]`.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from _util import call

from aistore.sdk import Client
from aistore.sdk.authn.access_attr import AccessAttr as A
from aistore.server import LocalServer

SECRET = "security-secret-" + "0123456789abcdef" * 4
ALLOWED_ENDPOINT = "http://127.0.0.1:1"  # allowed, and nothing listens there


@pytest.fixture(scope="module")
def promote_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("promote-root")


@pytest.fixture(scope="module")
def server(promote_root: Path) -> Iterator[LocalServer]:
    with LocalServer(
        num_mountpaths=2,
        promote_root=promote_root,
        args=["--auth-required", "--allow-s3-endpoint", ALLOWED_ENDPOINT],
        env={"AIS_AUTHN_SECRET_KEY": SECRET},
    ) as srv:
        yield srv


def sign(claims: dict[str, Any]) -> str:
    # Valid for a day: ADMIN is signed when the module is collected, and a slow run (the
    # sanitizer pass) reaches these tests many minutes later.
    now = int(time.time())
    return jwt.encode(
        {"sub": "mallory", "iat": now, "exp": now + 86400, **claims}, SECRET, algorithm="HS256"
    )


ADMIN = sign({"sub": "admin", "admin": True})


def ok(r: requests.Response) -> requests.Response:
    assert r.status_code < 300, (r.request.method, r.request.url, r.status_code, r.text)
    return r


def refused(r: requests.Response, code: int = 403, says: str = "") -> None:
    assert r.status_code == code, (r.request.method, r.request.url, r.status_code, r.text)
    if says:
        assert says in r.text, r.text


@pytest.fixture(scope="module")
def uuid(server: LocalServer) -> str:
    return str(ok(call(server, "GET", "/v1/daemon", ADMIN, params={"what": "smap"})).json()["uuid"])


def user(uuid: str, grants: dict[str, int], cluster: int = 0) -> str:
    """A non-admin token: `cluster` bits on the cluster, `grants` (bucket -> bits) per bucket."""
    buckets = [
        {
            "bck": {"name": b, "provider": "ais", "namespace": {"uuid": uuid, "name": ""}},
            "perm": str(bits),
        }
        for b, bits in grants.items()
    ]
    return sign({"clusters": [{"id": uuid, "perm": str(cluster)}], "buckets": buckets})


@pytest.fixture(scope="module")
def buckets(server: LocalServer) -> None:
    for b in ("scratch", "prod"):
        ok(call(server, "POST", f"/v1/buckets/{b}", ADMIN, {"action": "create-bck"}))
    ok(call(server, "PUT", "/v1/objects/prod/model.bin", ADMIN, data=b"the real model"))
    ok(call(server, "PUT", "/v1/objects/scratch/x", ADMIN, data=b"attacker bytes"))


def content(server: LocalServer, bucket: str, name: str) -> bytes | None:
    r = call(server, "GET", f"/v1/objects/{bucket}/{name}", ADMIN)
    return r.content if r.status_code == 200 else None


def bucket_names(server: LocalServer) -> set[str]:
    r = ok(call(server, "GET", "/v1/buckets/", ADMIN, {"action": "list"}))
    return {b["name"] for b in r.json()}


def wait_job(server: LocalServer, job_id: str) -> None:
    assert Client(server.endpoint, token=ADMIN).job(job_id).wait(timeout=30).success


# ---- destinations ---------------------------------------------------------------------------


def test_object_copy_needs_put_on_the_destination(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    scratch_owner = user(uuid, {"scratch": int(A.ACCESS_RW)})
    r = call(
        server,
        "PUT",
        "/v1/objects/scratch/x",
        scratch_owner,
        params={"object_to": "ais/@#/prod/model.bin"},
    )
    refused(r, 403, "prod")
    assert content(server, "prod", "model.bin") == b"the real model"
    # ... and GET on the source: a PUT-only grant does not read it out through a copy.
    put_only = user(uuid, {"scratch": int(A.PUT), "prod": int(A.ACCESS_RW)})
    r = call(
        server, "PUT", "/v1/objects/scratch/x", put_only, params={"object_to": "ais/@#/prod/leak"}
    )
    refused(r, 403, "GET")
    assert content(server, "prod", "leak") is None
    # With PUT on the destination too, the copy is done.
    both = user(uuid, {"scratch": int(A.ACCESS_RW), "prod": int(A.PUT)})
    ok(call(server, "PUT", "/v1/objects/scratch/x", both, params={"object_to": "ais/@#/prod/copy"}))
    assert content(server, "prod", "copy") == b"attacker bytes"


def test_bucket_copy_and_move_need_put_and_create_on_the_destination(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    # MOVE-BUCKET (renaming scratch) is a cluster permission, as CREATE-BUCKET is.
    scratch_owner = user(uuid, {"scratch": int(A.ACCESS_RW)}, cluster=int(A.MOVE_BUCKET))
    before = bucket_names(server)
    copy = {"action": "copy-bck", "value": {}}
    refused(
        call(server, "POST", "/v1/buckets/scratch", scratch_owner, copy, {"bck_to": "ais/@#/prod/"})
    )
    refused(
        call(
            server, "POST", "/v1/buckets/scratch", scratch_owner, copy, {"bck_to": "ais/@#/new1/"}
        ),
        403,
        "CREATE-BUCKET",
    )
    move = {"action": "move-bck"}
    refused(
        call(
            server, "POST", "/v1/buckets/scratch", scratch_owner, move, {"bck_to": "ais/@#/new2/"}
        ),
        403,
        "CREATE-BUCKET",
    )
    assert bucket_names(server) == before
    assert content(server, "prod", "x") is None
    # PUT on an existing destination is enough to copy into it; a new one also needs CREATE-BUCKET.
    granted = user(
        uuid, {"scratch": int(A.ACCESS_RW), "prod": int(A.PUT)}, cluster=int(A.CREATE_BUCKET)
    )
    wait_job(
        server,
        ok(
            call(server, "POST", "/v1/buckets/scratch", granted, copy, {"bck_to": "ais/@#/prod/"})
        ).text,
    )
    assert content(server, "prod", "x") == b"attacker bytes"
    ok(call(server, "DELETE", "/v1/objects/prod/x", ADMIN))


def test_multi_object_copy_and_archive_need_put_on_the_destination(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    scratch_owner = user(uuid, {"scratch": int(A.ACCESS_RW)})
    to_prod = {"name": "prod", "provider": "ais"}
    copy = {"action": "copy-listrange", "value": {"objnames": ["x"], "tobck": to_prod}}
    refused(call(server, "POST", "/v1/buckets/scratch", scratch_owner, copy))
    archive = {
        "action": "archive",
        "value": {"objnames": ["x"], "tobck": to_prod, "archname": "model.bin.tar"},
    }
    refused(call(server, "PUT", "/v1/buckets/scratch", scratch_owner, archive))
    time.sleep(0.2)  # (a job, had one started, would have written by now)
    assert content(server, "prod", "x") is None
    assert content(server, "prod", "model.bin.tar") is None
    # Archiving within the bucket the token owns goes on.
    own = {"action": "archive", "value": {"objnames": ["x"], "archname": "mine.tar"}}
    ok(call(server, "PUT", "/v1/buckets/scratch", scratch_owner, own))


def test_s3_copy_source_is_authorized_as_the_handler_reads_it(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    ok(call(server, "POST", "/v1/buckets/victim", ADMIN, {"action": "create-bck"}))
    ok(call(server, "PUT", "/v1/objects/victim/secret.bin", ADMIN, data=b"secret"))
    # PUT on scratch, GET on a bucket called "victim%2Fsecret.bin" (which does not exist).
    tok = user(uuid, {"scratch": int(A.PUT), "victim/secret.bin": int(A.GET)})
    headers = {"x-amz-copy-source": "victim%2Fsecret.bin", "X-Amz-Security-Token": tok}
    r = requests.put(server.endpoint + "/s3/scratch/stolen", headers=headers, timeout=10)
    assert r.status_code == 403 and "AccessDenied" in r.text, r.text
    assert content(server, "scratch", "stolen") is None
    # With GET on victim, the same copy is allowed.
    tok = user(uuid, {"scratch": int(A.PUT), "victim": int(A.GET)})
    headers["X-Amz-Security-Token"] = tok
    r = requests.put(server.endpoint + "/s3/scratch/copied", headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    assert content(server, "scratch", "copied") == b"secret"


# ---- append -----------------------------------------------------------------------------------


def test_an_empty_append_type_is_a_put(server: LocalServer, uuid: str, buckets: None) -> None:
    appender = user(uuid, {"prod": int(A.APPEND)})
    r = call(
        server,
        "PUT",
        "/v1/objects/prod/model.bin",
        appender,
        data=b"overwritten",
        params={"append_type": ""},
    )
    refused(r, 403, "PUT")
    assert content(server, "prod", "model.bin") == b"the real model"
    # append_type with uploadId: the append is what happens, and what is checked.
    r = call(
        server,
        "PUT",
        "/v1/objects/prod/appended",
        appender,
        data=b"a",
        params={"append_type": "append", "uploadId": "x"},
    )
    assert r.status_code == 200, r.text
    assert r.headers["Ais-Append-Handle"]


def test_open_appends_are_capped(server: LocalServer) -> None:
    ok(call(server, "POST", "/v1/buckets/appends", ADMIN, {"action": "create-bck"}))
    s = requests.Session()
    s.headers["Authorization"] = f"Bearer {ADMIN}"
    codes = []
    for i in range(300):
        r = s.put(
            f"{server.endpoint}/v1/objects/appends/o{i}",
            params={"append_type": "append"},
            data=b"x",
            timeout=10,
        )
        codes.append(r.status_code)
        if r.status_code == 429:
            assert "too many appends" in r.json()["message"]
            break
    assert codes[-1] == 429 and set(codes[:-1]) == {200}
    assert 1 <= len(codes) - 1 <= 256


# ---- where a remote bucket's bytes come from --------------------------------------------------


def test_backend_endpoint_and_profile_are_admin_only_and_allow_listed(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    owner = user(uuid, {"scratch": int(A.ACCESS_RW | A.PATCH | A.BCK_SET_ACL)})
    for aws in (
        {"endpoint": "http://169.254.169.254/latest/meta-data"},
        {"profile": "prod-admin"},
    ):
        body = {"action": "set-bprops", "value": {"extra": {"aws": aws}}}
        refused(call(server, "PATCH", "/v1/buckets/scratch", owner, body), 403, "ADMIN")
    # An admin may set only the endpoints the operator listed.
    bad = {"action": "set-bprops", "value": {"extra": {"aws": {"endpoint": "http://10.0.0.1"}}}}
    refused(call(server, "PATCH", "/v1/buckets/scratch", ADMIN, bad), 403, "--allow-s3-endpoint")
    create = {"action": "create-bck", "value": bad["value"]}
    refused(call(server, "POST", "/v1/buckets/made", ADMIN, create), 403, "--allow-s3-endpoint")
    assert "made" not in bucket_names(server)
    good = {"action": "set-bprops", "value": {"extra": {"aws": {"endpoint": ALLOWED_ENDPOINT}}}}
    ok(call(server, "PATCH", "/v1/buckets/scratch", ADMIN, good))
    # Other props stay the bucket owner's.
    ok(
        call(
            server,
            "PATCH",
            "/v1/buckets/scratch",
            owner,
            {"action": "set-bprops", "value": {"versioning": {"enabled": True}}},
        )
    )


# ---- promote ------------------------------------------------------------------------------------


def promote(server: LocalServer, path: str, token: str = ADMIN, **value: Any) -> requests.Response:
    body = {"action": "promote", "name": path, "value": {"src": path, **value}}
    return call(server, "POST", "/v1/objects/scratch", token, body)


def test_promote_follows_no_symlink_and_refuses_fifos(
    server: LocalServer, promote_root: Path, tmp_path: Path, buckets: None
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not yours")
    (promote_root / "link.txt").symlink_to(outside)
    r = promote(server, str(promote_root / "link.txt"), obj="leak")
    refused(r, 400, "symbolic link")
    assert content(server, "scratch", "leak") is None
    # A symlinked directory on the way is refused the same.
    (promote_root / "linkdir").symlink_to(tmp_path)
    refused(promote(server, str(promote_root / "linkdir" / "outside.txt"), obj="leak"), 400)
    # A FIFO: refused at once, the I/O thread never waits for a writer.
    os.mkfifo(promote_root / "fifo")
    start = time.monotonic()
    refused(promote(server, str(promote_root / "fifo"), obj="fifo"), 400, "regular file")
    assert time.monotonic() - start < 5
    # A directory: its regular files are promoted, its symlinks skipped.
    d = promote_root / "tree"
    d.mkdir()
    (d / "a.txt").write_bytes(b"a")
    (d / "evil").symlink_to(outside)
    job = ok(promote(server, str(d), obj="tree/", rcr=True)).text
    wait_job(server, job)
    assert content(server, "scratch", "tree/a.txt") == b"a"
    assert content(server, "scratch", "tree/evil") is None
    # delete_src removes the promoted file, never what a symlink points at.
    (promote_root / "gone.txt").write_bytes(b"g")
    ok(promote(server, str(promote_root / "gone.txt"), obj="gone", dls=True))
    assert not (promote_root / "gone.txt").exists() and outside.exists()


# ---- bounded work per request -------------------------------------------------------------


def raw_request(server: LocalServer, head: str) -> socket.socket:
    host, port = server.endpoint.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(head.encode())
    return s


def read_status(s: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1])


def test_getbatch_bodies_held_at_once_are_bounded(
    server: LocalServer, uuid: str, buckets: None
) -> None:
    big = 256 << 20

    def head(token: str, bucket: str = "scratch") -> str:
        return (
            f"GET /v1/ml/moss/{bucket} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {big}\r\n\r\n{{"
        )

    # The path's bucket is checked before a byte of the body is taken.
    stranger = user(uuid, {"scratch": 0, "prod": int(A.GET)})
    s = raw_request(server, head(stranger))
    assert read_status(s) == 403
    s.close()
    # Two bodies of the largest size fill the budget (512 MiB); a third is told to come back.
    # A request that holds a reservation waits for its body: no reply within the wait.
    held: list[socket.socket] = []
    while True:
        s = raw_request(server, head(ADMIN))
        s.settimeout(2)
        try:
            status = read_status(s)
        except TimeoutError:
            held.append(s)
            assert len(held) <= 2, "more bodies held than the budget allows"
            continue
        s.close()
        assert status == 429
        break
    assert len(held) == 2
    for s in held:
        s.close()
    # Once they are gone, the memory is free again (a small, valid request is served).
    deadline = time.monotonic() + 10
    while True:
        r = call(
            server,
            "GET",
            "/v1/ml/moss/scratch",
            ADMIN,
            {"in": [{"objname": "x"}], "mime": ".tar", "strm": True},
        )
        if r.status_code != 429 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.status_code == 200, r.text
    with tarfile.open(fileobj=io.BytesIO(r.content)) as tar:
        names = tar.getnames()
    assert any(n.endswith("x") for n in names), names


# ---- what reaches the logs and the open endpoints ------------------------------------------------


def test_the_ais_api_takes_no_token_from_the_url(server: LocalServer, buckets: None) -> None:
    # (A token in a URL lands in access logs and shell histories; presigned S3 URLs are the
    # one place that carries it so.)
    r = requests.get(
        server.endpoint + "/v1/objects/prod/model.bin",
        params={"X-Amz-Security-Token": ADMIN},
        timeout=10,
    )
    refused(r, 401, "token required")
    r = requests.get(
        server.endpoint + "/s3/prod/model.bin", params={"X-Amz-Security-Token": ADMIN}, timeout=10
    )
    assert r.status_code == 200 and r.content == b"the real model"


def test_open_metrics_name_no_mountpath(server: LocalServer) -> None:
    r = requests.get(server.endpoint + "/metrics", timeout=10)
    assert r.status_code == 200
    assert "ais_target_get_count" in r.text
    assert "mountpath=" not in r.text
    mps = ok(call(server, "GET", "/v1/daemon", ADMIN, params={"what": "mountpaths"})).json()
    assert all(mp not in r.text for mp in mps["available"]), mps


def test_an_issuer_that_hangs_holds_no_io_thread(tmp_path: Path) -> None:
    # A trusted OIDC issuer that accepts connections and never answers: requests carrying its
    # tokens wait (their key fetch runs on a worker thread), every other request is served.
    import threading

    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(64)
    issuer = f"https://127.0.0.1:{hang.getsockname()[1]}"
    args = ["--auth-required", "--auth-oidc-issuer", issuer, "--auth-audience", "x"]
    with LocalServer(mountpaths=[tmp_path / "mp"], threads=1, args=args) as srv:
        now = int(time.time())
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        tok = jwt.encode(
            {"sub": "u", "iss": issuer, "aud": "x", "exp": now + 60},
            key,
            "RS256",
            headers={"kid": "k1"},
        )

        def wait_for_issuer() -> None:
            with contextlib.suppress(requests.RequestException):  # (cut off when the server stops)
                requests.get(
                    srv.endpoint + "/v1/buckets/",
                    headers={"Authorization": f"Bearer {tok}"},
                    timeout=60,
                )

        waiting = [threading.Thread(target=wait_for_issuer, daemon=True) for _ in range(4)]
        for t in waiting:
            t.start()
        time.sleep(0.5)  # (they are waiting for the issuer now)
        start = time.monotonic()
        r = requests.get(srv.endpoint + "/v1/health", timeout=10)
        assert r.status_code == 200
        assert time.monotonic() - start < 2
    hang.close()
