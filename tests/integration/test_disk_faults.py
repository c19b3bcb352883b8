"""Disk faults under a running server: a full disk, a mountpath that fails or vanishes, and the
mountpath enable/disable API (`GET /v1/daemon?what=mountpaths`, `POST /v1/daemon/mountpaths`).

Real filesystems: each server gets tmpfs mountpaths (`mount -t tmpfs -o size=...`). Where mount is
refused (not root, no CAP_SYS_ADMIN) the module is skipped. Everything mounted is unmounted at
module teardown, also on failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _util import (
    content_for,
    create_bucket,
    error_doc,
    list_names,
    obj_path,
    object_files,
    raw_request,
    wait_until,
    work_files,
)

from aistore.server import LocalServer

MiB = 1 << 20


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        check=True,
        capture_output=True,
    )


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


class Mounts:
    """tmpfs mounts made by this module; all unmounted by cleanup()."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ais-disk-faults-"))
        self.mounted: list[Path] = []

    def tmpfs(self, name: str, size: str) -> Path:
        p = self.root / name
        _mount_tmpfs(p, size)
        self.mounted.append(p)
        return p

    def cleanup(self) -> None:
        for p in reversed(self.mounted):
            _umount(p)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def mounts() -> Iterator[Mounts]:
    m = Mounts()
    try:
        m.tmpfs("probe", "1m")
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        m.cleanup()
        err = (getattr(e, "stderr", b"") or b"").decode(errors="replace").strip()
        pytest.skip(f"cannot mount tmpfs here (needs root or CAP_SYS_ADMIN): {err}")
    yield m
    m.cleanup()


def put(ep: str, bucket: str, name: str, data: bytes) -> tuple[int, bytes]:
    r = raw_request(ep, "PUT", obj_path(bucket, name), body=data)
    return r.status, r.body


def get(ep: str, bucket: str, name: str) -> tuple[int, bytes]:
    r = raw_request(ep, "GET", obj_path(bucket, name))
    return r.status, r.body


def mountpaths(ep: str) -> dict[str, list[str]]:
    r = raw_request(ep, "GET", "/v1/daemon?what=mountpaths")
    assert r.status == 200, r.body
    doc: dict[str, list[str]] = json.loads(r.body)
    return doc


def mp_action(ep: str, action: str, value: object, method: str = "POST") -> tuple[int, bytes]:
    body = json.dumps({"action": action, "value": value}).encode()
    r = raw_request(
        ep, method, "/v1/daemon/mountpaths", headers={"Content-Type": "application/json"}, body=body
    )
    return r.status, r.body


# ---- disk full ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def full_srv(mounts: Mounts) -> Iterator[LocalServer]:
    mp = mounts.tmpfs("full", "8m")
    with LocalServer([mp]) as srv:
        yield srv


def assert_507(status: int, body: bytes, method: str = "PUT") -> None:
    assert status == 507, (status, body[:300])
    doc = error_doc(status, {"Content-Type": "application/json"}, body, method)
    assert doc["status"] == 507
    assert "no space left on device" in doc["message"].lower(), doc


def test_put_on_full_disk_is_507_and_leaves_nothing(full_srv: LocalServer) -> None:
    ep, mps = full_srv.endpoint, full_srv.mountpaths
    create_bucket(ep, "full")
    keep = content_for("keep", 1 * MiB)
    assert put(ep, "full", "keep", keep)[0] == 200
    # Monolithic, then chunked (the bucket chunks objects from 1 MiB on).
    status, body = put(ep, "full", "big", content_for("big", 12 * MiB))
    assert_507(status, body)
    create_bucket(ep, "fullch", {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}})
    status, body = put(ep, "fullch", "big", content_for("bigc", 12 * MiB))
    assert_507(status, body)
    assert work_files(mps) == []
    assert not any((Path(mps[0]) / "ais" / "fullch" / "%ch").glob("*/*")), "chunks left behind"
    for b in ("full", "fullch"):
        assert raw_request(ep, "HEAD", obj_path(b, "big")).status == 404
    # Reads and listing keep working, byte-exact.
    assert get(ep, "full", "keep") == (200, keep)
    assert list_names(ep, "full") == {"keep"}


