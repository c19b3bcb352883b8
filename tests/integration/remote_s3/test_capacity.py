"""Capacity on small real filesystems: a tmpfs of 64 MiB made by the test is the server's one
mountpath, moto its S3. Cold GETs fill the cache past space.highwm and the lru job evicts it down
to space.lowwm, least recently used first, never what is being read, never ais:// objects, and an
evicted object is a cold GET again; above space.out_of_space writes are refused (507) with
nothing partial left, and reads go on. Skipped where a tmpfs cannot be mounted."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _s3 import FaultProxy, RemoteS3, remote_s3
from _util import content_for, create_bucket, raw_request, wait_until, work_files

from aistore.sdk import Client

MiB = 1 << 20
TMPFS_MIB = 64
DONT_EVICT_S = 1.0  # lru.dont_evict_time in these tests (the server's floor lowered to allow it)
OOS_BIT = 256  # AIS cos.NodeStateFlags OOS
LOW_CAPACITY_BIT = 2048


@pytest.fixture(scope="module")
def tmpfs_mountpath(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    mp = tmp_path_factory.mktemp("capacity") / "mp"
    mp.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MIB}m", "tmpfs", str(mp)],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()}): capacity tests need one")
    try:
        yield mp
    finally:
        subprocess.run(["umount", str(mp)], check=False)


@pytest.fixture(scope="module")
def remote(tmpfs_mountpath: Path) -> Iterator[RemoteS3]:
    """The module's stack on the tmpfs (overrides conftest's), dont_evict_time down to 1 s."""
    with remote_s3(mountpaths=[tmpfs_mountpath], args=("--lru-min-dont-evict", "1000")) as r:
        yield r


def set_config(endpoint: str, **keys: Any) -> http.client.HTTPResponse | Any:
    """AIS 5.0's set-config by query (what `ais config cluster k=v` sends)."""
    query = urllib.parse.urlencode({k.replace("__", "."): str(v) for k, v in keys.items()})
    return raw_request(endpoint, "PUT", f"/v1/cluster/set-config?{query}")


def watermarks(endpoint: str, cleanup: int, low: int, high: int, oos: int) -> None:
    r = set_config(
        endpoint,
        space__cleanupwm=cleanup,
        space__lowwm=low,
        space__highwm=high,
        space__out_of_space=oos,
        lru__dont_evict_time=f"{int(DONT_EVICT_S * 1000)}ms",
    )
    assert r.status == 200, r.body


def node_status(endpoint: str) -> dict[str, Any]:
    r = raw_request(endpoint, "GET", "/v1/daemon?what=node_status")
    assert r.status == 200, r.body
    return json.loads(r.body)


def pct_used(endpoint: str) -> int:
    return int(node_status(endpoint)["capacity"]["pct_max"])


def cached(endpoint: str, bucket: str, name: str) -> bool:
    """Whether s3://bucket/name is in the cache (presence=2 answers without asking S3)."""
    path = f"/v1/objects/{bucket}/{urllib.parse.quote(name)}?provider=aws&presence=2&props=size"
    status = raw_request(endpoint, "HEAD", path).status
    assert status in (200, 404), status
    return status == 200


def lru_jobs(endpoint: str) -> list[dict[str, Any]]:
    """Snapshots of every lru job, newest first."""
    r = raw_request(
        endpoint,
        "GET",
        "/v1/cluster?what=qryxstats",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"kind": "lru"}).encode(),
    )
    assert r.status == 200, r.body
    return [snap for snaps in json.loads(r.body).values() for snap in snaps]


def wait_lru_idle(endpoint: str, timeout: float = 60) -> None:
    wait_until(lambda: all(j["is_idle"] for j in lru_jobs(endpoint)), timeout, "lru jobs to end")


