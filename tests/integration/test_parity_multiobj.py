"""Multi-object operations (ObjectGroup) on lists, ranges ({0..999} templates) and prefixes:
delete, copy, archive into a shard, prefetch and evict - each a job that can be waited on and
aborted. Bad selections are 4xx AIS errors."""

from __future__ import annotations

import io
import json
import tarfile
import uuid
import zipfile
from collections.abc import Iterator

import pytest
from _parity import act, err, put_many

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError, ErrBckNotFound, InvalidBckProvider
from aistore.sdk.multiobj import ObjectRange
from aistore.server import LocalServer

N = 20


@pytest.fixture
def objs(client: Client, ais_server: LocalServer) -> Iterator[Bucket]:
    """obj-000..obj-019 (content = name) and two under dir/."""
    bck = client.bucket(f"mo-{uuid.uuid4().hex[:10]}").create()
    put_many(ais_server.endpoint, bck.name, [f"obj-{i:03d}" for i in range(N)] + ["dir/x", "dir/y"])
    yield bck
    bck.delete(missing_ok=True)


def names(bck: Bucket) -> list[str]:
    return sorted(e.name for e in bck.list_all_objects())


def wait_ok(client: Client, job_id: str) -> None:
    result = client.job(job_id).wait(timeout=120)
    assert result.success, result.error


def test_delete_list_range_template_prefix(objs: Bucket, client: Client) -> None:
    wait_ok(client, objs.objects(obj_names=["obj-000", "obj-001"]).delete())
    wait_ok(client, objs.objects(obj_range=ObjectRange("obj-", 2, 4, pad_width=3)).delete())
    wait_ok(client, objs.objects(obj_template="obj-{005..009..2}").delete())
    wait_ok(client, objs.objects(obj_template="dir/").delete())  # no braces: a prefix
    left = names(objs)
    assert left == ["obj-006", "obj-008"] + [f"obj-{i:03d}" for i in range(10, N)]


def test_delete_range_of_thousand_names(objs: Bucket, client: Client) -> None:
    group = objs.objects(obj_template="obj-{000..999}")
    assert len(group.list_names()) == 1000
    wait_ok(client, group.delete())  # names that do not exist are skipped in a range
    assert names(objs) == ["dir/x", "dir/y"]


def test_delete_missing_listed_name_fails_the_job(objs: Bucket, client: Client) -> None:
    job_id = objs.objects(obj_names=["obj-000", "nope", "obj-001"]).delete()
    result = client.job(job_id).wait(timeout=60)
    assert not result.success
    assert result.error is not None and f"ais://{objs.name}/nope does not exist" in result.error
    assert "obj-000" not in names(objs) and "obj-001" not in names(objs)  # the rest went


def test_copy_list_and_range(objs: Bucket, client: Client) -> None:
    dst = client.bucket(f"mo-dst-{uuid.uuid4().hex[:8]}")
    ids = objs.objects(obj_names=["obj-000", "dir/x"]).copy(dst, prepend="p/")
    assert len(ids) == 1
    wait_ok(client, ids[0])
    ids = objs.objects(obj_range=ObjectRange("obj-", 10, 12, pad_width=3)).copy(dst)
    wait_ok(client, ids[0])
    assert names(dst) == ["obj-010", "obj-011", "obj-012", "p/dir/x", "p/obj-000"]
    assert dst.object("p/dir/x").get_reader().read_all() == b"dir/x"
    snaps = client.job(ids[0]).get_details().list_snapshots()
    assert snaps[0].kind == "copy-listrange" and snaps[0].is_idle
    assert snaps[0].stats is not None and snaps[0].stats.objects == 3
    dst.delete()


def test_copy_dry_run_and_continue_on_error(objs: Bucket, client: Client) -> None:
    dst = client.bucket(f"mo-dry-{uuid.uuid4().hex[:8]}")
    wait_ok(client, objs.objects(obj_template="obj-{000..004}").copy(dst, dry_run=True)[0])
    with pytest.raises(AISError):
        dst.head()
    dst.create()
    # Continue on error: the job goes on past the missing object and ends well (as AIS:
    # the error is only recorded); without it, the job stops there and fails.
    ids = objs.objects(obj_names=["obj-001", "gone", "obj-002"]).copy(dst, continue_on_error=True)
    assert client.job(ids[0]).wait(timeout=60).success
    assert f"ais://{objs.name}/gone does not exist" in client.job(ids[0]).status().err
    assert names(dst) == ["obj-001", "obj-002"]
    ids = objs.objects(obj_names=["gone", "obj-003"]).copy(dst)
    result = client.job(ids[0]).wait(timeout=60)
    assert not result.success and result.error is not None and "gone does not exist" in result.error
    assert "obj-003" not in names(dst)
    dst.delete()


@pytest.mark.parametrize(
    ("archname", "mime"),
    [
        ("shard.tar", ""),
        ("shard.tgz", ""),
        ("shard.tar.gz", ""),
        ("shard.zip", ""),
        ("s.bin", "tar"),
    ],
)
def test_archive_formats(objs: Bucket, client: Client, archname: str, mime: str) -> None:
    ids = objs.objects(obj_template="obj-{000..003}").archive(archname, mime=mime)
    wait_ok(client, ids[0])
    data = objs.object(archname).get_reader().read_all()
    if archname.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = {n: z.read(n) for n in z.namelist()}
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert members == {f"obj-{i:03d}": f"obj-{i:03d}".encode() for i in range(4)}


