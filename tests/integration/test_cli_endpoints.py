"""What the official `ais` CLI sends and the JSON fields it decodes (spec cli-and-monitoring.md
§1), against the real server. The CLI is Go and not installable here, so each test makes the
command's requests and checks what the CLI reads: key names exactly, and value types as Go's
decoder needs them (an int64 where a string is sent fails the whole document)."""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from aistore.sdk.client import Client
from aistore.server import LocalServer

# `ais show job` asks for each of these kinds in turn (xact.ListDisplayNames → kinds).
CLI_JOB_KINDS = [
    "archive", "blob-download", "cleanup-store", "copy-bck", "copy-listrange",
    "create-inventory", "delete-listrange", "ec-encode", "ec-get", "ec-put", "ec-resp",
    "election", "etl-bck", "etl-inline", "etl-listrange", "evict-listrange",
    "evict-remote-bck", "get-batch", "list", "lru", "make-n-copies", "prefetch-listrange",
    "promote", "put-copies", "rebalance", "rechunk", "move-bck", "resilver", "index-shard",
    "summary-shard", "summary-bck", "load-lom-cache",
]  # fmt: skip
EMPTY_BCK = {"name": "", "provider": "", "namespace": {"uuid": "", "name": ""}}
# cos.IsValidUUID: what the CLI accepts as a job id.
CLI_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{7,30}[A-Za-z0-9]$")
CLUSTER_CONFIG_KEYS = {
    "write_policy", "checksum", "tcb", "tco", "arch", "lso", "rate_limit", "keepalivetracker",
    "rebalance", "log", "ec", "get_batch", "space", "transport", "disk", "fshc", "chunks", "lru",
    "mirror", "periodic", "client", "downloader", "auth", "backend", "uuid", "lastupdate_time",
    "proxy", "net", "timeout", "memsys", "features", "config_version", "versioning", "resilver",
}  # fmt: skip


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2, args=["--job-idle-timeout", "1000"]) as s:
        yield s


@pytest.fixture(scope="module")
def ep(srv: LocalServer) -> str:
    return srv.endpoint


def skip_if_disk_above_highwm(srv: LocalServer) -> None:
    """A server whose mountpaths' disk is above space.highwm (90%) starts an lru job and raises
    the capacity alert, as it should: then the fresh-server state these tests check is not there."""
    disk = shutil.disk_usage(srv.mountpaths[0])
    used = 100 * disk.used / (disk.used + disk.free)
    if used >= 89:
        pytest.skip(
            f"the disk holding the test's mountpaths is {used:.0f}% full: above space.highwm"
        )


@pytest.fixture(scope="module")
def ids(ep: str) -> tuple[str, str]:
    """(proxy id, target id) from the cluster map."""
    smap = get(ep, "/v1/daemon", what="smap")
    ((pid,),) = [list(smap["pmap"])]
    ((tid,),) = [list(smap["tmap"])]
    return pid, tid


def get(ep: str, path: str, status: int = 200, **params: str) -> Any:
    r = requests.get(f"{ep}{path}", params=params, timeout=30)
    assert r.status_code == status, r.text
    return r.json()


def reverse(ep: str, node: str, what: str, status: int = 200, **params: str) -> requests.Response:
    # As the CLI: node-scoped calls through the proxy, msgpack accepted (JSON answered).
    r = requests.get(
        f"{ep}/v1/reverse/daemon",
        params={"what": what, **params},
        headers={"Ais-Node-Id": node, "Accept": "application/msgpack", "User-Agent": "ais/cli"},
        timeout=30,
    )
    assert r.status_code == status, r.text
    if status == 200 and what not in ("log", "software_version"):
        assert r.headers["Content-Type"] == "application/json"
    return r


def qryxstats(
    ep: str, kind: str, show_active: bool | None = True, xid: str = ""
) -> requests.Response:
    body = {"show_active": show_active, "bck": EMPTY_BCK, "id": xid, "kind": kind}
    return requests.get(f"{ep}/v1/cluster", params={"what": "qryxstats"}, json=body, timeout=30)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_int_str(v: Any) -> bool:
    return isinstance(v, str) and v.isdigit()


# --- ais show job, on a fresh server (first in this module) ---------------------------


