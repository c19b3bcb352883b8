"""Another AIS cluster as a backend (`ais://@alias/bucket`) on the real server: a second server of
ours is the remote. Attach and detach (`PUT /v1/cluster/{attach,detach}?what=remote`, and the
official CLI's `ais cluster remote-attach` / `ais show remote-cluster`), the config's
`backend.ais`, the remote's buckets listed through us, and read-through with caching as for any
remote bucket: cold GET (then served locally although the remote copy changed), HEAD, listing
with the cached flag, write-through PUT and DELETE, create and destroy reverse-proxied to the
remote, a remote namespace (`ais://@alias#ns/b`). Errors: bad aliases and URLs, an alias
attached twice, an unknown alias, a detached cluster. Where the official tools exist, a real AIS
cluster is attached too and read through the same way (skipped, saying why, without them).
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from _ais_cli import NEEDS_CLI, Cli, rows
from _util import call, content_for, wait_job

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError, ErrObjNotFound
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.server import LocalServer

ALIAS = "remais"


@pytest.fixture(scope="module")
def remote() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=1) as s:
        yield s


@pytest.fixture(scope="module")
def local(remote: LocalServer) -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2) as s:
        r = attach(s, ALIAS, remote.endpoint)
        assert r.status_code == 200, r.text
        yield s


def attach(srv: LocalServer, alias: str, url: str) -> requests.Response:
    headers = {"Ais-Remote-Ais-Alias": alias, "Ais-Remote-Ais-Url": url}
    return call(srv, "PUT", "/v1/cluster/attach", params={"what": "remote"}, headers=headers)


def detach(srv: LocalServer, alias: str) -> requests.Response:
    headers = {"Ais-Remote-Ais-Alias": alias}
    return call(srv, "PUT", "/v1/cluster/detach", params={"what": "remote"}, headers=headers)


def uuid_of(srv: LocalServer) -> str:
    uid: str = call(srv, "GET", "/v1/daemon", params={"what": "smap"}).json()["uuid"]
    return uid


def assert_missing(bck: Bucket) -> None:
    """HEAD of `bck` is a 404 naming it."""
    with pytest.raises(AISError) as e:
        bck.head()
    assert e.value.status_code == 404 and bck.name in str(e.value), e.value


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def read(bck: Bucket, name: str) -> bytes:
    return b"".join(bck.object(name).get_reader())


def through(local: LocalServer, name: str, ns: str = "") -> Bucket:
    return local.client().bucket(name, namespace=Namespace(uuid=ALIAS, name=ns))


def filled(remote: LocalServer, objects: dict[str, bytes], ns: str = "") -> str:
    name = unique("rb")
    bck = remote.client().bucket(name, namespace=Namespace(name=ns) if ns else None).create()
    for k, v in objects.items():
        bck.object(k).get_writer().put_content(v)
    return name


def test_show_remote_and_config(local: LocalServer, remote: LocalServer) -> None:
    shown = call(local, "GET", "/v1/cluster", params={"what": "remote"}).json()
    (entry,) = shown["a"]
    assert entry["alias"] == ALIAS and entry["url"] == remote.endpoint
    assert entry["uuid"] == uuid_of(remote)
    assert entry["smap"]["uuid"] == uuid_of(remote)
    assert shown["ver"] >= 1
    config = call(local, "GET", "/v1/cluster", params={"what": "cluster_config"}).json()
    assert config["backend"]["ais"] == {ALIAS: [remote.endpoint]}


def test_cold_get_caches_then_warm_get_is_local(local: LocalServer, remote: LocalServer) -> None:
    objects = {"a.txt": content_for("a", 100), "dir/b.bin": content_for("b", 70_000)}
    name = filled(remote, objects)
    bck = through(local, name)
    listed = {e.name: e for e in bck.list_all_objects(props="name,size,cached")}
    assert sorted(listed) == ["a.txt", "dir/b.bin"]
    assert listed["dir/b.bin"].size == 70_000
    assert not listed["a.txt"].is_cached()
    assert bck.object("dir/b.bin").head().size == 70_000
    headers = bck.head()  # which cluster the bucket is of
    assert (
        headers["Ais-Remote-Ais-Alias"] == ALIAS
        and headers["Ais-Remote-Ais-Url"] == remote.endpoint
    )
    assert headers["Ais-Remote-Ais-Uuid"] == uuid_of(remote)
    assert read(bck, "dir/b.bin") == objects["dir/b.bin"]  # cold
    cached = {e.name: e for e in bck.list_all_objects(props="name,size,cached")}
    assert cached["dir/b.bin"].is_cached() and not cached["a.txt"].is_cached()
    # the remote changes; a warm GET is the cached copy, latest-ver fetches the new one
    remote.client().bucket(name).object("dir/b.bin").get_writer().put_content(b"changed")
    assert read(bck, "dir/b.bin") == objects["dir/b.bin"]
    assert bck.object("dir/b.bin").get_reader(latest=True).read_all() == b"changed"
    # a range read of a not-cached object
    assert (
        bck.object("a.txt").get_reader(byte_range="bytes=10-19").read_all()
        == objects["a.txt"][10:20]
    )


def test_missing_remote_object_and_bucket(local: LocalServer, remote: LocalServer) -> None:
    name = filled(remote, {"x": b"x"})
    with pytest.raises(ErrObjNotFound):
        read(through(local, name), "nope")
    assert_missing(through(local, unique("nobucket")))


def test_put_and_delete_write_through(local: LocalServer, remote: LocalServer) -> None:
    name = filled(remote, {})
    bck = through(local, name)
    bck.object("w.bin").get_writer().put_content(content_for("w", 5000))
    assert read(remote.client().bucket(name), "w.bin") == content_for("w", 5000)
    assert read(bck, "w.bin") == content_for("w", 5000)
    bck.object("w.bin").delete()
    with pytest.raises(AISError) as e:
        remote.client().bucket(name).object("w.bin").head()
    assert e.value.status_code == 404


def test_list_remote_buckets(local: LocalServer, remote: LocalServer) -> None:
    name = filled(remote, {"o": b"o"})
    r = call(local, "GET", "/v1/buckets", params={"provider": "ais", "namespace": f"@{ALIAS}#"})
    assert r.status_code == 200, r.text
    mine = [b for b in r.json() if b["name"] == name]
    assert mine == [
        {"name": name, "provider": "ais", "namespace": {"uuid": uuid_of(remote), "name": ""}}
    ]
    every = call(local, "GET", "/v1/buckets", params={"provider": "ais", "namespace": "@@#"}).json()
    assert any(b["name"] == name for b in every)
    # the local listing (no namespace) shows local buckets only
    plain = call(local, "GET", "/v1/buckets", params={"provider": "ais"}).json()
    assert all(b["namespace"]["uuid"] == "" for b in plain)


def test_remote_namespace(local: LocalServer, remote: LocalServer) -> None:
    ns = unique("ns")
    name = filled(remote, {"in-ns": b"namespaced"}, ns=ns)
    bck = through(local, name, ns=ns)
    assert [e.name for e in bck.list_all_objects()] == ["in-ns"]
    assert read(bck, "in-ns") == b"namespaced"
    assert_missing(through(local, name))  # the remote's global namespace has no such bucket


def test_create_and_destroy_on_the_remote(local: LocalServer, remote: LocalServer) -> None:
    name = unique("made")
    bck = through(local, name).create()
    remote.client().bucket(name).head()  # created there
    bck.object("o").get_writer().put_content(b"o")
    bck.delete()
    assert_missing(remote.client().bucket(name))


@pytest.mark.parametrize(
    ("alias", "url", "status"),
    [
        ("x", "http://127.0.0.1:1", 400),  # too short
        ("what", "http://127.0.0.1:1", 400),
        ("bad alias", "http://127.0.0.1:1", 400),
        ("okalias", "ftp://127.0.0.1:1", 400),
        (ALIAS, "http://127.0.0.1:1", 409),  # attached at another URL
    ],
)
def test_attach_refusals(local: LocalServer, alias: str, url: str, status: int) -> None:
    r = attach(local, alias, url)
    assert r.status_code == status, r.text


def test_unknown_what_and_detach_of_unknown(local: LocalServer) -> None:
    r = call(local, "PUT", "/v1/cluster/attach", params={"what": "nope"})
    assert r.status_code == 400 and "unexpected query [what=nope]" in r.text
    r = detach(local, "never-attached")
    assert r.status_code == 404 and "not found" in r.text


def test_unreachable_cluster_stays_attached_defunct(local: LocalServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert attach(local, "gone", f"http://127.0.0.1:{port}").status_code == 200
    try:
        shown = call(local, "GET", "/v1/cluster", params={"what": "remote"}).json()["a"]
        (gone,) = [e for e in shown if e["alias"] == "gone"]
        assert gone["uuid"] == "defunct" and gone["smap"] is None
        r = call(local, "HEAD", "/v1/buckets/b", params={"provider": "ais", "namespace": "@gone#"})
        assert r.status_code == 503, r.headers
    finally:
        assert detach(local, "gone").status_code == 200


def test_detached_cluster_is_unknown_and_reattach_persists(
    local: LocalServer, remote: LocalServer
) -> None:
    name = filled(remote, {"o": b"kept"})
    assert read(through(local, name), "o") == b"kept"
    assert detach(local, ALIAS).status_code == 200
    try:
        with pytest.raises(AISError) as e:
            through(local, name).head()
        assert e.value.status_code == 404 and "does not exist" in str(e.value)
    finally:
        assert attach(local, ALIAS, remote.endpoint).status_code == 200
    local.restart()  # the attachment is kept across a restart
    shown = call(local, "GET", "/v1/cluster", params={"what": "remote"}).json()["a"]
    assert [e["alias"] for e in shown] == [ALIAS]
    assert read(through(local, name), "o") == b"kept"


# --- the official CLI ---------------------------------------------------------------------------


@NEEDS_CLI
def test_cli_remote_attach_show_ls(local: LocalServer, remote: LocalServer, tmp_path: Path) -> None:
    cli = Cli(local.endpoint, tmp_path / "home")
    (tmp_path / "home").mkdir()
    cli.ok("cluster", "remote-attach", f"second={remote.endpoint}")
    try:
        shown = cli.ok("show", "remote-cluster")
        assert "second" in shown and uuid_of(remote) in shown, shown
        name = filled(remote, {"listed.txt": b"hello"})
        listed = cli.ok("ls", f"ais://@second/{name}")
        assert any(r and r[0] == "listed.txt" for r in rows(listed)), listed
        out = tmp_path / "got.txt"
        cli.ok("get", f"ais://@second/{name}/listed.txt", str(out))
        assert out.read_bytes() == b"hello"
    finally:
        cli.ok("cluster", "remote-detach", "second")
    assert "second" not in call(local, "GET", "/v1/cluster", params={"what": "remote"}).text


# --- a real AIS cluster as the remote -----------------------------------------------------------

TOOLS = Path(
    os.environ.get(
        "AIS_TOOLS_DIR", Path(__file__).resolve().parents[3] / "shared" / "tools" / "ais"
    )
)
CLUSTER_SH = TOOLS / "ais-cluster.sh"
NEEDS_CLUSTER = pytest.mark.skipif(
    not (os.access(CLUSTER_SH, os.X_OK) and os.access(TOOLS / "bin" / "aisnode", os.X_OK)),
    reason=f"the official AIStore tools are not at {TOOLS} (ais-cluster.sh, bin/aisnode)",
)


def free_base_port() -> int:
    """A port with the next few free too (the cluster takes base, base+1, ...)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base: int = s.getsockname()[1]
        if base > 60000:
            continue
        ok = True
        for p in range(base, base + 8):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free port range")