@pytest.fixture(scope="module")
def pinned(remote: RemoteS3) -> dict[str, bytes]:
    """ais://pinned: 4 MiB the lru job must never touch, written before anything else."""
    endpoint = remote.server.endpoint
    create_bucket(endpoint, "pinned")
    objs = {f"p{i}": content_for(f"p{i}", MiB) for i in range(4)}
    b = remote.server.client().bucket("pinned")
    for name, data in objs.items():
        b.object(name).get_writer().put_content(data)
    return objs


def assert_pinned_intact(client: Client, pinned: dict[str, bytes]) -> None:
    for name, data in pinned.items():
        assert client.bucket("pinned").object(name).get_reader().read_all() == data, name


def test_lru_evicts_least_recently_used_down_to_lowwm(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: Any, pinned: dict[str, bytes]
) -> None:
    ep = server.endpoint
    watermarks(ep, cleanup=40, low=50, high=75, oos=95)
    names = [f"o{i:02d}" for i in range(60)]
    for n in names:
        s3.put_object(Bucket=bucket, Key=n, Body=content_for(n, MiB))
    b = client.bucket(bucket, provider="aws")
    for n in names[:40]:  # ~70% used: below highwm
        assert b.object(n).get_reader().read_all() == content_for(n, MiB)
    assert pct_used(ep) < 75
    time.sleep(DONT_EVICT_S + 0.2)
    for n in names[:10]:  # read again: o00..o09 are now more recent than o10..o39
        assert b.object(n).get_reader().read_all() == content_for(n, MiB)
    time.sleep(DONT_EVICT_S + 0.2)
    filled = 40
    while pct_used(ep) <= 75:  # cold GETs until the cache is past highwm: the lru job starts
        n = names[filled]
        assert b.object(n).get_reader().read_all() == content_for(n, MiB)
        filled += 1
    wait_until(lambda: lru_jobs(ep), 15, "the lru job to start by itself")
    wait_lru_idle(ep)
    assert pct_used(ep) <= 50, node_status(ep)["capacity"]
    evicted = [n for n in names[:filled] if not cached(ep, bucket, n)]
    assert evicted, "nothing evicted"
    # Least recently used first: exactly a prefix of o10..o39, in the order they were read.
    assert evicted == names[10 : 10 + len(evicted)], evicted
    assert len(evicted) < 30
    jobs = lru_jobs(ep)
    assert sum(int(j["stats"]["loc-objs"]) for j in jobs) == len(evicted), jobs
    assert sum(int(j["stats"]["loc-bytes"]) for j in jobs) == len(evicted) * MiB, jobs
    tracker = node_status(ep)["tracker"]
    assert (
        tracker["lru.evict.n"] >= len(evicted) and tracker["lru.evict.size"] >= len(evicted) * MiB
    )
    assert_pinned_intact(client, pinned)
    # An evicted object is a cold GET again; a kept one is still warm.
    first, kept = evicted[0], names[0]
    assert proxy.count("GET", f"/{bucket}/{first}") == 1
    assert b.object(first).get_reader().read_all() == content_for(first, MiB)
    assert proxy.count("GET", f"/{bucket}/{first}") == 2
    assert b.object(kept).get_reader().read_all() == content_for(kept, MiB)
    assert proxy.count("GET", f"/{bucket}/{kept}") == 1


def test_object_being_read_keeps_its_bytes_when_evicted(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: Any, pinned: dict[str, bytes]
) -> None:
    ep = server.endpoint
    watermarks(ep, cleanup=40, low=50, high=90, oos=95)
    data = content_for("big", 16 * MiB)
    s3.put_object(Bucket=bucket, Key="big", Body=data)
    b = client.bucket(bucket, provider="aws")
    assert b.object("big").get_reader().read_all() == data
    # A reader takes its first bytes, then stalls (the server's reply waits on the socket).
    u = urllib.parse.urlsplit(ep)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("GET", f"/v1/objects/{bucket}/big?provider=aws")
    resp = conn.getresponse()
    assert resp.status == 200
    head = resp.read(256 << 10)
    time.sleep(DONT_EVICT_S + 0.2)  # the read's own access no longer protects it
    watermarks(ep, cleanup=1, low=2, high=3, oos=99)  # far above highwm: evict all that may go
    wait_until(lambda: lru_jobs(ep), 15, "the lru job to start")
    wait_lru_idle(ep)
    assert not cached(ep, bucket, "big"), "the object was not evicted"
    rest = resp.read()
    conn.close()
    assert head + rest == data, "the reader's bytes changed under eviction"
    assert_pinned_intact(client, pinned)  # ais:// objects are never evicted, even at lowwm 2%
    assert b.object("big").get_reader().read_all() == data
    assert proxy.count("GET", f"/{bucket}/big") == 2


