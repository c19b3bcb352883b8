"""Mountpaths attached and detached at run time (AIS `attach-mp` / `detach-mp`, `ais storage
mountpath attach|detach`) and the `resilver` job that follows every change: objects (and their
chunks) move to where HRW placement now wants them, mirrored objects get their copies back, reads
stay byte-exact throughout, and a kill -9 in the middle loses nothing.

One server for the module (four temporary mountpaths); the tests run in order and build on each
other's state; the last one removes a mountpath's directory under the running server.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from _ais_cli import NEEDS_CLI, Cli
from _util import (
    content_for,
    create_bucket,
    error_doc,
    list_names,
    obj_path,
    object_files,
    raw_request,
    wait_job,
    wait_until,
    work_files,
)

from aistore.server import LocalServer

CHUNKED = {"chunks": {"objsize_limit": "64KiB", "chunk_size": "16KiB"}}
MIRROR2 = {"mirror": {"enabled": True, "copies": 2}}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    srv = LocalServer(num_mountpaths=4).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def spare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the directories the tests attach live (outside the server's mountpaths)."""
    return tmp_path_factory.mktemp("spare-disks")


# ---- helpers --------------------------------------------------------------------------------


def mp_action(
    srv: LocalServer, action: str, value: object, method: str, query: str = ""
) -> tuple[int, str]:
    body = json.dumps({"action": action, "value": value}).encode()
    r = raw_request(
        srv.endpoint,
        method,
        "/v1/daemon/mountpaths" + query,
        headers={"Content-Type": "application/json"},
        body=body,
    )
    text = r.body.decode(errors="replace")
    if r.status >= 400:
        text = error_doc(r.status, r.headers, r.body, method)["message"]
    return r.status, text


def attach(srv: LocalServer, path: Path | str) -> tuple[int, str]:
    return mp_action(srv, "attach-mp", str(path), "PUT")


def detach(srv: LocalServer, path: Path | str, query: str = "") -> tuple[int, str]:
    return mp_action(srv, "detach-mp", str(path), "DELETE", query)


def mountpaths(srv: LocalServer) -> dict[str, list[str]]:
    r = raw_request(srv.endpoint, "GET", "/v1/daemon?what=mountpaths")
    assert r.status == 200, r.body
    doc: dict[str, list[str]] = json.loads(r.body)
    return doc


def in_service(srv: LocalServer) -> list[Path]:
    """The mountpaths whose objects are read: available and leaving."""
    doc = mountpaths(srv)
    return [Path(p) for p in doc["available"] + doc["waiting_dd"]]


def resilver_jobs(srv: LocalServer) -> list[dict[str, Any]]:
    r = raw_request(
        srv.endpoint,
        "GET",
        "/v1/cluster?what=qryxstats",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"kind": "resilver"}).encode(),
    )
    assert r.status == 200, r.body
    return [s for per_node in json.loads(r.body).values() for s in per_node]


def wait_resilvered(srv: LocalServer, known: set[str], timeout: float = 120) -> dict[str, Any]:
    """Waits for the resilver started after `known` (job IDs seen before) to end without error,
    and for no other one to run; returns its snapshot."""

    def settled() -> dict[str, Any] | None:
        jobs = resilver_jobs(srv)
        new = [j for j in jobs if j["id"] not in known]
        running = [j for j in jobs if running_job(j)]
        if not new or running:
            return None
        done = [j for j in new if not j["aborted"]]
        return done[0] if done else None

    snap: dict[str, Any] = wait_until(settled, timeout, "the resilver to finish", interval=0.05)
    st = wait_job(srv.endpoint, snap["id"])
    assert not st["err"], st
    return snap


def running_job(snap: dict[str, Any]) -> bool:
    return str(snap["end-time"]).startswith("0001")  # Go's zero time: no end yet


def job_ids(srv: LocalServer) -> set[str]:
    return {j["id"] for j in resilver_jobs(srv)}