@pytest.fixture(scope="module")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cluster_dir = tmp_path_factory.mktemp("ais-cluster") / "c"
    try:
        started = subprocess.run(
            [str(CLUSTER_SH), "start", str(cluster_dir), str(free_base_port()), "1"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if started.returncode != 0:
            pytest.fail(f"ais-cluster.sh start failed: {started.stderr[-2000:]}", pytrace=False)
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([str(CLUSTER_SH), "stop", str(cluster_dir)], timeout=60, check=False)


@NEEDS_CLUSTER
def test_real_cluster_as_remote(local: LocalServer, real_cluster: str) -> None:
    name = unique("real")
    real = Client(real_cluster).bucket(name).create()
    real.object("r.bin").get_writer().put_content(content_for("r", 40_000))
    assert attach(local, "realais", real_cluster).status_code == 200
    try:
        bck = local.client().bucket(name, namespace=Namespace(uuid="realais"))
        assert [e.name for e in bck.list_all_objects()] == ["r.bin"]
        assert read(bck, "r.bin") == content_for("r", 40_000)
        bck.object("w.bin").get_writer().put_content(b"written through")
        assert b"".join(real.object("w.bin").get_reader()) == b"written through"
    finally:
        assert detach(local, "realais").status_code == 200


def test_remote_down_cached_stays_readable_nothing_partial(local: LocalServer) -> None:
    """The remote stops: what was cached is still served; a cold GET, a listing and a PUT fail
    with an error naming the remote (nothing is cached or written locally); it restarts: served."""
    with LocalServer(num_mountpaths=1) as flaky:
        assert attach(local, "flaky", flaky.endpoint).status_code == 200
        try:
            name = filled(flaky, {"warm": b"cached before", "cold": content_for("cold", 90_000)})
            bck = local.client().bucket(name, namespace=Namespace(uuid="flaky"))
            assert read(bck, "warm") == b"cached before"
            flaky.stop(keep_data=True)
            assert read(bck, "warm") == b"cached before"
            params = {"provider": "ais", "namespace": "@flaky#"}
            r = call(local, "GET", f"/v1/objects/{name}/cold", params=params)
            assert r.status_code >= 500 and "remote-cluster[" in r.text, (r.status_code, r.text)
            r = call(local, "PUT", f"/v1/objects/{name}/new", params=params, data=b"not kept")
            assert r.status_code >= 500, (r.status_code, r.text)
            listed = call(
                local, "GET", f"/v1/buckets/{name}", body={"action": "list"}, params=params
            )
            assert listed.status_code >= 500, listed.text
            cached = call(
                local,
                "GET",
                f"/v1/buckets/{name}",
                body={"action": "list", "value": {"flags": "1"}},  # LsCached: local only
                params=params,
            )
            assert cached.status_code == 200, cached.text
            assert [e["name"] for e in cached.json()["entries"]] == ["warm"]
            flaky.start()
            assert read(bck, "cold") == content_for("cold", 90_000)
        finally:
            assert detach(local, "flaky").status_code == 200


def test_prefetch_evict_and_copy_out(local: LocalServer, remote: LocalServer) -> None:
    """The cache jobs on a remote cluster's bucket, and a copy of it into a local bucket."""
    objects = {f"p{i}": content_for(f"p{i}", 3000 + i) for i in range(3)}
    name = filled(remote, objects)
    bck = through(local, name)

    def cached() -> list[str]:
        return sorted(e.name for e in bck.list_all_objects(flags=[ListObjectFlag.CACHED]))

    assert cached() == []
    # (raw: the SDK's prefetch and evict refuse a bucket of provider ais, whatever its namespace)
    params = {"provider": "ais", "namespace": f"@{ALIAS}#"}

    def job(method: str, action: str, names: list[str]) -> None:
        body = {"action": action, "value": {"objnames": names}}
        r = call(local, method, f"/v1/buckets/{name}", body=body, params=params)
        assert r.status_code == 200, r.text
        wait_job(local.endpoint, r.text)

    job("POST", "prefetch-listrange", ["p0", "p2"])
    assert cached() == ["p0", "p2"]
    job("DELETE", "evict-listrange", ["p0"])
    assert cached() == ["p2"]
    dst = local.client().bucket(unique("copied"))
    wait_job(local.endpoint, bck.copy(dst, latest=True))
    assert sorted(e.name for e in dst.list_all_objects()) == [
        "p2"
    ]  # the cached ones, as AIS's default
    assert read(dst, "p2") == objects["p2"]
