"""Bucket, object, multi-object, job and cluster management calls of the official SDK against
our server; run by test_official_parity.py in the official SDK's venv.

argv: endpoint, run tag (unique per run), the server's promote root (a local directory).

Every check runs on its own; the JSON printed last maps each check's name to "ok", "skipped:
<why>" or the error, so one failure does not hide the others.
"""

import io
import json
import os
import sys
import tarfile
import tempfile
import traceback
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import aistore
from aistore import Client
from aistore.sdk.enums import FLTPresence, LogSeverity, NodeFilter
from aistore.sdk.errors import (
    AISError,
    ErrBckNotFound,
    ErrObjNotFound,
    InvalidBckProvider,
)
from aistore.sdk.multiobj import ObjectRange

ENDPOINT, TAG, PROMOTE_ROOT = sys.argv[1], sys.argv[2], sys.argv[3]
WAIT = 30  # seconds; keeps the official poll interval at 1 s

results: dict[str, str] = {}


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=8)
    return fn


def expect_raises(exc: type[BaseException], fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except exc as e:
        return e
    raise AssertionError(f"expected {exc.__name__}")


def wait_ok(job_id: str) -> None:
    result = client.job(job_id).wait(timeout=WAIT, verbose=False)
    assert result.success, result


def names(bck) -> list[str]:
    return sorted(e.name for e in bck.list_all_objects())


client = Client(ENDPOINT)
src = client.bucket(f"par-src-{TAG}").create()
for i in range(10):
    src.object(f"obj-{i:03d}").get_writer().put_content(b"x" * (i + 1))
src.object("dir/a").get_writer().put_content(b"a")


@check
def bucket_props_and_set_bprops() -> None:
    props = json.loads(src.head()["Ais-Bucket-Props"])
    assert props["chunks"]["chunk_size"] == "1GiB", props["chunks"]
    value = {"chunks": {"objsize_limit": "64MiB", "chunk_size": "16MiB"}}
    src.make_request("patch", "set-bprops", value=value)
    assert json.loads(src.head()["Ais-Bucket-Props"])["chunks"]["chunk_size"] == "16MiB"
    src.make_request("patch", "reset-bprops")
    assert json.loads(src.head()["Ais-Bucket-Props"])["chunks"]["chunk_size"] == "1GiB"


@check
def bucket_summary() -> None:
    s = src.summary()
    assert s["ObjCount"]["obj_count_present"] == "11", s
    assert s["TotalSize"]["size_all_present_objs"] == str(sum(range(1, 11)) + 1), s
    assert src.summary(prefix="dir/")["ObjCount"]["obj_count_present"] == "1"


@check
def bucket_info() -> None:
    props, summ = src.info(flt_presence=FLTPresence.FLT_PRESENT, prefix="obj-00")
    assert json.loads(props)["provider"] == "ais"
    assert summ["ObjCount"]["obj_count_present"] == "10", summ


@check
def bucket_copy_dry_run_prefix_prepend() -> None:
    dst = client.bucket(f"par-copy-{TAG}")
    wait_ok(src.copy(dst, dry_run=True))
    expect_raises(AISError, dst.head)
    wait_ok(src.copy(dst, prefix_filter="dir/", prepend="p/"))
    assert names(dst) == ["p/dir/a"], names(dst)
    dst.delete()


@check
def bucket_rename() -> None:
    b = client.bucket(f"par-ren-{TAG}").create()
    b.object("k").get_writer().put_content(b"k")
    new = f"par-ren2-{TAG}"
    wait_ok(b.rename(new))
    assert b.name == new and names(client.bucket(new)) == ["k"]
    expect_raises(ErrBckNotFound, client.bucket(f"par-ren-{TAG}").list_objects)
    client.bucket(new).delete()


@check
def bucket_put_files() -> None:
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "sub"))
        for rel in ("a.txt", "sub/b.txt"):
            with open(os.path.join(d, rel), "wb") as f:
                f.write(rel.encode())
        b = client.bucket(f"par-pf-{TAG}").create()
        got = b.put_files(d, recursive=True, prepend="up/")
        assert sorted(got) == ["up/a.txt", "up/sub/b.txt"], got
        assert b.object("up/sub/b.txt").get_reader().read_all() == b"sub/b.txt"
        b.delete()