def test_append_copy_and_multipart_on_full_disk(full_srv: LocalServer) -> None:
    ep, mps = full_srv.endpoint, full_srv.mountpaths
    create_bucket(ep, "full2")
    # Multipart: one part too big for the disk.
    r = raw_request(
        ep,
        "POST",
        obj_path("full2", "mpu"),
        headers={"Content-Type": "application/json"},
        body=json.dumps({"action": "mpt-upload", "name": "", "value": None}).encode(),
    )
    assert r.status == 200, r.body
    upload_id = r.body.decode()
    r = raw_request(
        ep,
        "PUT",
        obj_path("full2", "mpu") + f"?uploadId={upload_id}&partNumber=1",
        body=content_for("part", 12 * MiB),
    )
    assert_507(r.status, r.body)
    # Append: grows past the disk.
    r = raw_request(
        ep,
        "PUT",
        obj_path("full2", "app") + "?append_type=append",
        body=content_for("app", 12 * MiB),
    )
    assert_507(r.status, r.body)
    # Fill the disk with 2 MiB objects until a PUT fails.
    src = content_for("src", 2 * MiB)
    assert put(ep, "full2", "src", src)[0] == 200
    statuses = []
    for i in range(6):
        s, b = put(ep, "full2", f"copy{i}", src)
        statuses.append(s)
        if s != 200:
            assert_507(s, b)
            break
    assert 507 in statuses, statuses
    assert [p for p in work_files(mps) if p.endswith(".tmp")] == []
    assert get(ep, "full2", "src") == (200, src)


def test_put_works_again_after_space_is_freed(full_srv: LocalServer) -> None:
    ep = full_srv.endpoint
    create_bucket(ep, "full3")
    data = content_for("again", 5 * MiB)
    # Fill the disk, fail, free, succeed.
    names = [n for n in list_names(ep, "full2") if n.startswith("copy")]
    status, body = put(ep, "full3", "again", data)
    if status == 200:
        status, body = put(ep, "full3", "again2", data)
    assert_507(status, body)
    for n in names + ["src"]:
        assert raw_request(ep, "DELETE", obj_path("full2", n)).status == 200
    assert put(ep, "full3", "again3", data)[0] == 200
    assert get(ep, "full3", "again3") == (200, data)


# ---- mountpath failure and the enable/disable API ----------------------------------------------


@pytest.fixture(scope="module")
def mp_srv(mounts: Mounts) -> Iterator[LocalServer]:
    mps = [mounts.tmpfs(f"mp{i}", "64m") for i in range(4)]
    with LocalServer(mps) as srv:
        yield srv


def where(srv: LocalServer, bucket: str) -> dict[str, Path]:
    return object_files(srv.mountpaths, bucket)


def on_mp(srv: LocalServer, bucket: str, mp: Path) -> set[str]:
    return {n for n, p in where(srv, bucket).items() if str(p).startswith(str(mp) + "/")}


def test_mountpaths_listed_as_ais(mp_srv: LocalServer) -> None:
    got = mountpaths(mp_srv.endpoint)
    assert set(got) == {"available", "waiting_dd", "disabled"}
    assert sorted(got["available"]) == sorted(str(p) for p in mp_srv.mountpaths)
    assert got["disabled"] == [] and got["waiting_dd"] == []


def test_mountpath_api_errors(mp_srv: LocalServer) -> None:
    ep = mp_srv.endpoint
    assert mp_action(ep, "disable-mp", None)[0] == 400
    assert mp_action(ep, "disable-mp", 7)[0] == 400
    assert mp_action(ep, "disable-mp", "/no/such/mountpath")[0] == 404
    assert mp_action(ep, "explode-mp", str(mp_srv.mountpaths[0]))[0] == 400
    assert mp_action(ep, "attach-mp", "/new/disk", method="PUT")[0] == 404  # no such directory


def test_disable_enable_keeps_the_newest_bytes(mp_srv: LocalServer) -> None:
    ep = mp_srv.endpoint
    b = f"api-{uuid.uuid4().hex[:6]}"
    create_bucket(ep, b)
    data = {f"o{i}": content_for(f"{b}{i}", 10_000 + i) for i in range(40)}
    for n, d in data.items():
        assert put(ep, b, n, d)[0] == 200
    victim = Path(mp_srv.mountpaths[1])
    lost = on_mp(mp_srv, b, victim)
    assert lost, "no object on the victim mountpath"
    assert mp_action(ep, "disable-mp", str(victim))[0] == 200
    assert str(victim) in mountpaths(ep)["disabled"]
    for n, d in data.items():
        s, body = get(ep, b, n)
        assert s == 404 if n in lost else (s, body) == (200, d), (n, s)
    assert list_names(ep, b) == set(data) - lost
    # Overwrite one lost object while disabled: it goes to another mountpath.
    name = sorted(lost)[0]
    new = b"new bytes " * 100
    assert put(ep, b, name, new)[0] == 200
    assert get(ep, b, name) == (200, new)
    # Persisted as AIS does: still disabled after a restart.
    mp_srv.restart()
    assert str(victim) in mountpaths(ep)["disabled"]
    assert get(ep, b, name) == (200, new)
    # Enable: the old copy on the victim loses to the newer one; the rest come back.
    assert mp_action(ep, "enable-mp", str(victim))[0] == 200
    assert mountpaths(ep)["disabled"] == []
    assert get(ep, b, name) == (200, new)
    for n, d in data.items():
        if n != name:
            assert get(ep, b, n) == (200, d), n
    assert list_names(ep, b) == set(data)
    where(mp_srv, b)  # asserts each object is stored once
    # Overwrite after enable: the copy written elsewhere is replaced, not shadowed.
    newer = b"newer" * 10
    assert put(ep, b, name, newer)[0] == 200
    assert get(ep, b, name) == (200, newer)
    where(mp_srv, b)


