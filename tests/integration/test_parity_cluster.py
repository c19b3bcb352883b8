"""The cluster face of the one-node server as the official SDK reads it: cluster map (proxy
and target maps, version, uuid), node performance counters, and the node's own log (text with a
severity filter, and as a .tar.gz archive); plus the error wording the SDK classifies by."""

from __future__ import annotations

import io
import json
import tarfile
import uuid

import pytest
import requests
from _parity import act, err

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.enums import LogSeverity, NodeFilter
from aistore.sdk.errors import (
    AISError,
    ErrBckAlreadyExists,
    ErrBckNotFound,
    ErrObjNotFound,
)
from aistore.server import LocalServer


def test_cluster_map(client: Client, ais_server: LocalServer) -> None:
    smap = client.cluster().get_info()
    assert smap.tmap and smap.pmap and smap.version >= 1 and smap.uuid
    (tid,) = smap.tmap
    assert smap.tmap[tid].daemon_type == "target"
    assert smap.proxy_si.daemon_type == "proxy"
    assert client.cluster().get_uuid() == smap.uuid
    assert client.cluster().get_primary_url() == ais_server.endpoint
    assert client.cluster().is_ready()


def test_performance_counters(client: Client, bucket: Bucket) -> None:
    # AIS stats.NodeStatus: tracker values are bare int64 (zero counters left out), capacity
    # is the target's Tcdf, status "" means online.
    before = client.cluster().get_performance()
    (tid,) = before
    puts = before[tid]["tracker"].get("put.n", 0)
    bucket.object("perf").get_writer().put_content(b"x" * 1000)
    bucket.object("perf").get_reader().read_all()
    after = client.cluster().get_performance()[tid]
    assert after["tracker"]["put.n"] >= puts + 1
    assert after["tracker"]["put.size"] >= 1000
    assert after["status"] == "" and after["snode"]["daemon_id"] == tid
    mountpaths = after["capacity"]["mountpaths"]
    assert mountpaths and all(int(c["avail"]) > 0 for c in mountpaths.values())


def test_list_objects_counter(client: Client, bucket: Bucket) -> None:
    """`lst.n` counts list-objects requests (one per page), and nothing else."""
    bucket.object("listed").get_writer().put_content(b"x")
    (tid,) = client.cluster().get_performance()

    def lst_n() -> int:
        return int(client.cluster().get_performance()[tid]["tracker"].get("lst.n", 0))

    before = lst_n()
    bucket.list_objects()
    bucket.list_objects(prefix="list")
    assert lst_n() == before + 2
    bucket.head()
    bucket.object("listed").get_reader().read_all()
    assert lst_n() == before + 2


def test_node_log_severity_and_archive(
    client: Client, ais_server: LocalServer, bucket: Bucket
) -> None:
    cluster = client.cluster()
    (tid,) = cluster.get_info().tmap
    # One job that succeeds (INFO lines) and one that fails (an ERROR line).
    ok_job = client.job(job_kind="lru").start()
    assert client.job(ok_job).wait(timeout=60).success
    r = act(
        ais_server.endpoint,
        "DELETE",
        f"buckets/{bucket.name}",
        "delete-listrange",
        {"objnames": ["nope"]},
    )
    assert not client.job(r.text).wait(timeout=60).success
    info = cluster.get_node_log(tid)
    assert "listening on http://" in info and f"lru[{ok_job}] finished" in info
    assert all(line[0] in "IWE" for line in info.splitlines())
    job_name = f"delete-listrange[{r.text}]"
    warnings_and_worse = cluster.get_node_log(tid, severity=LogSeverity.WARNING)
    assert (
        f"{job_name} finished with errors: ais://{bucket.name}/nope does not exist"
        in warnings_and_worse
    )
    assert {line[0] for line in warnings_and_worse.splitlines()} <= {"W", "E"}
    assert f"lru[{ok_job}]" not in warnings_and_worse
    errors = cluster.get_node_log(tid, severity="error")
    assert job_name not in errors
    assert {line[0] for line in errors.splitlines()} <= {"E"}
    archive = cluster.get_node_log_archive(tid)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        (member,) = tar.getmembers()
        text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    assert member.name.endswith(".log.INFO") and "listening on http://" in text
    logs = cluster.get_cluster_logs(role=NodeFilter.ALL)
    (pid,) = cluster.get_info().pmap
    assert sorted(logs) == sorted([tid, pid]) and pid != tid  # one process, two faces, one log
    assert "listening" in logs[tid] and "listening" in logs[pid]


