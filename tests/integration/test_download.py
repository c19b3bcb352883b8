"""Download jobs (/v1/download, spec backends-and-downloads §7) against the real server.

One server per module, started with --download-allow-loopback, fetching from a local HTTP server
(_http_files.FileServer) that also plays the faults: 404, a cut-off body, a stall, a slow
sender, a 503 once. A second server without the flag shows the egress guard refusing loopback,
private and link-local addresses. The official `ais` CLI runs the URL job types where
../shared/tools/ais has it.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from _ais_cli import AIS, Cli
from _http_files import FileServer, file_bytes
from _util import work_files

from aistore.sdk.download import DownloadStatus
from aistore.sdk.errors import AISError, DownloadError
from aistore.server import LocalServer

ZERO_TIME = "0001-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def files() -> Iterator[FileServer]:
    fs = FileServer()
    yield fs
    fs.stop()


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2, download_allow_loopback=True) as s:
        yield s


@pytest.fixture(scope="module")
def ep(srv: LocalServer) -> str:
    return srv.endpoint


def bucket_name() -> str:
    return f"dl-{uuid.uuid4().hex[:10]}"


def start(ep: str, body: dict[str, Any]) -> str:
    r = requests.post(f"{ep}/v1/download", json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    job_id = r.json()["id"]
    assert job_id.startswith("dnl-")
    return str(job_id)


def status(ep: str, job_id: str, only_active: bool = False) -> dict[str, Any]:
    r = requests.get(
        f"{ep}/v1/download", json={"id": job_id, "only_active_tasks": only_active}, timeout=30
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def wait(ep: str, job_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        st = status(ep, job_id)
        if st["finished_time"] != ZERO_TIME:
            return st
        assert time.monotonic() < deadline, f"job {job_id} still running: {st}"
        time.sleep(0.05)


def get(ep: str, bucket: str, name: str) -> requests.Response:
    return requests.get(f"{ep}/v1/objects/{bucket}/{name}", timeout=30)


def names(ep: str, bucket: str) -> set[str]:
    r = requests.get(
        f"{ep}/v1/buckets/{bucket}",
        json={"action": "list", "value": {"props": "name"}},
        headers={"Accept": "application/json"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return {e["name"] for e in (r.json().get("entries") or [])}


def error_of(r: requests.Response) -> str:
    return str(r.json()["message"])


# --- job types ------------------------------------------------------------------------------


def test_single(ep: str, files: FileServer) -> None:
    bck = bucket_name()  # does not exist: the job creates it, as AIS does
    link = f"{files.url}/files/5000/a.bin"
    job_id = start(ep, {"type": "single", "bucket": {"name": bck, "provider": "ais"}, "link": link})
    st = wait(ep, job_id)
    assert st["finished_cnt"] == 1 and st["error_cnt"] == 0 and st["total"] == 1
    assert st["scheduled_cnt"] == 1 and st["all_dispatched"] and not st["aborted"]
    assert st["description"] == f"{link} -> ais://{bck}/a.bin"
    assert st["xaction_id"] and st["xaction_id"] != job_id
    (task,) = st["finished_tasks"]
    assert task["name"] == "a.bin"
    assert task["downloaded"] == "5000" and task["total"] == "5000"  # Go's ",string" ints
    assert task["end_time"] != ZERO_TIME and task["start_time"] != ZERO_TIME
    assert "current_tasks" not in st and "download_errors" not in st
    r = get(ep, bck, "a.bin")
    assert r.status_code == 200 and r.content == file_bytes("a.bin", 5000)
    head = requests.head(f"{ep}/v1/objects/{bck}/a.bin", timeout=30)
    assert "source=web" in head.headers.get("Ais-Custom-Md", "")
    assert head.headers["Content-Length"] == "5000" or head.headers.get("Ais-Size") == "5000"


def test_large_file_comes_as_concurrent_ranges(
    srv: LocalServer, ep: str, files: FileServer
) -> None:
    """A file over one part (32 MiB): its first reply is a 206 for the first part, the rest are
    range GETs of their own; the object is byte-exact and appears whole. A server that ignores
    Range sends it whole; one whose file changes between ranges fails it, leaving nothing."""
    bck = bucket_name()
    size = (80 << 20) + 12345  # parts: 32 MiB, 32 MiB, 16 MiB + 12345
    links = {
        "ranged.bin": f"{files.url}/files/{size}/ranged.bin",
        "whole.bin": f"{files.url}/whole/{size}/whole.bin",
        "small.bin": f"{files.url}/files/1000/small.bin",
        "empty.bin": f"{files.url}/files/0/empty.bin",
    }
    st = wait(
        ep, start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": links}), timeout=120
    )
    assert st["finished_cnt"] == 4 and st["error_cnt"] == 0, st
    for name, link in links.items():
        want = file_bytes(name, int(link.split("/")[-2]))
        got = get(ep, bck, name).content
        assert len(got) == len(want) and got == want, name
    assert files.hits[f"/files/{size}/ranged.bin"] == 3  # the first reply and two ranges
    assert files.hits[f"/whole/{size}/whole.bin"] == 1
    sizes = {t["name"]: t.get("total") for t in st["finished_tasks"]}
    assert sizes["ranged.bin"] == str(size) and sizes["whole.bin"] == str(size)

    changing = f"{files.url}/changing/{size}/changing.bin"
    job = start(ep, {"type": "single", "bucket": {"name": bck}, "link": changing})
    st = wait(ep, job, timeout=120)
    assert (
        st["error_cnt"] == 1 and "changed during its download" in st["download_errors"][0]["error"]
    )
    assert "changing.bin" not in names(ep, bck)
    assert not work_files(srv.mountpaths)


def test_single_named_with_query_and_timeout(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    link = f"{files.url}/files/100/q.bin?sig=abc"
    job_id = start(
        ep,
        {
            "type": "single",
            "bucket": {"name": bck},
            "link": link,
            "object_name": "dir/renamed%20it.bin",
            "timeout": "30s",
            "description": "my single",
        },
    )
    st = wait(ep, job_id)
    assert st["description"] == "my single" and st["finished_cnt"] == 1, st
    assert get(ep, bck, "dir/renamed it.bin").content == file_bytes("q.bin", 100)


def test_multi_map_and_list(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    objects = {f"m/{i}.bin": f"{files.url}/files/{1000 + i}/m{i}" for i in range(20)}
    st = wait(ep, start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": objects}))
    assert st["finished_cnt"] == 20 and st["error_cnt"] == 0 and st["total"] == 20, st
    assert st["description"] == f"multi-download -> ais://{bck}"
    assert len(st["finished_tasks"]) == 20
    for i in range(20):
        assert get(ep, bck, f"m/{i}.bin").content == file_bytes(f"m{i}", 1000 + i)
    links = [f"{files.url}/files/300/l{i}.txt" for i in range(5)]
    st = wait(ep, start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": links}))
    assert st["finished_cnt"] == 5, st
    assert {f"l{i}.txt" for i in range(5)} <= names(ep, bck)


def test_range_with_subdir(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    tmpl = f"{files.url}/files/2048/shard-{{01..12}}.tar"
    st = wait(
        ep, start(ep, {"type": "range", "bucket": {"name": bck}, "template": tmpl, "subdir": "sub"})
    )
    assert st["total"] == 12 and st["finished_cnt"] == 12 and st["error_cnt"] == 0, st
    assert st["description"] == f"{tmpl} -> ais://{bck}"
    assert names(ep, bck) == {f"sub/shard-{i:02d}.tar" for i in range(1, 13)}
    assert get(ep, bck, "sub/shard-07.tar").content == file_bytes("shard-07.tar", 2048)


def test_headers_sent_with_every_get(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    body = {
        "type": "single",
        "bucket": {"name": bck},
        "link": f"{files.url}/headers/h.txt",
        "headers": {"Authorization": ["Bearer tok"], "X-Test": ["v1"]},
    }
    wait(ep, start(ep, body))
    assert get(ep, bck, "h.txt").content == b"Bearer tok|v1"


def test_existing_unchanged_object_is_skipped(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    body = {"type": "single", "bucket": {"name": bck}, "link": f"{files.url}/files/700/s.bin"}
    wait(ep, start(ep, body))
    gets = files.hits["/files/700/s.bin"]
    st = wait(ep, start(ep, body))
    assert st["skipped_cnt"] == 1 and st["finished_cnt"] == 1, st
    assert files.hits["/files/700/s.bin"] == gets + 1  # one HEAD, no second GET
    # A different size at the link: fetched again.
    requests.put(f"{ep}/v1/objects/{bck}/s.bin", data=b"x" * 10, timeout=30).raise_for_status()
    st = wait(ep, start(ep, body))
    assert st["skipped_cnt"] == 0 and st["finished_cnt"] == 1, st
    assert get(ep, bck, "s.bin").content == file_bytes("s.bin", 700)


# --- status, list, abort, remove ----------------------------------------------------------------


def test_list_regex_and_remove(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    tag = uuid.uuid4().hex[:8]
    ids = [
        start(
            ep,
            {
                "type": "single",
                "bucket": {"name": bck},
                "link": f"{files.url}/files/10/{tag}-{i}",
                "description": f"listed {tag} {i}",
            },
        )
        for i in range(3)
    ]
    for job_id in ids:
        wait(ep, job_id)
    r = requests.get(f"{ep}/v1/download", json={"regex": f"listed {tag} [01]"}, timeout=30)
    assert r.status_code == 200
    listed = r.json()
    assert {j["id"] for j in listed} == set(ids[:2])
    assert set(listed[0]) == {
        "id", "xaction_id", "description", "started_time", "finished_time", "finished_cnt",
        "scheduled_cnt", "skipped_cnt", "error_cnt", "total", "all_dispatched", "aborted",
    }  # fmt: skip
    r = requests.get(f"{ep}/v1/download", json={}, timeout=30)
    assert set(ids) <= {j["id"] for j in r.json()}
    active = requests.get(f"{ep}/v1/download", json={"only_active_tasks": True}, timeout=30).json()
    assert not set(ids) & {j["id"] for j in active}
    # Remove: gone from the list, then 404.
    r = requests.delete(f"{ep}/v1/download/remove", json={"id": ids[0]}, timeout=30)
    assert r.status_code == 200, r.text
    r = requests.get(f"{ep}/v1/download", json={"id": ids[0]}, timeout=30)
    assert r.status_code == 404 and "does not exist" in error_of(r)
    r = requests.delete(f"{ep}/v1/download/remove", json={"id": ids[0]}, timeout=30)
    assert r.status_code == 404


def test_abort_keeps_what_finished_and_nothing_partial(
    ep: str, srv: LocalServer, files: FileServer
) -> None:
    bck = bucket_name()
    objects = {"fast.bin": f"{files.url}/files/1000/fast"}
    objects |= {f"slow{i}.bin": f"{files.url}/slow/{2 << 20}/slow{i}" for i in range(3)}
    job_id = start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": objects})

    def in_flight() -> bool:
        st = status(ep, job_id)
        return any(int(t["downloaded"]) > 0 for t in st.get("current_tasks", []))

    deadline = time.monotonic() + 20
    while not in_flight():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    active = status(ep, job_id, only_active=True)
    assert active["current_tasks"] and "finished_tasks" not in active
    r = requests.delete(f"{ep}/v1/download/remove", json={"id": job_id}, timeout=30)
    assert r.status_code == 400 and error_of(r) == f'job "{job_id}" is still running'
    r = requests.delete(f"{ep}/v1/download/abort", json={"id": job_id}, timeout=30)
    assert r.status_code == 200, r.text
    st = wait(ep, job_id, timeout=20)
    assert st["aborted"] is True
    assert not {f"slow{i}.bin" for i in range(3)} & names(ep, bck)  # nothing partial
    assert not work_files(srv.mountpaths)
    # Aborting again is a no-op; removing now works.
    assert requests.delete(f"{ep}/v1/download/abort", json={"id": job_id}, timeout=30).ok
    assert requests.delete(f"{ep}/v1/download/remove", json={"id": job_id}, timeout=30).ok


# --- faults ---------------------------------------------------------------------------------


def test_faults_fail_their_file_and_the_rest_goes_on(
    ep: str, srv: LocalServer, files: FileServer
) -> None:
    bck = bucket_name()
    objects = {
        "ok1.bin": f"{files.url}/files/4096/ok1",
        "missing.bin": f"{files.url}/missing/nope",
        "cut.bin": f"{files.url}/cut/100000/cut",
        "stall.bin": f"{files.url}/stall/100000/stall",
        "flaky.bin": f"{files.url}/flaky/3000/flaky-{uuid.uuid4().hex[:6]}",
        "ok2.bin": f"{files.url}/files/8192/ok2",
    }
    body = {"type": "multi", "bucket": {"name": bck}, "objects": objects, "timeout": "300ms"}
    st = wait(ep, start(ep, body), timeout=60)
    assert st["finished_cnt"] == 3 and st["error_cnt"] == 3, st
    errors = {e["name"]: e["error"] for e in st["download_errors"]}
    assert set(errors) == {"missing.bin", "cut.bin", "stall.bin"}
    assert "status 404" in errors["missing.bin"]
    assert files.hits["/missing/nope"] == 1  # 404 is final: no retry
    assert "timeout" in errors["stall.bin"].lower() or "timed out" in errors["stall.bin"].lower()
    assert names(ep, bck) == {"ok1.bin", "ok2.bin", "flaky.bin"}  # nothing partial
    assert get(ep, bck, "ok2.bin").content == file_bytes("ok2", 8192)
    assert not work_files(srv.mountpaths)


@pytest.fixture(scope="module")
def small_disk_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A server on one 8 MiB tmpfs mountpath (skipped where mount is refused: not root)."""
    mp = tmp_path_factory.mktemp("dl-tmpfs")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mp)], capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount tmpfs here (needs root or CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        with LocalServer([mp], download_allow_loopback=True) as s:
            yield s
    finally:
        subprocess.run(["umount", "-l", str(mp)], capture_output=True)


def test_full_disk_fails_its_file_and_the_rest_goes_on(
    small_disk_srv: LocalServer, files: FileServer
) -> None:
    ep = small_disk_srv.endpoint
    bck = bucket_name()
    objects = {
        "small1.bin": f"{files.url}/files/100000/small1",
        "huge.bin": f"{files.url}/files/{12 << 20}/huge",
        "small2.bin": f"{files.url}/files/100000/small2",
    }
    body = {
        "type": "multi",
        "bucket": {"name": bck},
        "objects": objects,
        "limits": {"connections": 1},
    }
    st = wait(ep, start(ep, body))
    assert st["finished_cnt"] == 2 and st["error_cnt"] == 1, st
    (err,) = st["download_errors"]
    assert err["name"] == "huge.bin" and "no space left" in err["error"].lower(), err
    assert names(ep, bck) == {"small1.bin", "small2.bin"}
    assert get(ep, bck, "small2.bin").content == file_bytes("small2", 100000)
    assert not work_files(small_disk_srv.mountpaths)
    # A file over one part (concurrent ranges, the default limits): the same, no part left.
    link = f"{files.url}/files/{40 << 20}/huge-ranged"
    st = wait(ep, start(ep, {"type": "single", "bucket": {"name": bck}, "link": link}))
    assert st["error_cnt"] == 1 and "no space left" in st["download_errors"][0]["error"].lower(), st
    assert "huge-ranged" not in names(ep, bck)
    assert not work_files(small_disk_srv.mountpaths)
    # No part of it left anywhere (the chunks of an upload live outside the work directory).
    assert shutil.disk_usage(small_disk_srv.mountpaths[0]).used < 2 << 20


def test_limits_connections(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    objects = {f"c{i}.bin": f"{files.url}/slow/{200 << 10}/c{i}" for i in range(4)}
    body = {
        "type": "multi",
        "bucket": {"name": bck},
        "objects": objects,
        "limits": {"connections": 1},
    }
    job_id = start(ep, body)
    most = 0
    while True:
        st = status(ep, job_id)
        most = max(most, len(st.get("current_tasks", [])))
        if st["finished_time"] != ZERO_TIME:
            break
        time.sleep(0.02)
    assert st["finished_cnt"] == 4 and most == 1, (most, st)


def test_limits_bytes_per_hour(ep: str, files: FileServer) -> None:
    bck = bucket_name()
    per_minute = 64 << 10
    body = {
        "type": "single",
        "bucket": {"name": bck},
        "link": f"{files.url}/files/{1 << 20}/bph.bin",
        "limits": {"bytes_per_hour": per_minute * 60},
    }
    job_id = start(ep, body)
    time.sleep(2.0)
    st = status(ep, job_id)
    assert st["finished_time"] == ZERO_TIME, st  # a minute's budget is 64 KiB of 1 MiB
    (task,) = st["current_tasks"]
    assert 0 < int(task["downloaded"]) <= per_minute
    assert requests.delete(f"{ep}/v1/download/abort", json={"id": job_id}, timeout=30).ok
    assert wait(ep, job_id)["aborted"]
    assert "bph.bin" not in names(ep, bck)


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status_code", "words"),
    [
        ({"bucket": {"name": "b"}}, 400, "'type' field is empty"),
        ({"type": "x", "bucket": {"name": "b"}}, 400, "supported formats"),
        ({"type": "single", "link": "http://h/x"}, 400, "missing 'bucket.name'"),
        ({"type": "single", "bucket": {"name": "b"}}, 400, "missing 'link'"),
        ({"type": "range", "bucket": {"name": "b"}}, 400, "missing 'template'"),
        ({"type": "multi", "bucket": {"name": "b"}, "objects": 3}, 400, "should be map"),
        (
            {
                "type": "single",
                "bucket": {"name": "b"},
                "link": "http://h/x",
                "limits": {"connections": -2},
            },
            400,
            "'limit.connections' must be non-negative (got: -2)",
        ),
        (
            {"type": "single", "bucket": {"name": "b"}, "link": "http://h/x", "timeout": "x"},
            400,
            "timeout",
        ),
        (
            {"type": "single", "bucket": {"name": "b"}, "link": "http://h/x", "sync": True},
            400,
            "sync",
        ),
        (
            {
                "type": "single",
                "bucket": {"name": "b"},
                "link": "http://h/x",
                "etl_name": "nope-etl",
            },
            404,
            "nope-etl",
        ),
        (
            {
                "type": "single",
                "bucket": {"name": "b"},
                "from_remote": True,
                "etl_name": "nope-etl",
            },
            501,
            "through an ETL",
        ),
        ({"type": "backend", "bucket": {"name": "b"}}, 400, "requires a remote bucket"),
        (
            # gs:// is served, but not configured here (no GCS environment): AIS's 404
            {"type": "single", "bucket": {"name": "b", "provider": "gcp"}, "link": "http://h/x"},
            404,
            "GCP backend is missing",
        ),
        (
            # az:// likewise (no AZURE_STORAGE_ACCOUNT/KEY here)
            {"type": "single", "bucket": {"name": "b", "provider": "azure"}, "link": "http://h/x"},
            404,
            "Azure backend is missing",
        ),
        (
            {"type": "single", "bucket": {"name": "b", "provider": "oci"}, "link": "http://h/x"},
            501,
            "oci",
        ),
        ({"type": "single", "bucket": {"name": "b/c"}, "link": "http://h/x"}, 400, "bucket"),
    ],
)
def test_bad_requests_are_refused(
    ep: str, body: dict[str, Any], status_code: int, words: str
) -> None:
    r = requests.post(f"{ep}/v1/download", json=body, timeout=30)
    assert r.status_code == status_code, r.text
    assert words in error_of(r)


def test_bad_admin_requests(ep: str) -> None:
    r = requests.get(f"{ep}/v1/download", json={"id": "dnl-x", "regex": "a"}, timeout=30)
    assert r.status_code == 400 and "cannot be defined together" in error_of(r)
    r = requests.get(f"{ep}/v1/download", json={"regex": "(a"}, timeout=30)
    assert r.status_code == 400
    r = requests.delete(f"{ep}/v1/download/abort", json={}, timeout=30)
    assert r.status_code == 400 and error_of(r) == "UUID not specified"
    r = requests.delete(f"{ep}/v1/download/abort", json={"id": "dnl-none"}, timeout=30)
    assert r.status_code == 404 and "dnl-none does not exist" in error_of(r)
    r = requests.delete(f"{ep}/v1/download/other", json={"id": "dnl-none"}, timeout=30)
    assert r.status_code in (400, 404, 405)
    r = requests.post(f"{ep}/v1/download", data=b"{not json", timeout=30)
    assert r.status_code == 400


# --- the egress guard -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=1) as s:
        yield s


def test_guard_refuses_loopback_private_and_link_local(
    guarded: LocalServer, files: FileServer
) -> None:
    ep = guarded.endpoint
    bck = bucket_name()
    objects = {
        "lo.bin": f"{files.url}/files/10/lo",
        "lo6.bin": f"http://[::1]:{files.port}/files/10/lo6",
        "private.bin": "http://10.0.0.1:9/x",
        "private2.bin": "http://192.168.0.1:9/x",
        "metadata.bin": "http://169.254.169.254/latest/meta-data/",
        "cgnat.bin": "http://100.64.0.1/x",
    }
    st = wait(ep, start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": objects}))
    assert st["error_cnt"] == len(objects) and st["finished_cnt"] == 0, st
    errors = {e["name"]: e["error"] for e in st["download_errors"]}
    assert "egress blocked: 127.0.0.1 (loopback)" in errors["lo.bin"]
    assert "egress blocked: ::1 (loopback)" in errors["lo6.bin"]
    assert "(private)" in errors["private.bin"] and "(private)" in errors["private2.bin"]
    assert "169.254.169.254 (link-local)" in errors["metadata.bin"]
    assert "(CGNAT)" in errors["cgnat.bin"]
    assert files.hits["/files/10/lo"] == 0  # refused before any connection
    # Dload-Allow-Private-Egress lets private ranges through, never loopback or link-local.
    r = requests.put(
        f"{ep}/v1/cluster",
        json={"action": "set-config", "value": {"features": "Dload-Allow-Private-Egress"}},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    try:
        objects = {"lo.bin": objects["lo.bin"], "metadata.bin": objects["metadata.bin"]}
        st = wait(ep, start(ep, {"type": "multi", "bucket": {"name": bck}, "objects": objects}))
        assert st["error_cnt"] == 2, st
    finally:
        requests.put(
            f"{ep}/v1/cluster",
            json={"action": "set-config", "value": {"features": "none"}},
            timeout=30,
        )


def test_guard_checks_every_redirect(ep: str, files: FileServer) -> None:
    """Loopback is allowed on this server; a redirect from it to link-local is still refused."""
    bck = bucket_name()
    link = f"{files.url}/redirect?to=http://169.254.169.254/latest/meta-data/iam"
    st = wait(
        ep, start(ep, {"type": "single", "bucket": {"name": bck}, "link": link, "object_name": "r"})
    )
    (err,) = st["download_errors"]
    assert "169.254.169.254 (link-local)" in err["error"], err
    # A redirect to an allowed place is followed.
    link = f"{files.url}/redirect?to={files.url}/files/64/target"
    st = wait(
        ep, start(ep, {"type": "single", "bucket": {"name": bck}, "link": link, "object_name": "t"})
    )
    assert st["finished_cnt"] == 1, st
    assert get(ep, bck, "t").content == file_bytes("target", 64)  # not the 302's body
    # A redirect loop ends at curl's limit, once (not retried).
    link = f"{files.url}/loop/forever"
    st = wait(ep, start(ep, {"type": "single", "bucket": {"name": bck}, "link": link}))
    (err,) = st["download_errors"]
    assert "redirect" in err["error"].lower(), err
    assert files.hits["/loop/forever"] == 11  # the first GET and 10 redirects


# --- the official CLI -----------------------------------------------------------------------

needs_cli = pytest.mark.skipif(
    not AIS.exists(), reason=f"the official ais CLI is not at {AIS} (../shared/tools/ais absent)"
)


@pytest.fixture(scope="module")
def cli(srv: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(srv.endpoint, tmp_path_factory.mktemp("ais-cli-home"))


def cli_job_id(out: str) -> str:
    for word in out.replace('"', " ").replace(".", " ").split():
        if word.startswith("dnl-"):
            return word
    raise AssertionError(f"no job id in: {out}")


@needs_cli
def test_cli_download_single_and_show(cli: Cli, ep: str, files: FileServer) -> None:
    bck = bucket_name()
    out = cli.ok("download", f"{files.url}/files/3000/cli.bin", f"ais://{bck}/")
    job_id = cli_job_id(out)
    wait(ep, job_id)
    assert get(ep, bck, "cli.bin").content == file_bytes("cli.bin", 3000)
    listing = cli.ok("show", "job", "download", "--all")
    assert job_id in listing
    one = cli.ok("show", "job", "download", job_id, "--verbose")
    assert "1 file downloaded" in one, one


@needs_cli
def test_cli_download_range_wait_and_errors(cli: Cli, ep: str, files: FileServer) -> None:
    bck = bucket_name()
    out = cli.ok(
        "download",
        f"{files.url}/files/1500/r-{{1..4}}.bin",
        f"ais://{bck}/dir",
        "--max-conns",
        "2",
        "--desc",
        "cli range",
    )
    job_id = cli_job_id(out)
    st = wait(ep, job_id)
    assert st["finished_cnt"] == 4 and st["description"] == "cli range", st
    assert names(ep, bck) == {f"dir/r-{i}.bin" for i in range(1, 5)}
    # A job with a failed file: the CLI says so, and shows its errors.
    r = cli.run("download", f"{files.url}/missing/gone.bin", f"ais://{bck}/")
    assert r.returncode == 0, r.stdout + r.stderr
    failed = cli_job_id(r.stdout)
    wait(ep, failed)
    shown = cli.run("show", "job", "download", failed, "--verbose")
    assert shown.returncode == 0, shown.stderr
    assert "gone.bin" in shown.stdout + shown.stderr


@needs_cli
def test_cli_download_wait_and_progress(cli: Cli, ep: str, files: FileServer) -> None:
    bck = bucket_name()
    out = cli.ok("download", f"{files.url}/files/1000/w-{{1..3}}.bin", f"ais://{bck}/w", "--wait")
    assert "All 3 files successfully downloaded" in out, out
    # The CLI draws a file's bar once a poll finds it in progress: poll often (the file takes ~3 s).
    out = cli.ok(
        "download",
        f"{files.url}/slow/{1 << 20}/p.bin",
        f"ais://{bck}/",
        "--progress",
        "--progress-interval",
        "500ms",
    )
    assert "p.bin" in out and "successfully downloaded" in out, out
    assert names(ep, bck) == {"w/w-1.bin", "w/w-2.bin", "w/w-3.bin", "p.bin"}
    # (other tests' jobs in the list failed on purpose: run, not ok)
    verbose = cli.run("show", "job", "download", "--all", "--verbose")
    assert verbose.returncode == 0 and f"ais://{bck}" in verbose.stdout, verbose.stderr


@needs_cli
def test_cli_download_object_list(cli: Cli, ep: str, files: FileServer) -> None:
    """--object-list: a JSON array of names under SRC, sent as a `multi` job."""
    bck = bucket_name()
    listing = cli.home / "names.json"
    listing.write_text(json.dumps(["ol-1.bin", "ol-2.bin", "ol-3.bin"]))
    out = cli.ok(
        "download", f"{files.url}/files/700", f"ais://{bck}/", "--object-list", str(listing)
    )
    st = wait(ep, cli_job_id(out))
    assert st["finished_cnt"] == 3 and st["description"] == f"multi-download -> ais://{bck}", st
    assert get(ep, bck, "ol-2.bin").content == file_bytes("ol-2.bin", 700)


@needs_cli
def test_cli_stop_and_remove(cli: Cli, ep: str, files: FileServer) -> None:
    bck = bucket_name()
    out = cli.ok("download", f"{files.url}/slow/{4 << 20}/long.bin", f"ais://{bck}/")
    job_id = cli_job_id(out)
    cli.ok("stop", "download", job_id)
    assert wait(ep, job_id)["aborted"]
    r = cli.run("job", "rm", "download", job_id)
    assert r.returncode == 0, r.stdout + r.stderr
    assert requests.get(f"{ep}/v1/download", json={"id": job_id}, timeout=30).status_code == 404


# --- our SDK (the official one has no download API) ---------------------------------------------


def test_sdk_download(
    srv: LocalServer, files: FileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = srv.client()
    bucket = client.bucket(bucket_name())
    dl = client.download()
    job_id = dl.start_range(
        bucket,
        f"{files.url}/files/10000/sdk-{{1..5}}.bin",
        subdir="s",
        connections=2,
        timeout=30,
        description="sdk range",
    )
    assert dl.job_id == job_id
    st = dl.wait(timeout=60, progress=True)  # tqdm bars of files and bytes, on stderr
    assert isinstance(st, DownloadStatus) and st.finished and st.finished_cnt == 5
    assert {t.name for t in st.finished_tasks} == {f"s/sdk-{i}.bin" for i in range(1, 6)}
    assert all(t.downloaded == t.total == 10000 for t in st.finished_tasks)
    err = capsys.readouterr().err
    assert f"download[{job_id}]" in err and "5/5" in err
    assert bucket.object("s/sdk-3.bin").get_reader().read_all() == file_bytes("sdk-3.bin", 10000)
    assert job_id in {j.id for j in dl.list_jobs(regex="^sdk range$")}

    # A failed file: wait raises DownloadError naming it (or returns, if asked not to).
    links = {"ok": f"{files.url}/files/10/ok", "bad": f"{files.url}/missing/bad"}
    failing = client.download()
    failing.start_multi(bucket, links, headers={"X-Test": "1"})
    with pytest.raises(DownloadError) as info:
        failing.wait(timeout=60, progress=False)
    assert info.value.errors[0][0] == "bad" and "status 404" in info.value.errors[0][1]
    assert pickle.loads(pickle.dumps(info.value)).errors == info.value.errors
    st = client.download(failing.job_id).wait(timeout=60, raise_on_error=False)
    assert st.error_cnt == 1 and st.finished_cnt == 1

    # Abort, then remove; errors of the server come back typed.
    slow = client.download()
    slow.start_single(bucket, f"{files.url}/slow/{4 << 20}/sdk-slow", object_name="slow")
    with pytest.raises(AISError) as refused:
        slow.remove()
    assert refused.value.status_code == 400 and "still running" in str(refused.value)
    slow.abort()
    with pytest.raises(DownloadError) as aborted:
        slow.wait(timeout=30)
    assert aborted.value.aborted
    slow.remove()
    with pytest.raises(AISError) as gone:
        slow.status()
    assert gone.value.status_code == 404
    with pytest.raises(TypeError):
        client.download().start_single(bucket, "http://h/x", sync=True)


def test_server_stops_promptly_with_jobs_running(files: FileServer) -> None:
    """A stop aborts the running jobs (a stalled link, a slow one) and leaves nothing partial."""
    with LocalServer(num_mountpaths=1, download_allow_loopback=True) as s:
        bck = bucket_name()
        objects = {
            "stall.bin": f"{files.url}/stall/100000/stop-stall",
            "slow.bin": f"{files.url}/slow/{4 << 20}/stop-slow",
        }
        job_id = start(s.endpoint, {"type": "multi", "bucket": {"name": bck}, "objects": objects})
        deadline = time.monotonic() + 20
        while len(status(s.endpoint, job_id).get("current_tasks", [])) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        t0 = time.monotonic()
        s.stop(keep_data=True)
        assert time.monotonic() - t0 < 5
        assert not work_files(s.mountpaths)
        s.start()
        assert names(s.endpoint, bck) == set()
