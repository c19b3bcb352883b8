"""Jobs as a real AIS cluster runs them: kinds that never ran list empty, a finished job is
idle (so `Job.wait_for_idle` returns), a multi-object copy stays listed as running and idle
until its idle timeout, and GetBatch requests run under one job per bucket that ends after
idling, the next request starting a new one. The server here idles jobs for IDLE_S seconds
(`--job-idle-timeout`; AIS's xact.IdleDefault, and our default, is a minute)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer

# Long enough that the checks of "still running, idle" after a job's work (a few requests, two
# idle polls) fit in it on a slow machine; the tests that wait for the end poll for it.
IDLE_S = 5.0
ZERO_TIME = "0001-01-01T00:00:00Z"  # a snapshot's end-time while the job runs


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2, args=["--job-idle-timeout", str(int(IDLE_S * 1000))]) as s:
        yield s


@pytest.fixture(scope="module")
def client(srv: LocalServer) -> Client:
    return srv.client()


@pytest.fixture
def src(client: Client) -> Iterator[Bucket]:
    b = client.bucket(f"js-{uuid.uuid4().hex[:8]}").create()
    for i in range(5):
        b.object(f"o{i}").get_writer().put_content(b"%d" % i * 100)
    yield b
    b.delete(missing_ok=True)


def running(client: Client, kind: str) -> list[str]:
    return [s.split("[", 1)[1][:-1] for s in client.cluster().list_running_jobs(kind)]


def eventually(pred: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_fresh_server_lists_get_batch_jobs_as_empty(client: Client) -> None:
    """First in the module: nothing has run yet."""
    (tid,) = client.cluster().get_info().tmap
    details = client.job(job_kind="get-batch").get_details()
    assert details.root == {tid: []}
    assert running(client, "get-batch") == []
    assert client.cluster().list_jobs_status("get-batch") == []


def test_finished_job_is_idle_and_wait_for_idle_returns(client: Client) -> None:
    job_id = client.job(job_kind="lru").start()
    job = client.job(job_id)
    assert job.wait(timeout=30, verbose=False).success
    (snap,) = job.get_details().list_snapshots()
    assert snap.is_idle and not snap.aborted and snap.end_time not in (None, ZERO_TIME)
    t0 = time.monotonic()
    result = job.wait_for_idle(timeout=30, verbose=False)
    assert result.success and result.job_id == job_id
    assert time.monotonic() - t0 < 10  # two idle polls, not the timeout


def test_copy_objects_job_stays_running_idle_until_its_idle_timeout(
    client: Client, src: Bucket
) -> None:
    dst = client.bucket(src.name + "-dst")
    (job_id,) = src.objects(obj_template="o{0..4}").copy(dst)
    job = client.job(job_id)
    assert job.wait(timeout=30, verbose=False).success  # copy-listrange waits for idle
    assert sorted(e.name for e in dst.list_all_objects()) == [f"o{i}" for i in range(5)]
    # Its work is done, and it is still listed as running, idle, with its counters.
    assert job_id in running(client, "copy-listrange")
    assert job.status().end_time == 0
    (snap,) = job.get_details().list_snapshots()
    assert snap.is_idle and snap.end_time == ZERO_TIME and snap.stats is not None
    assert snap.stats.objects == 5
    assert job.wait_for_idle(timeout=30, verbose=False).success
    # Then it ends by itself, well, and stays queryable.
    assert eventually(lambda: job.status().end_time != 0, IDLE_S + 10)
    status = job.status()
    assert not status.aborted and not status.err
    assert job_id not in running(client, "copy-listrange")
    assert job.get_details().list_snapshots()[0].is_idle
    dst.delete()


def test_aborting_an_idle_copy_job_ends_it(client: Client, src: Bucket) -> None:
    dst = client.bucket(src.name + "-dst")
    (job_id,) = src.objects(obj_names=["o1"]).copy(dst)
    job = client.job(job_id)
    assert eventually(lambda: job.get_details().all_idle(), 10)
    job.abort()
    assert eventually(lambda: job.status().end_time != 0, 5)
    assert job.status().aborted
    dst.delete()


def test_failed_copy_job_ends_at_once(client: Client, src: Bucket) -> None:
    dst = client.bucket(src.name + "-dst")
    (job_id,) = src.objects(obj_names=["missing"]).copy(dst)
    job = client.job(job_id)
    assert eventually(lambda: job.status().end_time != 0, IDLE_S / 2)
    assert "missing" in job.status().err
    dst.delete(missing_ok=True)


def test_get_batch_jobs_per_bucket_end_after_idling(client: Client, src: Bucket) -> None:
    other = client.bucket(src.name + "-2").create()
    other.object("x").get_writer().put_content(b"x")
    assert eventually(lambda: running(client, "get-batch") == [], IDLE_S + 10)
    assert len(list(client.batch(["o0", "o1"], bucket=src).get())) == 2
    (first,) = running(client, "get-batch")
    assert len(list(client.batch(["o2"], bucket=src).get())) == 1
    assert running(client, "get-batch") == [first]  # the same bucket's running job serves it
    (snap,) = client.job(first).get_details().list_snapshots()
    assert snap.bucket is not None and snap.bucket.name == src.name
    assert eventually(lambda: client.job(first).get_details().all_idle(), 5)
    # Another bucket: a job of its own; the first keeps running.
    assert len(list(client.batch(["x"], bucket=other).get())) == 1
    both = running(client, "get-batch")
    assert first in both and len(both) == 2
    (second,) = set(both) - {first}
    # Both end after idling, not aborted; the next request starts a new job.
    assert eventually(lambda: running(client, "get-batch") == [], IDLE_S + 10)
    for job_id in (first, second):
        status = client.job(job_id).status()
        assert status.end_time != 0 and not status.aborted
    assert len(list(client.batch(["o3"], bucket=src).get())) == 1
    (third,) = running(client, "get-batch")
    assert third not in (first, second)
    other.delete()