def put_all(srv: LocalServer, bucket: str, sizes: dict[str, int]) -> None:
    def put_one(name: str) -> None:
        r = requests.put(
            srv.endpoint + obj_path(bucket, name), data=content_for(name, sizes[name]), timeout=30
        )
        assert r.status_code == 200, r.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put_one, sizes))


def check_all(srv: LocalServer, bucket: str, sizes: dict[str, int]) -> None:
    """Every object byte-exact, the listing exactly the names (each once)."""

    def get_one(name: str) -> None:
        r = requests.get(srv.endpoint + obj_path(bucket, name), timeout=30)
        assert r.status_code == 200, f"GET {bucket}/{name}: {r.status_code} {r.text[:200]}"
        assert r.content == content_for(name, sizes[name]), f"{bucket}/{name}: wrong bytes"

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(get_one, sizes))
    assert list_names(srv.endpoint, bucket) == set(sizes)


class Reader:
    """GETs every object over and over on a thread while a resilver runs; remembers failures."""

    def __init__(self, srv: LocalServer, bucket: str, sizes: dict[str, int]) -> None:
        self.srv, self.bucket, self.sizes = srv, bucket, sizes
        self.failures: list[str] = []
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with requests.Session() as s:
            while not self._stop.is_set():
                for name, size in self.sizes.items():
                    if self._stop.is_set():
                        return
                    r = s.get(self.srv.endpoint + obj_path(self.bucket, name), timeout=30)
                    self.reads += 1
                    if r.status_code != 200 or r.content != content_for(name, size):
                        self.failures.append(f"{name}: {r.status_code} {len(r.content)} bytes")

    def __enter__(self) -> Reader:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)


def files_on(mp: Path, bucket: str) -> set[str]:
    return set(object_files([mp], bucket))


SIZES = {f"obj/{i:04d}": 1 + (i * 131) % 4096 for i in range(1000)}
BIG = {f"big-{i}": 100_000 + 4099 * i for i in range(12)}  # chunked: 16 KiB chunks


# ---- tests ----------------------------------------------------------------------------------


def test_attach_and_detach_are_checked(server: LocalServer, spare: Path) -> None:
    mp0 = server.mountpaths[0]
    (spare / "a-file").write_bytes(b"x")
    (mp0 / "inner").mkdir()
    cases: list[tuple[object, int, str]] = [
        ("relative/dir", 400, "absolute"),
        ("/", 400, "root"),
        (str(spare / "none"), 404, "does not exist"),
        (str(spare / "a-file"), 400, "not a directory"),
        (str(mp0), 400, "already attached"),
        (str(mp0) + "/", 400, "already attached"),
        (str(mp0 / "inner"), 400, "nested"),
        (str(mp0.parent), 400, "nested"),
        ("", 400, "mountpath"),
        (7, 400, "mountpath"),
    ]
    for value, status, words in cases:
        got, msg = mp_action(server, "attach-mp", value, "PUT")
        assert (got, words in msg) == (status, True), (value, got, msg)
    got, msg = mp_action(server, "attach-mp", str(spare), "PUT", "?mountpath_label=ssd")
    assert got == 501 and "label" in msg, msg
    got, msg = detach(server, spare / "none")
    assert got == 404 and "does not exist" in msg, msg
    got, msg = detach(server, mp0, "?dntres=maybe")
    assert got == 400 and "dntres" in msg, msg
    doc = mountpaths(server)
    assert sorted(doc["available"]) == sorted(str(p) for p in server.mountpaths), doc
    assert doc["waiting_dd"] == [] and doc["disabled"] == []


