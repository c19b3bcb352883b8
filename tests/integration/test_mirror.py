"""The n-way mirror (AIS `mirror.enabled`/`mirror.copies`, the `make-n-copies` job) against the real
server on four temporary mountpaths: copies on other mountpaths, kept in step with their object,
and a mountpath lost while the server runs (and after a restart) loses no object.

One server for the module; the test that removes a mountpath runs last (it leaves the server with
three).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from _ais_cli import NEEDS_CLI, Cli
from _util import (
    DIR_SUFFIX,
    content_for,
    create_bucket,
    error_doc,
    list_names,
    obj_path,
    object_files,
    raw_request,
    read_object_meta,
    wait_job,
    wait_until,
)

from aistore.server import LocalServer

MIRROR2 = {"mirror": {"enabled": True, "copies": 2}}
CHUNKED = {"chunks": {"objsize_limit": "64KiB", "chunk_size": "16KiB"}}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    srv = LocalServer(num_mountpaths=4).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as s:
        yield s


def mirror_files(mountpaths: list[Path], bucket: str) -> dict[str, list[Path]]:
    """Object name -> its copy files, from every `<mp>/ais/<bucket>/%mi` tree."""
    out: dict[str, list[Path]] = {}
    for mp in mountpaths:
        root = Path(mp) / "ais" / bucket / "%mi"
        if not root.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = Path(dirpath) / f
                parts = list(p.relative_to(root).parts)
                name = "/".join([q[: -len(DIR_SUFFIX)] for q in parts[:-1]] + [parts[-1]])
                out.setdefault(name, []).append(p)
    return out


def put(srv: LocalServer, http: requests.Session, bucket: str, name: str, data: bytes) -> None:
    r = http.put(srv.endpoint + obj_path(bucket, name), data=data, timeout=30)
    assert r.status_code == 200, r.text


def get(srv: LocalServer, http: requests.Session, bucket: str, name: str) -> bytes:
    r = http.get(srv.endpoint + obj_path(bucket, name), timeout=30)
    assert r.status_code == 200, f"GET {bucket}/{name}: {r.status_code} {r.text[:300]}"
    return r.content


def set_props(srv: LocalServer, bucket: str, value: dict[str, Any]) -> Any:
    return raw_request(
        srv.endpoint,
        "PATCH",
        f"/v1/buckets/{bucket}?provider=ais",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"action": "set-bprops", "name": "", "value": value}).encode(),
    )


def make_n_copies(srv: LocalServer, bucket: str, n: Any) -> Any:
    r = raw_request(
        srv.endpoint,
        "POST",
        f"/v1/buckets/{bucket}?provider=ais",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"action": "make-n-copies", "name": "", "value": n}).encode(),
    )
    return r


def job_objects(srv: LocalServer, job_id: str) -> int:
    """The objects a job counted (its snapshot's stats.loc-objs)."""
    r = raw_request(
        srv.endpoint,
        "GET",
        "/v1/cluster?what=qryxstats",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"id": job_id}).encode(),
    )
    assert r.status == 200, r.body
    snaps = [s for per_node in json.loads(r.body).values() for s in per_node]
    assert len(snaps) == 1, snaps
    return int(snaps[0]["stats"]["loc-objs"])


def disabled_mountpaths(srv: LocalServer) -> list[str]:
    r = raw_request(srv.endpoint, "GET", "/v1/daemon?what=mountpaths")
    assert r.status == 200, r.body
    disabled: list[str] = json.loads(r.body).get("disabled") or []
    return disabled


def bucket_props(srv: LocalServer, bucket: str) -> dict[str, Any]:
    r = raw_request(srv.endpoint, "HEAD", f"/v1/buckets/{bucket}?provider=ais")
    assert r.status == 200
    props: dict[str, Any] = json.loads(r.headers["Ais-Bucket-Props"])
    return props


def test_bad_mirror_props_are_refused_naming_the_field(server: LocalServer) -> None:
    create_bucket(server.endpoint, "props")
    for value, field in [
        ({"mirror": {"enabled": True, "copies": 1}}, "mirror.copies"),
        ({"mirror": {"enabled": True, "copies": 33}}, "mirror.copies"),
        ({"mirror": {"enabled": True, "copies": 5}}, "mirror.copies"),  # 4 mountpaths
        ({"mirror": {"enabled": "yes"}}, "mirror.enabled"),
        ({"mirror": {"copies": "two"}}, "mirror.copies"),
    ]:
        r = set_props(server, "props", value)
        assert r.status == 400, (value, r.body)
        doc = error_doc(r.status, r.headers, r.body, "PATCH")
        assert field in doc["message"], (value, doc)
    assert bucket_props(server, "props")["mirror"]["enabled"] is False
    for n in [0, 5, 33, "x", None, [2]]:
        r = make_n_copies(server, "props", n)
        assert r.status == 400, (n, r.body)
        assert "copies" in error_doc(r.status, r.headers, r.body, "POST")["message"]
    r = raw_request(
        server.endpoint,
        "POST",
        "/v1/buckets/props5?provider=ais",
        headers={"Content-Type": "application/json"},
        body=json.dumps(
            {
                "action": "create-bck",
                "name": "",
                "value": {"mirror": {"enabled": True, "copies": 5}},
            }
        ).encode(),
    )
    assert r.status == 400 and b"mirror.copies" in r.body, r.body
    assert raw_request(server.endpoint, "HEAD", "/v1/buckets/props5?provider=ais").status == 404


