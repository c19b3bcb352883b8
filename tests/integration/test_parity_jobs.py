"""Jobs as on a real cluster: maintenance jobs started by kind (Job.start: lru, cleanup,
rechunk, ...), status/wait/abort of the jobs bucket operations create, running and finished job
lists, Job.get_within_timeframe and Job.get_total_time."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from _parity import act, err, put_many

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError, JobInfoNotFound
from aistore.server import LocalServer

BIG = 3000  # objects: enough that copying them outlasts an abort request


@pytest.fixture(scope="module")
def big(ais_server: LocalServer) -> Iterator[Bucket]:
    client = ais_server.client()
    bck = client.bucket(f"big-{uuid.uuid4().hex[:10]}").create()
    put_many(ais_server.endpoint, bck.name, [f"f/{i:05d}" for i in range(BIG)], lambda n: b"." * 64)
    yield bck
    bck.delete(missing_ok=True)


@pytest.mark.parametrize(
    "kind", ["lru", "lru-eviction", "cleanup", "rebalance", "resilver", "load-lom-cache"]
)
def test_start_wait_status(client: Client, kind: str) -> None:
    job_id = client.job(job_kind=kind).start()
    assert job_id
    result = client.job(job_id).wait(timeout=60)
    assert result.success and result.job_id == job_id and result.end_time is not None
    status = client.job(job_id).status()
    assert status.uuid == job_id and status.end_time > 0 and not status.aborted and not status.err
    snap = client.job(job_id).get_details().list_snapshots()[0]
    # Display names are kinds' other names: "lru-eviction" is "lru", "cleanup" is "cleanup-store".
    assert snap.kind in (kind, "lru", "cleanup-store")


def test_start_on_buckets_and_rechunk(
    client: Client, bucket: Bucket, ais_server: LocalServer
) -> None:
    put_many(ais_server.endpoint, bucket.name, [f"r/{i}" for i in range(5)], lambda n: b"z" * 3000)
    job_id = client.job(job_kind="load-lom-cache").start(buckets=[bucket])
    assert client.job(job_id).wait(timeout=60).success
    snap = client.job(job_id).get_details().list_snapshots()[0]
    assert snap.bucket is not None and snap.bucket.name == bucket.name
    assert snap.stats is not None and snap.stats.objects == 5
    value = {"chunks": {"objsize_limit": "2KiB", "chunk_size": "1KiB"}}
    assert (
        act(ais_server.endpoint, "PATCH", f"buckets/{bucket.name}", "set-bprops", value).status_code
        == 200
    )
    job_id = client.job(job_kind="rechunk").start(buckets=[bucket], force=True)
    assert client.job(job_id).wait(timeout=60).success
    props = bucket.object("r/1").head("chunked")
    assert props.chunks is not None and props.chunks.chunk_count == 3
    assert bucket.object("r/1").get_reader().read_all() == b"z" * 3000


def test_start_bad_kinds(client: Client, bucket: Bucket) -> None:
    with pytest.raises(AISError) as e:
        client.job(job_kind="no-such-kind").start()
    assert e.value.status_code == 400 and 'not found xaction \\"no-such-kind\\"' in e.value.message
    with pytest.raises(AISError) as e:
        client.job(job_kind="copy-bck").start()
    assert e.value.status_code == 400 and "cannot be started" in e.value.message
    with pytest.raises(AISError) as e:
        client.job(job_kind="rechunk").start()  # needs its bucket
    assert e.value.status_code == 400
    with pytest.raises(AISError) as e:
        client.job(job_kind="lru").start(buckets=[client.bucket("no-such-lru-b")])
    assert e.value.status_code == 404


def test_job_lists(client: Client, big: Bucket) -> None:
    dst = client.bucket(f"lists-{uuid.uuid4().hex[:8]}")
    job_id = big.copy(dst)
    running = client.cluster().list_running_jobs(job_kind="copy-bck")
    assert f"copy-bck[{job_id}]" in running or client.job(job_id).status().end_time > 0
    assert client.job(job_id).wait(timeout=120).success
    statuses = client.cluster().list_jobs_status(job_kind="copy-bck")
    assert job_id in [s.uuid for s in statuses]
    assert f"copy-bck[{job_id}]" not in client.cluster().list_running_jobs()
    assert all(s.uuid for s in client.cluster().list_jobs_status())
    # Display names select the same jobs as kinds.
    assert job_id in [s.uuid for s in client.cluster().list_jobs_status(job_kind="copy-bucket")]
    dst.delete()


def test_timeframe_and_total_time(client: Client, big: Bucket) -> None:
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    dst = client.bucket(f"tf-{uuid.uuid4().hex[:8]}")
    job = client.job(big.copy(dst))
    assert job.wait(timeout=120).success
    total = job.get_total_time()
    assert total is not None and timedelta(0) < total < timedelta(seconds=120)
    snaps = job.get_within_timeframe(before)
    assert [s.id for s in snaps] == [job.job_id]
    assert job.get_within_timeframe(before, datetime.now(timezone.utc) + timedelta(seconds=1))
    assert job.get_within_timeframe(before.replace(tzinfo=None))  # naive = UTC
    with pytest.raises(JobInfoNotFound):
        job.get_within_timeframe(datetime.now(timezone.utc) + timedelta(hours=1))
    dst.delete()


def test_total_time_is_none_while_running(
    client: Client, ais_server: LocalServer, bucket: Bucket
) -> None:
    r = act(
        ais_server.endpoint,
        "DELETE",
        f"buckets/{bucket.name}",
        "delete-listrange",
        {"template": "n-{0..9999999}"},
    )
    job = client.job(r.text)
    assert job.get_total_time() is None
    job.abort()
    assert not job.wait(timeout=60).success
    assert job.get_total_time() is not None


TRIES = 5  # jobs started and aborted at once, until one is still running when its abort lands


def test_abort_copy_bucket(client: Client, big: Bucket) -> None:
    for _ in range(TRIES):
        dst = client.bucket(f"abort-copy-{uuid.uuid4().hex[:8]}")
        job = client.job(big.copy(dst))
        job.abort()
        result = job.wait(timeout=60)
        if not result.success:
            break
        dst.delete(missing_ok=True)  # it finished before the abort came: again
    else:
        pytest.fail(f"{TRIES} copies finished despite an abort sent right after the start")
    assert result.error == "aborted"
    status = job.status()
    assert status.aborted and status.end_time > 0
    assert len(dst.list_all_objects()) < BIG
    dst.delete(missing_ok=True)


def test_abort_rename_keeps_the_source(client: Client, big: Bucket) -> None:
    # A throwaway copy of `big` to rename: a rename that finishes first moves its source away.
    src = f"abort-mv-src-{uuid.uuid4().hex[:8]}"
    assert client.job(big.copy(client.bucket(src))).wait(timeout=120).success
    try:
        for _ in range(TRIES):
            new = f"abort-mv-{uuid.uuid4().hex[:8]}"
            job = client.job(client.bucket(src).rename(new))  # (renames that Bucket object)
            job.abort()
            result = job.wait(timeout=60)
            if not result.success:
                break
            src = new  # it finished before the abort came: again, from there
        else:
            pytest.fail(f"{TRIES} renames finished despite an abort sent right after the start")
        assert len(client.bucket(src).list_all_objects()) == BIG  # nothing moved
        with pytest.raises(AISError):
            client.bucket(new).head()  # the half-made destination is gone
    finally:
        client.bucket(src).delete(missing_ok=True)


def test_abort_by_kind_and_errors(client: Client, ais_server: LocalServer, bucket: Bucket) -> None:
    r = act(
        ais_server.endpoint,
        "DELETE",
        f"buckets/{bucket.name}",
        "delete-listrange",
        {"template": "k-{0..9999999}"},
    )
    client.job(job_kind="delete-objects").abort()  # a display name aborts by kind too
    assert client.job(r.text).wait(timeout=60).error == "aborted"
    with pytest.raises(ValueError):
        client.job().abort()
    with pytest.raises(ValueError):
        client.job().status()
    with pytest.raises(AISError) as e:
        client.job("no-such-job-id").status()
    assert e.value.status_code == 404
    with pytest.raises(AISError) as e:  # as on AIS: qryxstats finds nothing -> 404
        client.job("no-such-job-id").wait(timeout=5)
    assert e.value.status_code == 404
    msg = err(act(ais_server.endpoint, "PUT", "cluster", "nonsense"), 400)
    assert 'invalid action "nonsense"' in msg


def test_summary_job_visible(client: Client, big: Bucket) -> None:
    s = big.summary(prefix="f/01")
    assert s["ObjCount"]["obj_count_present"] == "1000"
    statuses = client.cluster().list_jobs_status(job_kind="summary")
    assert statuses and all(st.end_time > 0 for st in statuses)