def test_attach_moves_a_share_to_the_new_mountpath(server: LocalServer, spare: Path) -> None:
    create_bucket(server.endpoint, "res")
    create_bucket(server.endpoint, "big", CHUNKED)
    put_all(server, "res", SIZES)
    put_all(server, "big", BIG)
    new = spare / "disk5"
    new.mkdir()
    before = job_ids(server)
    with Reader(server, "res", SIZES) as reader:
        assert attach(server, new) == (200, "")
        snap = wait_resilvered(server, before)
    assert reader.failures == [] and reader.reads > 0, reader.failures[:5]
    assert str(new) in mountpaths(server)["available"]
    moved = files_on(new, "res")
    # HRW: about a fifth of the names rank the new mountpath first (1000 / 5 = 200).
    assert 130 < len(moved) < 270, len(moved)
    assert int(snap["stats"]["loc-objs"]) >= len(moved), snap["stats"]
    assert int(snap["stats"]["loc-bytes"]) >= sum(SIZES[n] for n in moved), snap["stats"]
    # Each object once (object_files asserts no name is stored twice), all readable.
    assert set(object_files(in_service(server), "res")) == set(SIZES)
    check_all(server, "res", SIZES)
    check_all(server, "big", BIG)
    assert [f for f in work_files(in_service(server)) if "moving-" in f or f.endswith(".tmp")] == []
    # A second attach of the same directory is refused.
    got, msg = attach(server, new)
    assert got == 400 and "already attached" in msg, msg


def test_detach_moves_everything_off_first(server: LocalServer, spare: Path) -> None:
    gone = server.mountpaths[2]  # one the server was started with: it holds chunks too
    assert files_on(gone, "res"), "the test means something: objects live there"
    before = job_ids(server)
    with Reader(server, "res", SIZES) as reader:
        assert detach(server, gone) == (200, "")
        snap = wait_resilvered(server, before)
    assert reader.failures == [] and reader.reads > 0, reader.failures[:5]
    doc = mountpaths(server)
    assert str(gone) not in doc["available"] + doc["waiting_dd"] + doc["disabled"], doc
    assert int(snap["stats"]["loc-objs"]) > 0
    live = in_service(server)
    assert set(object_files(live, "res")) == set(SIZES)
    # Nothing of ours is needed from it any more: wipe it, every object is still whole.
    shutil.rmtree(gone)
    check_all(server, "res", SIZES)
    check_all(server, "big", BIG)
    gone.mkdir()  # the server's flags name it; it stays detached (test_the_set_survives_a_restart)


def test_the_set_survives_a_restart(server: LocalServer, spare: Path) -> None:
    server.restart()  # same --mountpath flags as at the first start
    doc = mountpaths(server)
    assert str(spare / "disk5") in doc["available"], doc
    assert str(server.mountpaths[2]) not in doc["available"] + doc["disabled"], doc
    check_all(server, "res", SIZES)
    check_all(server, "big", BIG)
    # Attached again, the detached one comes back, and gets its share again.
    before = job_ids(server)
    assert attach(server, server.mountpaths[2]) == (200, "")
    wait_resilvered(server, before)
    assert files_on(server.mountpaths[2], "res")
    check_all(server, "res", SIZES)


def test_the_last_enabled_mountpath_cannot_be_detached(server: LocalServer) -> None:
    doc = mountpaths(server)
    keep, *others = sorted(doc["available"])
    for p in others:
        assert mp_action(server, "disable-mp", p, "POST", "?dntres=true")[0] == 200
    got, msg = detach(server, keep)
    assert got == 400 and "last" in msg, msg
    assert str(keep) in mountpaths(server)["available"]
    before = job_ids(server)
    for p in others:
        assert mp_action(server, "enable-mp", p, "POST")[0] == 200
    wait_resilvered(server, before)
    assert sorted(mountpaths(server)["available"]) == sorted(doc["available"])
    check_all(server, "res", SIZES)
    check_all(server, "big", BIG)