def test_out_of_space_refuses_writes_and_serves_reads(
    client: Client, s3: Any, proxy: FaultProxy, bucket: str, server: Any, pinned: dict[str, bytes]
) -> None:
    ep = server.endpoint
    mountpaths = server.mountpaths
    s3.put_object(Bucket=bucket, Key="cold", Body=b"x" * MiB)
    used = pct_used(ep)  # the pinned objects at least: never evicted
    assert used > 5
    watermarks(ep, cleanup=1, low=2, high=3, oos=5)
    try:
        st = node_status(ep)
        assert "out of space" in st["capacity"]["cs_err"], st["capacity"]
        assert st["cluster"]["flags"] & OOS_BIT
        r = raw_request(ep, "PUT", "/v1/objects/pinned/new?provider=ais", body=b"y" * MiB)
        assert r.status == 507, r.body
        assert b"out of space" in r.body, r.body
        r = raw_request(ep, "GET", f"/v1/objects/{bucket}/cold?provider=aws")
        assert r.status == 507, r.body
        assert not cached(ep, bucket, "cold")
        assert proxy.count("GET", f"/{bucket}/cold") == 0, "refused before asking S3"
        assert_pinned_intact(client, pinned)  # reads go on
        assert raw_request(ep, "HEAD", "/v1/objects/pinned/new?provider=ais").status == 404
        assert not [f for f in work_files(mountpaths) if f.endswith(".tmp")]
    finally:
        watermarks(ep, cleanup=65, low=75, high=90, oos=95)
    assert not node_status(ep)["cluster"]["flags"] & (OOS_BIT | LOW_CAPACITY_BIT)
    assert (
        raw_request(ep, "PUT", "/v1/objects/pinned/new?provider=ais", body=b"y" * MiB).status == 200
    )
    assert (
        client.bucket(bucket, provider="aws").object("cold").get_reader().read_all() == b"x" * MiB
    )


def test_a_put_that_fills_the_disk_leaves_nothing(server: Any, pinned: dict[str, bytes]) -> None:
    ep = server.endpoint
    before = int(node_status(ep)["capacity"]["total_used"])
    u = urllib.parse.urlsplit(ep)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    status = None
    try:
        conn.putrequest("PUT", "/v1/objects/pinned/huge?provider=ais")
        conn.putheader("Content-Length", str(TMPFS_MIB * 2 * MiB))
        conn.endheaders()
        chunk = os.urandom(MiB)
        for _ in range(TMPFS_MIB * 2):
            conn.send(chunk)
        status = conn.getresponse().status
    except OSError:
        pass  # the server answered (507) and closed before the whole body was sent
    finally:
        conn.close()
    assert status in (None, 507), status
    assert raw_request(ep, "HEAD", "/v1/objects/pinned/huge?provider=ais").status == 404
    wait_until(
        lambda: not [f for f in work_files(server.mountpaths) if f.endswith(".tmp")],
        10,
        "no temp file left",
    )
    after = int(node_status(ep)["capacity"]["total_used"])
    assert after <= before + MiB, (before, after)