def bucket_write_dataset() -> None:
    """The official write_dataset writes shards with webdataset's ShardWriter."""
    from pathlib import Path

    from aistore.sdk.dataset.data_attribute import DataAttribute
    from aistore.sdk.dataset.dataset_config import DatasetConfig

    with tempfile.TemporaryDirectory() as d:
        for i in range(3):
            Path(d, f"s{i}.jpg").write_bytes(b"img%d" % i)
        b = client.bucket(f"par-wd-{TAG}").create()
        cwd = os.getcwd()
        os.chdir(d)
        try:
            b.write_dataset(DatasetConfig(DataAttribute(Path(d), "image", "jpg")), maxcount=2)
        finally:
            os.chdir(cwd)
        assert names(b) == ["dataset-0.tar", "dataset-1.tar"], names(b)
        b.delete()


try:
    import webdataset  # noqa: F401
except ImportError:
    results["bucket_write_dataset"] = "skipped: webdataset is not installed in the official venv"
else:
    check(bucket_write_dataset)


@check
def list_start_after() -> None:
    got = [e.name for e in src.list_objects_iter(start_after="obj-007", page_size=2)]
    assert got == ["obj-008", "obj-009"], got


@check
def multiobj_delete_copy_archive() -> None:
    b = client.bucket(f"par-mo-{TAG}").create()
    for i in range(6):
        b.object(f"m-{i}").get_writer().put_content(b"m%d" % i)
    dst = client.bucket(f"par-mo-dst-{TAG}")
    ids = b.objects(obj_range=ObjectRange("m-", 0, 2)).copy(dst, prepend="c/")
    wait_ok(ids[0])
    assert names(dst) == ["c/m-0", "c/m-1", "c/m-2"], names(dst)
    ids = b.objects(obj_names=["m-3", "m-4"]).archive("arch.tar")
    wait_ok(ids[0])
    with tarfile.open(fileobj=io.BytesIO(b.object("arch.tar").get_reader().read_all())) as tar:
        assert tar.getnames() == ["m-3", "m-4"], tar.getnames()
    wait_ok(b.objects(obj_template="m-{0..5}").delete())
    assert names(b) == ["arch.tar"], names(b)
    expect_raises(InvalidBckProvider, b.objects(obj_names=["x"]).prefetch)
    expect_raises(InvalidBckProvider, b.objects(obj_names=["x"]).evict)
    dst.delete()
    b.delete()


@check
def job_start_wait_status() -> None:
    for kind in ("lru", "cleanup"):
        job_id = client.job(job_kind=kind).start()
        wait_ok(job_id)
        status = client.job(job_id).status()
        assert status.end_time > 0 and not status.aborted, status
        # A finished job is idle (AIS xact.Base.IsIdle), so waiting for idle returns.
        snaps = client.job(job_id).get_details().list_snapshots()
        assert snaps and all(s.is_idle for s in snaps), snaps
        assert client.job(job_id).wait_for_idle(timeout=WAIT, verbose=False).success


@check
def job_abort() -> None:
    resp = src.make_request("delete", "delete-listrange", value={"template": "never-{0..9999999}"})
    job = client.job(resp.text)
    job.abort()
    result = job.wait(timeout=WAIT, verbose=False)
    assert not result.success and result.error == "aborted", result


@check
def job_timeframe_and_total_time() -> None:
    before = datetime.now(timezone.utc) - timedelta(seconds=2)
    dst = client.bucket(f"par-tf-{TAG}")
    job = client.job(src.copy(dst))
    wait_ok(job.job_id)
    assert [s.id for s in job.get_within_timeframe(before)] == [job.job_id]
    total = job.get_total_time()
    assert total is not None and total < timedelta(seconds=WAIT), total
    dst.delete()