def test_unmounted_mountpath_is_disabled_and_server_goes_on(
    mp_srv: LocalServer, mounts: Mounts
) -> None:
    ep = mp_srv.endpoint
    b = f"umnt-{uuid.uuid4().hex[:6]}"
    create_bucket(ep, b)
    create_bucket(ep, b + "c", {"chunks": {"objsize_limit": "64KiB", "chunk_size": "16KiB"}})
    data = {f"o{i}": content_for(f"{b}{i}", 5_000 + 37 * i) for i in range(40)}
    big = content_for("big", 200_000)  # 13 chunks: some on every mountpath
    for n, d in data.items():
        assert put(ep, b, n, d)[0] == 200
    assert put(ep, b + "c", "big", big)[0] == 200
    victim = Path(mp_srv.mountpaths[2])
    lost = on_mp(mp_srv, b, victim)
    big_header_lost = "big" in on_mp(mp_srv, b + "c", victim)
    _umount(victim)
    wait_until(
        lambda: str(victim) in mountpaths(ep)["disabled"],
        5,
        "FSHC disables the unmounted mountpath",
    )
    # The flag is set before the log line is written: wait for the line as well.
    line = f"mountpath {victim} disabled"
    log = ""

    def logged() -> bool:
        nonlocal log
        log = raw_request(ep, "GET", "/v1/daemon?what=log").body.decode(errors="replace")
        return line in log

    try:
        wait_until(logged, 5, f"log line {line!r}", interval=0.05)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{log[-2000:]}") from None
    for n, d in data.items():
        s, body = get(ep, b, n)
        if n in lost:
            assert s == 404, (n, s)
        else:
            assert (s, body) == (200, d), n
    s, body = get(ep, b + "c", "big")
    # Its header (404) or one of its chunks (5xx) lived there: an error, never wrong bytes.
    assert s == 404 if big_header_lost else s >= 500, s
    # New PUTs go to the remaining mountpaths.
    fresh = {f"n{i}": content_for(f"{b}n{i}", 3_000 + i) for i in range(40)}
    for n, d in fresh.items():
        assert put(ep, b, n, d)[0] == 200
    assert put(ep, b + "c", "big2", big)[0] == 200
    for n, d in fresh.items():
        assert get(ep, b, n) == (200, d)
    assert get(ep, b + "c", "big2") == (200, big)
    # A fresh disk at the same place; enable it: everything written meanwhile stays readable.
    _mount_tmpfs(victim, "64m")
    mounts.mounted.append(victim)
    assert mp_action(ep, "enable-mp", str(victim))[0] == 200
    for n, d in fresh.items():
        assert get(ep, b, n) == (200, d)
    assert get(ep, b + "c", "big2") == (200, big)


def test_read_only_and_vanished_mountpaths(mp_srv: LocalServer, mounts: Mounts) -> None:
    ep = mp_srv.endpoint
    b = f"ro-{uuid.uuid4().hex[:6]}"
    create_bucket(ep, b)
    ro = Path(mp_srv.mountpaths[3])
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    try:
        # Every PUT succeeds: a write that hits EROFS disables the mountpath and moves on.
        # Only such a write disables it (the health thread does not probe writes), so enough
        # objects that one surely hashes to it: 80 miss 1 of 4 mountpaths with p = 0.75**80.
        data = {f"o{i}": content_for(f"{b}{i}", 2_000 + i) for i in range(80)}
        for n, d in data.items():
            assert put(ep, b, n, d)[0] == 200, n
        assert str(ro) in mountpaths(ep)["disabled"]
        for n, d in data.items():
            assert get(ep, b, n) == (200, d)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(ro)], check=True)
    assert mp_action(ep, "enable-mp", str(ro))[0] == 200
    # A mountpath whose directory vanishes (its filesystem unmounted and the dir removed).
    gone = Path(mp_srv.mountpaths[0])
    _umount(gone)
    os.rmdir(gone)
    more = {f"m{i}": content_for(f"{b}m{i}", 1_000 + i) for i in range(30)}
    for n, d in more.items():
        assert put(ep, b, n, d)[0] == 200, n
    # A PUT that lands there disables it; if none did, the 1 s health thread does.
    wait_until(
        lambda: str(gone) in mountpaths(ep)["disabled"], 5, "the vanished mountpath disabled"
    )
    for n, d in more.items():
        assert get(ep, b, n) == (200, d)
    assert mp_action(ep, "enable-mp", str(gone))[0] >= 500  # nothing there to enable
    _mount_tmpfs(gone, "64m")
    mounts.mounted.append(gone)