def test_space_config_is_validated_and_shown(server: Any, bucket: str) -> None:
    ep = server.endpoint
    r = set_config(ep, space__highwm=70)  # below lowwm 75
    assert r.status == 400 and b"space.highwm" in r.body, r.body
    r = set_config(ep, lru__dont_evict_time="10ms")  # below the server's floor (1 s here)
    assert r.status == 400 and b"lru.dont_evict_time" in r.body, r.body
    r = set_config(ep, space__lowwm="lots")
    assert r.status == 400 and b"space.lowwm" in r.body, r.body
    body = {
        "action": "set-config",
        "value": {"space": {"highwm": 85}, "lru": {"capacity_upd_time": "20s"}},
    }
    r = raw_request(ep, "PUT", "/v1/cluster", body=json.dumps(body).encode())
    assert r.status == 200, r.body
    cfg = json.loads(raw_request(ep, "GET", "/v1/cluster?what=cluster_config").body)
    assert cfg["space"] == {"cleanupwm": 65, "lowwm": 75, "highwm": 85, "out_of_space": 95}
    assert cfg["lru"]["capacity_upd_time"] == "20s" and cfg["lru"]["enabled"] is True
    watermarks(ep, cleanup=65, low=75, high=90, oos=95)
    # Per bucket: lru.enabled is the bucket's; the durations are the cluster's.
    raw_request(ep, "HEAD", f"/v1/buckets/{bucket}?provider=aws")  # added on first use
    props = json.loads(
        raw_request(ep, "HEAD", f"/v1/buckets/{bucket}?provider=aws").headers["Ais-Bucket-Props"]
    )
    assert props["lru"]["enabled"] is True
    patch = {"action": "set-bprops", "value": {"lru": {"enabled": False}}}
    r = raw_request(
        ep, "PATCH", f"/v1/buckets/{bucket}?provider=aws", body=json.dumps(patch).encode()
    )
    assert r.status == 200, r.body
    for value, field in (
        ({"lru": {"dont_evict_time": "5h"}}, b"lru.dont_evict_time"),
        ({"ec": {"enabled": True}}, b"ec.enabled"),
    ):
        body = json.dumps({"action": "set-bprops", "value": value}).encode()
        r = raw_request(ep, "PATCH", f"/v1/buckets/{bucket}?provider=aws", body=body)
        assert r.status == 501 and field in r.body and b"not" in r.body, (value, r.body)
    # A mirror needs as many mountpaths as copies (this server has one), and at least 2 copies.
    for value in ({"mirror": {"enabled": True}}, {"mirror": {"enabled": True, "copies": 2}}):
        body = json.dumps({"action": "set-bprops", "value": value}).encode()
        r = raw_request(ep, "PATCH", f"/v1/buckets/{bucket}?provider=aws", body=body)
        assert r.status == 400 and b"mirror.copies" in r.body, (value, r.body)
    body = json.dumps({"action": "set-bprops", "value": {"lru": {"enabled": True}}}).encode()
    r = raw_request(ep, "PATCH", "/v1/buckets/pinned?provider=ais", body=body)
    assert r.status == 501 and b"lru.enabled" in r.body, r.body


def test_capacity_is_reported_as_ais_computes_it(server: Any, tmpfs_mountpath: Path) -> None:
    ep = server.endpoint
    watermarks(ep, cleanup=65, low=75, high=90, oos=95)
    cap = node_status(ep)["capacity"]
    v = os.statvfs(tmpfs_mountpath)
    used_blocks = v.f_blocks - v.f_bavail
    mp = cap["mountpaths"][str(tmpfs_mountpath)]
    assert int(mp["used"]) == used_blocks * v.f_frsize  # AIS fs getCapacity: blocks - bavail
    assert int(mp["avail"]) == v.f_bavail * v.f_frsize
    assert mp["pct_used"] == used_blocks * 100 // v.f_blocks  # floor below highwm - 1
    assert mp["fs"]["FsType"] == "tmpfs"
    assert (cap["total_used"], cap["total_avail"]) == (mp["used"], mp["avail"])
    assert cap["pct_max"] == cap["pct_min"] == cap["pct_avg"] == mp["pct_used"]
    assert cap["cs_err"] == ""
    r = raw_request(ep, "GET", "/v1/daemon?what=mountpaths")
    assert json.loads(r.body)["available"] == [str(tmpfs_mountpath)]