def test_show_job_every_kind_answers_an_empty_list_per_node(
    srv: LocalServer, ep: str, ids: tuple[str, str]
) -> None:
    skip_if_disk_above_highwm(srv)
    _, tid = ids
    for kind in CLI_JOB_KINDS:
        for active in (True, None):  # `ais show job` and `ais show job --all`
            r = qryxstats(ep, kind, active)
            assert r.status_code == 200, (kind, r.text)
            assert r.json() == {tid: []}, kind
    for display in ("copy-bucket", "copy-objects", "lru-eviction", "cleanup", "summary"):
        assert qryxstats(ep, display).json() == {tid: []}
    # A real cluster's 404s: a kind it does not know, an id that matches nothing.
    assert qryxstats(ep, "no-such-kind").status_code == 404
    r = qryxstats(ep, "", xid="NoSuchJob1")
    assert r.status_code == 404 and "not found" in r.json()["message"]
    # The two job lists outside /v1/cluster: downloads and dSort.
    r = requests.get(
        f"{ep}/v1/download", json={"id": "", "regex": "", "only_active_tasks": True}, timeout=30
    )
    assert r.status_code == 200 and r.json() == []
    for params in ({"only_active": "true", "regex": ""}, {"regex": ""}):
        r = requests.get(f"{ep}/v1/sort", params=params, timeout=30)
        assert r.status_code == 200 and r.json() == []
    # A job asked for by id does not exist.
    assert requests.get(f"{ep}/v1/sort", params={"uuid": "job-1"}, timeout=30).status_code == 404
    r = requests.get(f"{ep}/v1/download", json={"id": "dnl-1"}, timeout=30)
    assert r.status_code == 404


# --- ais show cluster [smap] ---------------------------------------------------------


def test_smap_gives_proxy_and_target_distinct_ids(ep: str, ids: tuple[str, str]) -> None:
    pid, tid = ids
    smap = get(ep, "/v1/daemon", what="smap")
    assert pid != tid
    assert pid not in smap["tmap"] and tid not in smap["pmap"]  # the CLI looks in tmap first
    assert smap["proxy_si"]["daemon_id"] == pid and smap["proxy_si"]["daemon_type"] == "proxy"
    assert smap["tmap"][tid]["daemon_type"] == "target"
    assert smap["pmap"][pid] == smap["proxy_si"]
    assert smap["uuid"] and is_int_str(smap["version"])
    for node in (smap["pmap"][pid], smap["tmap"][tid]):
        for net in ("public_net", "intra_control_net", "intra_data_net"):
            assert node[net]["direct_url"] == ep and is_int_str(node[net]["daemon_port"])
        assert is_int(node["flags"]) and is_int(node["id_digest"])
    # Node-scoped calls: either id, else 404; no id is a 400.
    for node in (pid, tid):
        assert reverse(ep, node, "snode").json()["daemon_id"] == node
    reverse(ep, "nope", "node_status", 404)
    r = requests.get(f"{ep}/v1/reverse/daemon", params={"what": "node_status"}, timeout=30)
    assert r.status_code == 400 and "missing node ID" in r.json()["message"]


def check_tcdf(tcdf: dict[str, Any], *, target: bool) -> None:
    for k in ("total_used", "total_avail"):
        assert is_int_str(tcdf[k]), (k, tcdf)
    for k in ("pct_max", "pct_avg", "pct_min"):
        assert is_int(tcdf[k])
    assert isinstance(tcdf["cs_err"], str)
    if not target:
        assert tcdf["mountpaths"] is None and tcdf["total_used"] == "0"
        return
    assert tcdf["mountpaths"]
    for cdf in tcdf["mountpaths"].values():
        assert is_int_str(cdf["used"]) and is_int_str(cdf["avail"]) and int(cdf["avail"]) > 0
        assert is_int(cdf["pct_used"]) and 0 <= cdf["pct_used"] <= 100
        assert isinstance(cdf["disks"], list) and isinstance(cdf["mountpath_label"], str)
        fs = cdf["fs"]
        assert isinstance(fs["Fs"], str) and isinstance(fs["FsType"], str)
        # AIS's cos.FsID ([2]int32) is the string "lo,hi": the CLI decodes no array.
        lo, hi = (int(x) for x in fs["FsID"].split(","))
        assert all(-(2**31) <= x < 2**31 for x in (lo, hi)), fs["FsID"]