def test_kill_during_resilver_loses_nothing(server: LocalServer, spare: Path) -> None:
    sizes = {f"k/{i:04d}": 64 * 1024 + i for i in range(2000)}
    create_bucket(server.endpoint, "crash")
    put_all(server, "crash", sizes)
    new = spare / "disk6"
    new.mkdir()
    before = job_ids(server)
    assert attach(server, new) == (200, "")

    def progress() -> str | None:
        new = [j for j in resilver_jobs(server) if j["id"] not in before]
        if not new:
            return None
        if not running_job(new[0]):
            return "finished"
        return "moving" if int(new[0]["stats"]["loc-objs"]) > 0 else None

    mid = wait_until(progress, 60, "the resilver to start moving", interval=0.002)
    server.kill()  # kill -9, mid-resilver (if it was still running: `mid` says)
    assert mid == "moving", "the resilver finished before the kill: the test proved nothing"
    server.restart()
    # Right after the restart (the resilver, still pending, runs again meanwhile): every object
    # byte-exact and listed once; recovery finished the move in flight.
    check_all(server, "crash", sizes)
    wait_resilvered(server, set())
    assert set(object_files(in_service(server), "crash")) == set(sizes)  # each stored once
    assert str(new) in mountpaths(server)["available"]
    assert len(files_on(new, "crash")) > 2000 // 8
    check_all(server, "crash", sizes)
    check_all(server, "res", SIZES)
    assert [f for f in work_files(in_service(server)) if "moving-" in f or f.endswith(".tmp")] == []


@NEEDS_CLI
def test_ais_storage_mountpath_attach_detach(
    server: LocalServer, spare: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cli = Cli(server.endpoint, tmp_path_factory.mktemp("ais-cli-home"))
    r = raw_request(server.endpoint, "GET", "/v1/daemon?what=smap")
    (tid,) = json.loads(r.body)["tmap"]  # the one target
    new = spare / "disk7"
    new.mkdir()
    before = job_ids(server)
    out = cli.ok("storage", "mountpath", "attach", f"{tid}={new}")
    assert "attached" in out, out
    wait_resilvered(server, before)
    assert str(new) in mountpaths(server)["available"]
    shown = cli.ok("show", "job", "resilver", "--all")
    assert "resilver" in shown, shown
    before = job_ids(server)
    out = cli.ok("storage", "mountpath", "detach", f"{tid}={new}")
    assert "detached" in out, out
    wait_resilvered(server, before)
    assert str(new) not in mountpaths(server)["available"] + mountpaths(server)["waiting_dd"]
    r2 = cli.run("storage", "mountpath", "attach", f"{tid}={spare / 'nonexisting'}")
    assert r2.returncode != 0 and "does not exist" in r2.stdout + r2.stderr, r2
    check_all(server, "res", SIZES)


def test_mirror_loses_nothing_when_a_mountpath_vanishes(server: LocalServer) -> None:
    """Runs last: a mountpath's directory is removed under the running server."""
    sizes = {f"m/{i:04d}": 10 + (i * 37) % 3000 for i in range(1000)}
    create_bucket(server.endpoint, "mirr", MIRROR2)
    put_all(server, "mirr", sizes)
    live = in_service(server)
    assert len(live) >= 4
    victim = live[1]
    on_victim = files_on(victim, "mirr")
    assert len(on_victim) > 100, "the test means something: objects lived there"
    before = job_ids(server)
    with Reader(server, "mirr", sizes) as reader:
        shutil.rmtree(victim)  # the disk is gone
        wait_until(
            lambda: str(victim) in mountpaths(server)["disabled"], 15, "the lost mountpath disabled"
        )
        wait_resilvered(server, before)
    assert reader.failures == [] and reader.reads > 0, reader.failures[:5]
    check_all(server, "mirr", sizes)
    # Two copies of every object again, on two different mountpaths in service.
    live = in_service(server)
    objs = object_files(live, "mirr")
    assert set(objs) == set(sizes)
    copies: dict[str, list[Path]] = {}
    for mp in live:
        root = mp / "ais" / "mirr" / "%mi"
        for p in root.rglob("*"):
            if p.is_file():
                copies.setdefault(p.relative_to(root).as_posix().replace("\x01", ""), []).append(mp)
    short = [n for n in sizes if len(copies.get(n, [])) != 1]
    assert short == [], short[:5]
    beside = [n for n in sizes if copies[n][0] in objs[n].parents]
    assert beside == [], beside[:5]