def test_copies_follow_put_overwrite_append_rename_delete(
    server: LocalServer, http: requests.Session
) -> None:
    mps = server.mountpaths
    create_bucket(server.endpoint, "steps", {**MIRROR2, **CHUNKED})
    assert bucket_props(server, "steps")["mirror"] == {
        "enabled": True,
        "copies": 2,
        "burst_buffer": 128,
    }
    put(server, http, "steps", "small", b"v1")
    put(server, http, "steps", "big", content_for("big", 200_000))  # chunked
    copies = mirror_files(mps, "steps")
    objs = object_files(mps, "steps")
    for name in ("small", "big"):
        assert len(copies[name]) == 1, copies
        assert (
            copies[name][0].parents[len(Path(name).parts) + 2]
            != objs[name].parents[len(Path(name).parts) + 2]
        ), "a copy on its object's own mountpath"
    big_copy = read_object_meta(copies["big"][0])
    assert "u" not in big_copy and big_copy["s"] == 200_000  # whole, not chunks
    # HEAD says where.
    r = raw_request(server.endpoint, "HEAD", obj_path("steps", "big") + "?props=copies")
    assert r.headers["Ais-Mirror-Copies"] == "2", dict(r.headers)
    # Overwrite: the copy is the new version.
    put(server, http, "steps", "small", b"v2-longer")
    meta = read_object_meta(mirror_files(mps, "steps")["small"][0])
    assert meta["v"] == read_object_meta(object_files(mps, "steps")["small"])["v"] == 2
    assert meta["s"] == len(b"v2-longer")
    # Append (AIS append + flush): the copy follows.
    r = http.put(
        server.endpoint + obj_path("steps", "small"),
        params={"append_type": "append"},
        data=b"+more",
    )
    assert r.status_code == 200, r.text
    handle = r.headers["Ais-Append-Handle"]
    r = http.put(
        server.endpoint + obj_path("steps", "small"),
        params={"append_type": "flush", "append_handle": handle},
    )
    assert r.status_code == 200, r.text
    assert get(server, http, "steps", "small") == b"v2-longer+more"
    assert read_object_meta(mirror_files(mps, "steps")["small"][0])["s"] == len(b"v2-longer+more")
    # Rename: the copies move with the name.
    r = http.post(
        server.endpoint + obj_path("steps", "big"),
        json={"action": "rename-obj", "name": "big2", "value": None},
    )
    assert r.status_code == 200, r.text
    assert set(mirror_files(mps, "steps")) == {"small", "big2"}
    # The listing shows each object once.
    assert list_names(server.endpoint, "steps") == {"small", "big2"}
    # Delete: no copy stays.
    for name in ("small", "big2"):
        assert http.delete(server.endpoint + obj_path("steps", name)).status_code == 200
    assert mirror_files(mps, "steps") == {}
    assert list_names(server.endpoint, "steps") == set()


def test_make_n_copies_up_and_down(server: LocalServer, http: requests.Session) -> None:
    mps = server.mountpaths
    create_bucket(server.endpoint, "mnc", CHUNKED)
    names = [f"d{i % 7}/o{i}" for i in range(60)] + ["chunky"]
    sizes = {n: 100 + i for i, n in enumerate(names)}
    sizes["chunky"] = 150_000
    for n in names:
        put(server, http, "mnc", n, content_for(n, sizes[n]))
    assert mirror_files(mps, "mnc") == {}
    for n_copies in (3, 2, 4, 1):
        r = make_n_copies(server, "mnc", n_copies)
        assert r.status == 200, r.body
        job_id = r.body.decode()
        st = wait_job(server.endpoint, job_id)
        assert not st["err"], st
        assert job_objects(server, job_id) == len(names)
        copies = mirror_files(mps, "mnc")
        if n_copies == 1:
            assert copies == {}
        else:
            assert set(copies) == set(names)
            assert all(len(c) == n_copies - 1 for c in copies.values()), copies
        props = bucket_props(server, "mnc")["mirror"]
        assert props["enabled"] is (n_copies > 1) and (n_copies == 1 or props["copies"] == n_copies)
        assert list_names(server.endpoint, "mnc") == set(names)
    for n in names:
        assert get(server, http, "mnc", n) == content_for(n, sizes[n])
    # The job shows as AIS names it.
    r = raw_request(
        server.endpoint,
        "GET",
        "/v1/cluster?what=qryxstats",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"kind": "make-n-copies"}).encode(),
    )
    assert r.status == 200 and b"make-n-copies" in r.body, r.body