def check_sys_info(si: dict[str, Any], *, target: bool) -> None:
    assert is_int(si["mem_used"]) and is_int(si["mem_avail"]) and si["mem_avail"] > 0
    assert isinstance(si["pct_mem_used"], (int, float))
    assert isinstance(si["pct_cpu_used"], (int, float))
    assert set(si["load_avg"]) == {"One", "Five", "Fifteen"}
    assert is_int(si["cpu_util"])
    mem_keys = {"Total", "Used", "Free", "BuffCache", "ActualFree", "ActualUsed"}
    assert mem_keys | {"SwapTotal", "SwapFree", "SwapUsed"} <= set(si["mem"])
    assert all(is_int(v) for v in si["mem"].values()) and si["mem"]["Total"] > 0
    # `ais show cluster cpu|memory` refuse nodes without these.
    assert {"User", "System", "Total", "LastTime", "Percent"} <= set(si["proc"]["CPU"])
    assert {"Size", "Resident", "Share"} <= set(si["proc"]["Mem"])
    assert si["proc"]["Mem"]["Resident"] > 0
    if target:
        assert is_int_str(si["fs_used"]) and is_int_str(si["fs_capacity"])
        assert isinstance(si["pct_fs_used"], (int, float))


def test_node_status_has_the_types_the_cli_decodes(
    srv: LocalServer, ep: str, ids: tuple[str, str]
) -> None:
    skip_if_disk_above_highwm(srv)
    pid, tid = ids
    for node, target in ((tid, True), (pid, False)):
        st = reverse(ep, node, "node_status").json()
        assert st["status"] == "" and st["deployment"] and isinstance(st["build_time"], str)
        major, minor, *_ = st["ais_version"].split(".")
        assert (major, minor) == ("5", "0")  # no version warning from the CLI
        assert st["snode"]["daemon_id"] == node
        assert st["snode"]["daemon_type"] == ("target" if target else "proxy")
        assert all(is_int(v) for v in st["tracker"].values()), st["tracker"]
        assert st["tracker"]["up.ns.time"] > 0
        check_tcdf(st["capacity"], target=target)
        check_sys_info(st["sys_info"], target=target)
        assert is_int_str(st["smap_version"])
        cl = st["cluster"]
        assert cl["smap"]["Primary"]["id"] == pid and cl["smap"]["Primary"]["pub_url"] == ep
        assert is_int_str(cl["smap"]["version"]) and cl["smap"]["uuid"]
        for md in ("bmd", "rmd", "config", "etlmd"):
            assert is_int_str(cl[md]["version"])
        assert cl["flags"] == 6  # ClusterStarted | NodeStarted: no alerts


def test_show_performance_counters_throughput_latency(
    ep: str, ids: tuple[str, str], srv: LocalServer
) -> None:
    _, tid = ids
    metrics = reverse(ep, tid, "metrics").json()
    kinds = {"counter", "size", "total", "latency", "bw", "compbw", "gauge", "special", "histogram"}
    assert set(metrics.values()) <= kinds
    assert metrics["put.n"] == "counter" and metrics["put.size"] == "size"
    assert metrics["up.ns.time"] == "special"
    # Begin and end samples, as `show performance throughput` takes them.
    begin = reverse(ep, tid, "node_status").json()["tracker"]
    client = srv.client()
    b = client.bucket(f"perf-{uuid.uuid4().hex[:8]}").create()
    for i in range(3):
        b.object(f"o{i}").get_writer().put_content(b"x" * 1000)
        b.object(f"o{i}").get_reader().read_all()
    end = reverse(ep, tid, "node_status").json()["tracker"]
    assert set(end) <= set(metrics)  # every value the CLI gets, it can name the kind of
    assert end["put.n"] - begin.get("put.n", 0) == 3
    assert end["put.size"] - begin.get("put.size", 0) == 3000
    assert end["get.n"] - begin.get("get.n", 0) == 3
    assert end["up.ns.time"] > begin["up.ns.time"]
    b.delete()


# --- ais show config cluster | NODE, ais bucket props show/set, ais show cluster bmd ---------