def test_archive_to_other_bucket_with_source_names_and_append(objs: Bucket, client: Client) -> None:
    dst = client.bucket(f"mo-arch-{uuid.uuid4().hex[:8]}").create()
    group = objs.objects(obj_names=["obj-000", "dir/x"])
    wait_ok(client, group.archive("a.tar", to_bck=dst, include_source_name=True)[0])
    more = objs.objects(obj_names=["obj-001"])
    wait_ok(
        client, more.archive("a.tar", to_bck=dst, include_source_name=True, allow_append=True)[0]
    )
    with tarfile.open(fileobj=io.BytesIO(dst.object("a.tar").get_reader().read_all())) as tar:
        got = sorted(tar.getnames())
    assert got == sorted(f"{objs.name}/{n}" for n in ("obj-000", "dir/x", "obj-001"))
    dst.delete()


def test_archive_bad_input(objs: Bucket, ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    value = {"template": "obj-{000..003}", "archname": "noext"}
    assert "cannot tell the format" in err(
        act(ep, "PUT", f"buckets/{objs.name}", "archive", value), 400
    )
    value = {"objnames": ["obj-000"], "archname": "a.tar", "mime": "rar"}
    assert 'unknown mime type "rar"' in err(
        act(ep, "PUT", f"buckets/{objs.name}", "archive", value), 400
    )
    value = {
        "objnames": ["obj-000"],
        "archname": "a.tar",
        "tobck": {"name": "nope-dst", "provider": "ais"},
    }
    msg = err(act(ep, "PUT", f"buckets/{objs.name}", "archive", value), 404)
    assert 'bucket "ais://nope-dst" does not exist' in msg
    # Not a provider at all: a bad request (AIS: 400), not an unserved one (501).
    value["tobck"] = {"name": "dst", "provider": "x"}
    msg = err(act(ep, "PUT", f"buckets/{objs.name}", "archive", value), 400)
    assert 'invalid backend provider "x": must be one of [ais, aws (s3://), gcp (gs://)' in msg


def test_bad_selections(objs: Bucket, ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    path = f"buckets/{objs.name}"
    msg = err(act(ep, "DELETE", path, "delete-listrange", {"template": "obj-{5..1}"}), 400)
    assert "'start' cannot be greater than 'end'" in msg
    msg = err(act(ep, "DELETE", path, "delete-listrange", {"template": "x-{1..2..0}"}), 400)
    assert "'step' is non-positive" in msg
    msg = err(
        act(ep, "DELETE", path, "delete-listrange", {"objnames": ["a"], "template": "b"}), 400
    )
    assert "both objnames and template" in msg
    msg = err(act(ep, "DELETE", path, "delete-listrange", {"objnames": ["../etc"]}), 400)
    assert msg
    msg = err(act(ep, "DELETE", "buckets/no-such-mo", "delete-listrange", {"objnames": ["a"]}), 404)
    assert 'bucket "ais://no-such-mo" does not exist' in msg
    with pytest.raises(ErrBckNotFound):
        Client(ep).bucket("no-such-mo").objects(obj_names=["a"]).delete()
    with pytest.raises(ValueError):
        objs.objects()
    with pytest.raises(ValueError):
        objs.objects(obj_names=[])


def test_prefetch_and_evict_on_ais_bucket(
    objs: Bucket, client: Client, ais_server: LocalServer
) -> None:
    group = objs.objects(obj_template="obj-{000..004}")
    with pytest.raises(InvalidBckProvider):  # as the official SDK: remote buckets only
        group.prefetch()
    with pytest.raises(InvalidBckProvider):
        group.evict()
    # The wire calls themselves are jobs that complete (everything is in the cluster already).
    ep = ais_server.endpoint
    for method, action in (("POST", "prefetch-listrange"), ("DELETE", "evict-listrange")):
        r = act(ep, method, f"buckets/{objs.name}", action, {"template": "obj-{000..004}"})
        assert r.status_code == 200, r.text
        result = client.job(r.text).wait(timeout=60)
        assert result.success
        snap = client.job(r.text).get_details().list_snapshots()[0]
        assert snap.kind == action and snap.stats is not None and snap.stats.objects == 5
    assert len(names(objs)) == N + 2  # evict removed nothing from an ais:// bucket


@pytest.mark.parametrize(
    ("method", "action", "extra"),
    [
        ("DELETE", "delete-listrange", {}),
        ("DELETE", "evict-listrange", {}),
        ("POST", "prefetch-listrange", {}),
        ("POST", "copy-listrange", {"tobck": {"name": "ABORT-DST", "provider": "ais"}}),
        ("PUT", "archive", {"archname": "never.tar"}),
    ],
)
def test_multiobj_jobs_abort(
    objs: Bucket,
    client: Client,
    ais_server: LocalServer,
    method: str,
    action: str,
    extra: dict[str, object],
) -> None:
    """A range of ten million names keeps each job busy long enough to abort it."""
    value: dict[str, object] = {"template": "never-{0000000..9999999}", **extra}
    if "tobck" in value:
        value["tobck"] = {"name": f"mo-abort-{uuid.uuid4().hex[:8]}", "provider": "ais"}
    r = act(ais_server.endpoint, method, f"buckets/{objs.name}", action, value)
    assert r.status_code == 200, r.text
    job = client.job(r.text)
    assert job.status().end_time == 0
    job.abort()
    result = job.wait(timeout=60)
    assert not result.success and result.error == "aborted"
    assert job.status().aborted
    snap = job.get_details().list_snapshots()[0]
    assert snap.aborted and snap.abort_err == "aborted"
    assert "never.tar" not in names(objs)  # an aborted archive leaves no object behind
    if "tobck" in value:
        client.bucket(json.loads(json.dumps(value["tobck"]))["name"]).delete(missing_ok=True)