@NEEDS_CLI
def test_ais_start_mirror(
    server: LocalServer, http: requests.Session, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cli = Cli(server.endpoint, tmp_path_factory.mktemp("ais-cli-home"))
    create_bucket(server.endpoint, "cli")
    for i in range(5):
        put(server, http, "cli", f"o{i}", content_for(f"o{i}", 500))
    cli.ok("start", "mirror", "ais://cli", "--copies", "3")
    wait_until(
        lambda: (
            all(len(c) == 2 for c in mirror_files(server.mountpaths, "cli").values())
            and len(mirror_files(server.mountpaths, "cli")) == 5
        ),
        30,
        "3 copies of every object",
    )
    assert bucket_props(server, "cli")["mirror"]["copies"] == 3
    cli.ok("start", "mirror", "ais://cli", "--copies", "1")
    wait_until(lambda: mirror_files(server.mountpaths, "cli") == {}, 30, "no copies left")
    assert bucket_props(server, "cli")["mirror"]["enabled"] is False


def test_cleanup_keeps_copies(server: LocalServer, http: requests.Session) -> None:
    create_bucket(server.endpoint, "clean", {**MIRROR2, **CHUNKED})
    put(server, http, "clean", "c", content_for("c", 100_000))
    before = mirror_files(server.mountpaths, "clean")
    r = raw_request(
        server.endpoint,
        "PUT",
        "/v1/cluster",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"action": "start", "value": {"kind": "cleanup-store"}}).encode(),
    )
    assert r.status == 200, r.body
    wait_job(server.endpoint, r.body.decode())
    assert mirror_files(server.mountpaths, "clean") == before
    assert get(server, http, "clean", "c") == content_for("c", 100_000)


def _check_all(srv: LocalServer, bucket: str, sizes: dict[str, int]) -> None:
    def one(name: str) -> str | None:
        with requests.get(srv.endpoint + obj_path(bucket, name), timeout=30) as r:
            if r.status_code != 200:
                return f"{name}: {r.status_code} {r.text[:200]}"
            if r.content != content_for(name, sizes[name]):
                return f"{name}: wrong bytes"
        return None

    with ThreadPoolExecutor(8) as pool:
        bad = [e for e in pool.map(one, sizes) if e]
    assert bad == [], f"{len(bad)} objects lost or wrong, e.g. {bad[:5]}"
    assert list_names(srv.endpoint, bucket) == set(sizes)


def test_a_lost_mountpath_loses_no_object(server: LocalServer, http: requests.Session) -> None:
    """Runs last: it leaves the server with one mountpath gone."""
    create_bucket(server.endpoint, "lost", {**MIRROR2, **CHUNKED})
    sizes = {f"s/{i:04d}": 10 + (i * 37) % 3000 for i in range(1000)}
    sizes.update({f"chunked-{i}": 100_000 + 4099 * i for i in range(4)})

    def put_one(name: str) -> None:
        with requests.put(
            server.endpoint + obj_path("lost", name),
            data=content_for(name, sizes[name]),
            timeout=30,
        ) as r:
            assert r.status_code == 200, r.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put_one, sizes))
    # Overwrite and delete some: the copies must follow, or the loss below resurrects or ages them.
    for i in range(0, 40, 4):
        name = f"s/{i:04d}"
        sizes[name] += 1
        put_one(name)
    for i in range(1, 40, 4):
        name = f"s/{i:04d}"
        assert http.delete(server.endpoint + obj_path("lost", name)).status_code == 200
        del sizes[name]
    objs = object_files(server.mountpaths, "lost")
    victim = server.mountpaths[1]
    on_victim = [n for n, p in objs.items() if Path(victim) in p.parents]
    assert len(on_victim) > 100  # the test means something: a quarter of the objects lived there
    shutil.rmtree(victim)  # the disk is gone, under the running server
    _check_all(server, "lost", sizes)
    # The health checker takes it out of service.
    wait_until(
        lambda: str(victim) in disabled_mountpaths(server), 10, "the lost mountpath to be disabled"
    )
    # And after a restart (the directory is still gone).
    server.restart()
    _check_all(server, "lost", sizes)
    # make-n-copies brings every object back to two copies on the mountpaths in service.
    r = make_n_copies(server, "lost", 2)
    assert r.status == 200, r.body
    st = wait_job(server.endpoint, r.body.decode(), timeout=120)
    assert not st["err"], st
    live = [mp for mp in server.mountpaths if Path(mp).is_dir()]
    copies = mirror_files(live, "lost")
    objs = object_files(live, "lost")
    assert set(objs) == set(sizes), set(sizes) ^ set(objs)
    missing = [n for n in sizes if len(copies.get(n, [])) != 1]
    assert missing == [], [(n, copies.get(n), objs[n]) for n in missing[:3]]
    mp_of = {n: next(mp for mp in live if Path(mp) in p.parents) for n, p in objs.items()}
    beside = [n for n in sizes if Path(mp_of[n]) in copies[n][0].parents]
    assert beside == [], beside[:5]
    _check_all(server, "lost", sizes)