def test_cluster_config_and_node_config(ep: str, ids: tuple[str, str]) -> None:
    pid, tid = ids
    cfg = get(ep, "/v1/cluster", what="cluster_config")
    assert set(cfg) == CLUSTER_CONFIG_KEYS
    # Tokens not required, nothing configured (docs/access-control.md).
    assert cfg["auth"]["client_auth_required"] is False and cfg["auth"]["enabled"] is False
    assert cfg["auth"]["signature"] == {} and cfg["auth"]["oidc"]["allowed_iss"] == []
    assert isinstance(cfg["rebalance"]["enabled"], bool)
    for wm in ("highwm", "lowwm", "cleanupwm", "out_of_space"):
        assert is_int(cfg["space"][wm])
    assert cfg["space"]["lowwm"] < cfg["space"]["highwm"] < cfg["space"]["out_of_space"]
    assert is_int_str(cfg["config_version"]) and is_int_str(cfg["features"])
    assert cfg["uuid"] == get(ep, "/v1/daemon", what="smap")["uuid"]
    assert cfg["checksum"]["type"] == "xxhash2" and isinstance(cfg["versioning"]["enabled"], bool)
    for node in (tid, pid):
        node_cfg = reverse(ep, node, "config").json()
        assert {k: node_cfg[k] for k in CLUSTER_CONFIG_KEYS} == cfg  # the CLI diffs node vs cluster
        local = set(node_cfg) - CLUSTER_CONFIG_KEYS
        assert local == {"fspaths", "confdir", "log_dir", "test_fspaths", "host_net"}
        assert is_int_str(node_cfg["host_net"]["port"])
    mps = reverse(ep, tid, "mountpaths").json()["available"]
    assert sorted(reverse(ep, tid, "config").json()["fspaths"]["paths"]) == sorted(mps)
    assert reverse(ep, pid, "config").json()["fspaths"]["paths"] == {}