@check
def cluster_job_lists() -> None:
    statuses = client.cluster().list_jobs_status()
    assert statuses and all(s.uuid for s in statuses), statuses
    assert isinstance(client.cluster().list_running_jobs(), list)


@check
def cluster_map_version_uuid() -> None:
    smap = client.cluster().get_info()
    assert smap.tmap and smap.pmap and smap.version >= 1 and smap.uuid, smap
    assert client.cluster().get_uuid() == smap.uuid


@check
def cluster_performance() -> None:
    perf = client.cluster().get_performance()
    (tid,) = perf
    assert perf[tid]["tracker"]["put.n"] >= 11, perf[tid]["tracker"]


@check
def cluster_logs() -> None:
    cluster = client.cluster()
    (tid,) = cluster.get_info().tmap
    text = cluster.get_node_log(tid)
    assert "listening on http://" in text, text[-500:]
    errors = cluster.get_node_log(tid, severity=LogSeverity.ERROR)
    assert all(line.startswith("E") for line in errors.splitlines()), errors[-500:]
    with tarfile.open(fileobj=io.BytesIO(cluster.get_node_log_archive(tid)), mode="r:gz") as tar:
        assert len(tar.getmembers()) == 1
    logs = cluster.get_cluster_logs(role=NodeFilter.ALL)
    (pid,) = cluster.get_info().pmap
    assert pid != tid and sorted(logs) == sorted([pid, tid]), list(logs)  # the proxy's log too


@check
def object_version_after_put() -> None:
    obj = src.object("versioned")
    assert obj.get_writer().put_content(b"1").headers["ais-version"] == "1"
    assert obj.get_writer().put_content(b"2").headers["ais-version"] == "2"
    assert obj.head("version").obj_version == "2"


@check
def object_url_encoded_names() -> None:
    for name in ("sp ace", "hash#x", "q?a=b&c", "pct%41", "plus+", "ü/日本"):
        obj = src.object(name)
        obj.get_writer().put_content(name.encode())
        assert obj.get_reader().read_all() == name.encode(), name
        assert obj.head().size == len(name.encode()), name
        obj.copy(src.object(name + "-copy"))
        assert src.object(name + "-copy").get_reader().read_all() == name.encode(), name
        wait_ok(src.objects(obj_names=[name, name + "-copy"]).delete())
        expect_raises(ErrObjNotFound, obj.get_reader().read_all)


@check
def object_promote() -> None:
    d = os.path.join(PROMOTE_ROOT, f"par-{TAG}")
    os.makedirs(os.path.join(d, "sub"))
    for rel in ("a.txt", "sub/b.txt"):
        with open(os.path.join(d, rel), "wb") as f:
            f.write(rel.encode())
    b = client.bucket(f"par-prom-{TAG}").create()
    assert b.object("one").promote(os.path.join(d, "a.txt")) == ""
    assert b.object("one").get_reader().read_all() == b"a.txt"
    job_id = b.object("tree").promote(d, recursive=True)
    wait_ok(job_id)
    assert names(b) == ["one", "tree/a.txt", "tree/sub/b.txt"], names(b)
    err = expect_raises(AISError, lambda: b.object("x").promote("/etc/passwd"))
    assert err.status_code == 400 and "must be under" in err.message, err
    b.delete()


@check
def multipart_errors() -> None:
    obj = src.object("mpu")
    up = obj.multipart_upload().create()
    err = expect_raises(AISError, up.complete)
    assert err.status_code == 400 and "no chunks" in err.message, err
    up.add_part(1).put_content(b"p")
    up.complete()
    expect_raises(ErrObjNotFound, up.complete)  # the upload is gone once completed


src.delete()
print(json.dumps({"version": aistore.__version__, "checks": results}))