def test_node_log_bad_input(client: Client, ais_server: LocalServer) -> None:
    url = f"{ais_server.endpoint}/v1/reverse/daemon"
    (tid,) = client.cluster().get_info().tmap
    r = requests.get(url, params={"what": "log"}, timeout=10)
    assert "missing node ID" in err(r, 400)
    r = requests.get(url, params={"what": "log"}, headers={"Ais-Node-Id": "nope"}, timeout=10)
    assert 'node "nope" does not exist' in err(r, 404)
    r = requests.get(
        url, params={"what": "log", "severity": "debug"}, headers={"Ais-Node-Id": tid}, timeout=10
    )
    assert "invalid log severity" in err(r, 400)
    with pytest.raises(ValueError):
        client.cluster().get_node_log(tid, severity="debug")  # type: ignore[arg-type]


def test_error_wording_the_sdk_classifies(
    client: Client, bucket: Bucket, ais_server: LocalServer
) -> None:
    missing = client.bucket(f"missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(ErrBckNotFound):
        missing.list_objects()
    with pytest.raises(ErrBckNotFound):
        missing.copy(bucket)
    with pytest.raises(ErrBckNotFound):
        missing.objects(obj_names=["a"]).archive("x.tar")
    with pytest.raises(ErrBckAlreadyExists):
        client.bucket(bucket.name).create()
    with pytest.raises(ErrObjNotFound):
        bucket.object("no-such-obj").get_reader().read_all()
    with pytest.raises(ErrObjNotFound):
        bucket.object("no-such-obj").delete()
    msg = err(act(ais_server.endpoint, "POST", f"buckets/{bucket.name}", "no-such-action"), 400)
    assert msg == 'invalid action "no-such-action"'


def test_multipart_error_wording(bucket: Bucket, ais_server: LocalServer) -> None:
    obj = bucket.object("mpu")
    cname = f"ais://{bucket.name}/mpu"
    empty = obj.multipart_upload().create()
    with pytest.raises(AISError) as e:
        empty.complete()
    assert (
        e.value.status_code == 400 and "no chunks" in e.value.message and cname in e.value.message
    )
    with pytest.raises(AISError) as e:
        empty.add_part(1).put_content(b"")
    assert e.value.status_code == 400 and "put-part invalid size (0)" in e.value.message
    up = obj.multipart_upload().create()
    up.add_part(1).put_content(b"a")
    up.add_part(2).put_content(b"b")
    url = f"{ais_server.endpoint}/v1/objects/{bucket.name}/mpu"
    dup = [{"part-number": 1, "etag": ""}, {"part-number": 1, "etag": ""}]
    r = requests.post(
        url,
        params={"provider": "ais", "uploadId": up.upload_id},
        json={"action": "mpt-complete", "name": "", "value": dup},
        timeout=10,
    )
    assert "duplicate part 1" in err(r, 400)
    up.complete()
    assert obj.get_reader().read_all() == b"ab"
    with pytest.raises(ErrObjNotFound) as nf:  # a completed upload is gone: 404 naming the object
        up.complete()
    assert "does not exist" in nf.value.message
    gone = obj.multipart_upload().create()
    gone.abort()
    with pytest.raises(ErrObjNotFound):
        gone.abort()
    with pytest.raises(ErrObjNotFound):
        gone.add_part(1).put_content(b"late")
    doc = json.loads(nf.value.message)
    assert doc["status"] == 404 and cname in doc["message"]