def test_bucket_props_show_set_and_bmd(ep: str, srv: LocalServer) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    srv.client().bucket(name).create()
    url = f"{ep}/v1/buckets/{name}"
    r = requests.head(url, params={"dont_add_remote_bck_md": "true", "provider": "ais"}, timeout=30)
    assert r.status_code == 200
    props = json.loads(r.headers["Ais-Bucket-Props"])
    assert props["versioning"]["enabled"] is True
    r = requests.patch(
        url,
        params={"provider": "ais"},
        json={"value": {"versioning": {"enabled": False}, "mirror": {"enabled": True}},
              "action": "set-bprops", "name": ""},
        timeout=30,
    )  # fmt: skip
    # A mirror of one copy (copies is 1 here): refused, naming the field, and nothing of the
    # request changes.
    assert r.status_code == 400 and "mirror.copies" in r.text, r.text
    r = requests.head(url, params={"provider": "ais"}, timeout=30)
    assert json.loads(r.headers["Ais-Bucket-Props"])["versioning"]["enabled"] is True
    r = requests.patch(
        url,
        params={"provider": "ais"},
        json={"value": {"versioning": {"enabled": False}, "mirror": {"enabled": False}},
              "action": "set-bprops", "name": ""},
        timeout=30,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    r = requests.head(url, params={"provider": "ais"}, timeout=30)
    assert json.loads(r.headers["Ais-Bucket-Props"])["versioning"]["enabled"] is False
    bmd = get(ep, "/v1/daemon", what="bmd")
    assert is_int_str(bmd["version"]) and bmd["uuid"]
    assert bmd["providers"]["ais"]["@#"][name]["versioning"]["enabled"] is False
    srv.client().bucket(name).delete()
    assert name not in get(ep, "/v1/daemon", what="bmd")["providers"]["ais"]["@#"]


# --- ais show storage [disk|mountpath|capacity], remote-cluster, backends ----------------


def test_show_storage(ep: str, ids: tuple[str, str], srv: LocalServer) -> None:
    pid, tid = ids
    for r in (reverse(ep, tid, "disk"), requests.get(f"{ep}/v1/daemon?what=disk", timeout=30)):
        disk = r.json()
        check_tcdf(disk, target=True)
        assert isinstance(disk["AllDiskStats"], dict)
        named = {d for cdf in disk["mountpaths"].values() for d in cdf["disks"]}
        assert set(disk["AllDiskStats"]) == named
        for stats in disk["AllDiskStats"].values():
            assert set(stats) == {"RBps", "Ravg", "WBps", "Wavg", "Util"}
            assert all(is_int(v) and v >= 0 for v in stats.values())
    reverse(ep, pid, "disk", 400)  # a proxy has no disks
    want = sorted(str(p) for p in srv.mountpaths)
    for mps in (reverse(ep, tid, "mountpaths").json(), get(ep, "/v1/daemon", what="mountpaths")):
        assert (
            sorted(mps["available"]) == want and mps["disabled"] == [] and mps["waiting_dd"] == []
        )
    assert get(ep, "/v1/cluster", what="mountpaths") == {"targets": {tid: mps}}
    assert get(ep, "/v1/cluster", what="remote") == {"a": None, "ver": 0}
    assert reverse(ep, tid, "remote").json() == {"a": None, "ver": 0}
    assert get(ep, "/v1/cluster", what="backends") == ["aws"]  # the S3 backend is built in
    sysinfo = get(ep, "/v1/cluster", what="sysinfo")
    assert sysinfo["proxy"] == {} and list(sysinfo["target"]) == [tid]
    check_sys_info(sysinfo["target"][tid], target=True)
    stats = get(ep, "/v1/cluster", what="node_stats")
    assert stats["proxy"]["snode"]["daemon_id"] == pid and list(stats["target"]) == [tid]
    check_tcdf(stats["target"][tid]["capacity"], target=True)
    # Unknown queries: AIS's 400s.
    r = requests.get(f"{ep}/v1/cluster", params={"what": "nope"}, timeout=30)
    assert r.status_code == 400 and r.json()["message"] == "unexpected query [what=nope]"
    r = requests.get(f"{ep}/v1/daemon", params={"what": "nope"}, timeout=30)
    assert r.status_code == 400
    assert r.json()["message"] == "invalid '/v1/daemon' request: unrecognized 'what=nope' query"


# --- ais storage summary, ais space-cleanup, ais show log ----------------------------


def test_storage_summary(ep: str, srv: LocalServer) -> None:
    b = srv.client().bucket(f"summ-{uuid.uuid4().hex[:8]}").create()
    b.object("a").get_writer().put_content(b"x" * 100)
    value = {"uuid": "", "prefix": "", "cached": False, "present": True, "dont_add_remote": False}
    body = {"action": "summary-bck", "name": "", "value": value}
    r = requests.get(f"{ep}/v1/buckets/", json=body, timeout=30)
    assert r.status_code == 202 and CLI_JOB_ID.match(r.text), r.text
    value["uuid"] = r.text
    deadline = time.monotonic() + 30
    while (r := requests.get(f"{ep}/v1/buckets/", json=body, timeout=30)).status_code == 202:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert r.status_code == 200
    (mine,) = [s for s in r.json() if s["name"] == b.name]
    assert mine["provider"] == "ais" and mine["is_present"] is True
    assert mine["ObjCount"]["obj_count_present"] == "1"
    assert mine["TotalSize"]["size_all_present_objs"] == "100"
    assert set(mine["ObjSize"]) == {"obj_min_size", "obj_avg_size", "obj_max_size"}
    b.delete()


def test_space_cleanup(ep: str, ids: tuple[str, str]) -> None:
    _, tid = ids
    for kind in ("cleanup-store", "cleanup"):  # `ais space-cleanup`; the display name as well
        args = {"ID": "", "Kind": kind, "DaemonID": "", "Bck": EMPTY_BCK, "Buckets": None,
                "Timeout": 0, "Force": False, "OnlyRunning": False}  # fmt: skip
        r = requests.put(
            f"{ep}/v1/cluster", json={"action": "start", "name": "", "value": args}, timeout=30
        )
        assert r.status_code == 200, r.text
        job_id = r.text
        assert CLI_JOB_ID.match(job_id), job_id
        deadline = time.monotonic() + 30
        while True:
            snaps = qryxstats(ep, "cleanup-store", None, job_id).json()[tid]
            if snaps[0]["end-time"] != "0001-01-01T00:00:00Z":
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (snap,) = snaps
        assert snap["kind"] == "cleanup-store" and snap["is_idle"] and not snap["aborted"]


def test_show_log(ep: str, ids: tuple[str, str]) -> None:
    for node in ids:
        r = reverse(ep, node, "log", severity="info")
        assert "listening on http://" in r.text
        r = reverse(ep, node, "log", all="true")
        assert r.content[:2] == b"\x1f\x8b"  # tar.gz of all logs


def test_job_ids_pass_the_cli_check(ep: str, srv: LocalServer) -> None:
    client: Client = srv.client()
    b = client.bucket(f"ids-{uuid.uuid4().hex[:8]}").create()
    b.object("a").get_writer().put_content(b"a")
    job_ids = [
        client.job(job_kind="lru").start(),
        b.objects(obj_names=["a"]).copy(client.bucket(b.name + "-dst"))[0],
    ]
    list(client.batch(["a"], bucket=b).get())
    # By its bucket among all get-batch jobs: it may have idled out (1 s here) already.
    snaps = client.job(job_kind="get-batch").get_details().list_snapshots()
    job_ids += [s.id for s in snaps if s.bucket and s.bucket.name == b.name]
    assert len(job_ids) == 3
    for job_id in job_ids:
        assert CLI_JOB_ID.match(job_id), job_id
