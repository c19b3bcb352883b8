"""Asynchronous cluster jobs (xactions): status and waiting.

Example:
    >>> from aistore import Client
    >>> result = Client("http://localhost:8080").job("job-id").wait(timeout=60)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from aistore._internal.progress import ProgressBar
from aistore.sdk.bucket import Bucket as Bucket
from aistore.sdk.const import (
    ACT_START,
    ACT_XACT_STOP,
    DEFAULT_JOB_WAIT_TIMEOUT,
    GO_ZERO_TIME,
    HTTP_METHOD_GET,
    HTTP_METHOD_PUT,
    NANOSECONDS_IN_SECOND,
    QPARAM_FORCE,
    QPARAM_WHAT,
    URL_PATH_CLUSTER,
    WHAT_ONE_XACT_STATUS,
    WHAT_QUERY_XACT_STATS,
)
from aistore.sdk.errors import JobInfoNotFound, Timeout
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import (
    ActionMsg,
    AggregatedJobSnap,
    BucketModel,
    JobArgs,
    JobSnap,
    JobStatus,
)
from aistore.sdk.utils import get_logger as get_logger
from aistore.sdk.utils import probing_frequency
from aistore.sdk.wait_result import WaitResult
from aistore.sdk.xact_const import XACT_KIND_BLOB_DL, XACT_KIND_RESILVER, idles_before_finishing
from aistore.sdk.xact_const import is_valid_kind as is_valid_kind

__all__ = ["NUM_CONSECUTIVE_IDLE", "Job"]

logger = logging.getLogger(__name__)

# Kinds that run on one target without a cluster-wide status: wait on their snapshots.
_SINGLE_NODE_KINDS = frozenset({XACT_KIND_BLOB_DL, XACT_KIND_RESILVER})
# An idle kind is done after this many consecutive all-idle polls (Go `numConsecutiveIdle`).
NUM_CONSECUTIVE_IDLE = 2


class _Poller:
    """Polling schedule: 50 ms, doubling up to the official interval for `timeout`."""

    _FIRST = 0.05

    def __init__(self, timeout: float) -> None:
        self._deadline = time.monotonic() + timeout
        self._max = probing_frequency(timeout)
        self._next = self._FIRST

    def expired(self) -> bool:
        return time.monotonic() > self._deadline

    def sleep(self) -> None:
        time.sleep(min(self._next, max(self._deadline - time.monotonic(), 0.0) + 0.01))
        self._next = min(self._next * 2, self._max)


class _ProgressBar:
    """A tqdm bar of objects processed, fed from the job's snapshots."""

    def __init__(self, job: Job, kind: str, show: bool | None) -> None:
        self._job = job
        self._bar = ProgressBar(show, desc=f"{kind or 'job'}[{job.job_id}]", unit="obj")
        self._shown = 0

    @property
    def active(self) -> bool:
        return self._bar.active

    def update(self) -> None:
        with contextlib.suppress(Exception):  # a progress bar must never fail the wait
            self.show(self._job.get_details().list_snapshots())

    def show(self, snaps: list[JobSnap]) -> None:
        done = sum(s.stats.objects for s in snaps if s.stats is not None)
        self._bar.update(done - self._shown)
        self._shown = done

    def close(self) -> None:
        self._bar.close()


class _IdleStreak:
    """Done when all snapshots were idle on consecutive polls, or at once on an abort."""

    def __init__(self) -> None:
        self._count = 0

    def __call__(self, details: AggregatedJobSnap) -> bool:
        if details.any_aborted():
            return True
        self._count = self._count + 1 if details.all_idle() else 0
        return self._count >= NUM_CONSECUTIVE_IDLE


class Job:
    """One job of the cluster, by id and/or kind; made by `Client.job()`.

    Example:
        >>> job = Client("http://localhost:8080").job(job_id="abc")  # doctest: +SKIP
        >>> job.status().end_time  # doctest: +SKIP
    """

    def __init__(self, client: RequestClient, job_id: str = "", job_kind: str = "") -> None:
        self._client = client
        self._job_id = job_id
        self._job_kind = job_kind

    @property
    def job_id(self) -> str:
        """The job's id ("" for any)."""
        return self._job_id

    @property
    def job_kind(self) -> str:
        """The job's kind ("" for any; learnt by `wait()` when only the id is known)."""
        return self._job_kind

    def status(self) -> JobStatus:
        """Status of the job (`GET /v1/cluster?what=status`).

        Raises:
            ValueError: the job has no id.
        """
        if not self._job_id:
            raise ValueError("Cannot query status on a job without an assigned ID")
        return self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=URL_PATH_CLUSTER,
            res_model=JobStatus,
            json=JobArgs(id=self._job_id, kind=self._job_kind).as_dict(),
            params={QPARAM_WHAT: WHAT_ONE_XACT_STATUS},
        )

    def get_details(self) -> AggregatedJobSnap:
        """Per-target snapshots of the job (`what=qryxstats`)."""
        return self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=URL_PATH_CLUSTER,
            res_model=AggregatedJobSnap,
            json=JobArgs(id=self._job_id, kind=self._job_kind).as_dict(),
            params={QPARAM_WHAT: WHAT_QUERY_XACT_STATS},
        )

    def wait(
        self,
        timeout: int = DEFAULT_JOB_WAIT_TIMEOUT,
        verbose: bool = True,
        *,
        progress: bool | None = None,
    ) -> WaitResult:
        """Wait until the job is done in the way its kind finishes.

        Idle kinds: idle on every target on consecutive polls. Single-target kinds: a
        finished snapshot. All others, unknown kinds included: a terminal status.
        Polling starts at 50 ms and backs off to the official interval, so short jobs
        return promptly. `progress` (our extension): a tqdm bar of objects processed; None
        (default) shows it only when stderr is a terminal, False never.

        Raises:
            aistore.sdk.errors.Timeout: not done within `timeout` seconds.
            aistore.sdk.errors.JobInfoNotFound: only an id is known and no target knows it.
        """
        kind = self._job_kind or (self._resolve_kind() if self._job_id else "")
        shown = _ProgressBar(self, kind, progress)
        bar = shown if shown.active else None
        try:
            if idles_before_finishing(kind):
                return self._wait_for(_IdleStreak(), timeout, verbose, "reached idle state", bar)
            if kind in _SINGLE_NODE_KINDS:
                done = AggregatedJobSnap.any_finished
                return self._wait_for(done, timeout, verbose, "finished", bar)
            return self._wait_terminal(timeout, verbose, bar)
        finally:
            if bar is not None:
                bar.close()

    def wait_for_idle(
        self, timeout: int = DEFAULT_JOB_WAIT_TIMEOUT, verbose: bool = True
    ) -> WaitResult:
        """Wait until every target reports the job idle (or any reports it aborted)."""
        return self._wait_for(_IdleStreak(), timeout, verbose, "reached idle state")

    def wait_single_node(
        self, timeout: int = DEFAULT_JOB_WAIT_TIMEOUT, verbose: bool = True
    ) -> WaitResult:
        """Wait until some target reports the job finished."""
        return self._wait_for(AggregatedJobSnap.any_finished, timeout, verbose, "finished")

    def start(
        self,
        daemon_id: str = "",
        force: bool = False,
        buckets: list[Bucket] | None = None,
    ) -> str:
        """Start a job of this kind (e.g. "lru", "cleanup-store", "rechunk") and return its id.

        Args:
            daemon_id: the target to run it on, for single-target kinds.
            force: override restrictions (e.g. run lru on a bucket with lru disabled).
            buckets: the buckets it runs on, for kinds with a bucket scope (default: all).

        Raises:
            aistore.sdk.errors.AISError: unknown or not startable kind (400).
        """
        args = JobArgs(kind=self._job_kind, daemon_id=daemon_id)
        if buckets:
            models = [
                BucketModel(name=b.name, provider=b.provider.value, namespace=b.namespace)
                for b in buckets
            ]
            if len(models) == 1:
                args.bucket = models[0]
            else:
                args.buckets = models
        params = {QPARAM_FORCE: "true"} if force else {}
        action = ActionMsg(action=ACT_START, value=args.as_dict()).model_dump()
        return self._client.request(
            HTTP_METHOD_PUT, path=URL_PATH_CLUSTER, json=action, params=params
        ).text

    def abort(self) -> None:
        """Abort this job (or, with only a kind, every running job of that kind). A `wait()`
        then returns an unsuccessful `WaitResult` with the abort error.

        Raises:
            ValueError: neither id nor kind is set.
        """
        if not self._job_id and not self._job_kind:
            raise ValueError("Cannot abort a job without an id or kind")
        args = JobArgs(id=self._job_id, kind=self._job_kind)
        action = ActionMsg(action=ACT_XACT_STOP, value=args.as_dict()).model_dump()
        self._client.request(HTTP_METHOD_PUT, path=URL_PATH_CLUSTER, json=action)

    def get_within_timeframe(
        self, start_time: datetime, end_time: datetime | None = None
    ) -> list[JobSnap]:
        """Snapshots of this job (by id or kind) that started at or after `start_time` and, if
        `end_time` is given, ended at or before it.

        Raises:
            JobInfoNotFound: none match.
        """
        start_time = _aware(start_time)
        end_time = _aware(end_time) if end_time is not None else None
        found: list[JobSnap] = []
        for snap in self.get_details().list_snapshots():
            if snap.id != self._job_id and snap.kind != self._job_kind:
                continue
            if _parse_time(snap.start_time) < start_time:
                continue
            if end_time is not None and _parse_time(snap.end_time) > end_time:
                continue
            found.append(snap)
        if not found:
            raise JobInfoNotFound("No relevant job info found")
        return found

    def get_total_time(self) -> timedelta | None:
        """From the earliest start to the latest end over all targets; None while any target
        still runs it (or nothing is known)."""
        snaps = self.get_details().list_snapshots()
        if not snaps:
            return None
        starts, ends = [], []
        for s in snaps:
            if not s.end_time or s.end_time == GO_ZERO_TIME:
                return None
            ends.append(_parse_time(s.end_time))
            if s.start_time:
                starts.append(_parse_time(s.start_time))
        if not starts:
            return None
        return max(ends) - min(starts)

    def _resolve_kind(self) -> str:
        for snap in self.get_details().list_snapshots():
            if snap.kind:
                self._job_kind = snap.kind
                return snap.kind
        raise JobInfoNotFound(f"No job info found for '{self._job_id}'")

    def _wait_terminal(
        self, timeout: int, verbose: bool, bar: _ProgressBar | None = None
    ) -> WaitResult:
        poll = _Poller(timeout)
        while True:
            status = self.status()
            if bar is not None:
                bar.update()
            if status.end_time != 0:
                break
            if poll.expired():
                raise Timeout(f"job '{status.uuid}'", f"after {timeout}s")
            if verbose:
                logger.info("Waiting on job '%s'...", status.uuid)
            poll.sleep()
        end_time = (
            datetime.fromtimestamp(status.end_time / NANOSECONDS_IN_SECOND, tz=timezone.utc)
            if status.end_time > 0
            else None
        )
        error = (status.err or "aborted") if status.aborted else status.err
        result = WaitResult(
            job_id=status.uuid,
            success=not status.err and not status.aborted,
            error=error or None,
            end_time=end_time,
        )
        self._log_result(result, verbose, "finished successfully")
        return result

    def _wait_for(
        self,
        done: Callable[[AggregatedJobSnap], bool],
        timeout: int,
        verbose: bool,
        state: str,
        bar: _ProgressBar | None = None,
    ) -> WaitResult:
        poll = _Poller(timeout)
        while True:
            details = self.get_details()
            snaps = details.list_snapshots()
            if bar is not None:
                bar.show(snaps)
            if snaps and done(details):
                result = WaitResult.from_snapshots(self._job_id, snaps)
                self._log_result(result, verbose, state)
                return result
            if poll.expired():
                raise Timeout(f"job '{self._job_id}'", f"after {timeout}s")
            if verbose:
                logger.info("Waiting on job '%s'...", self._job_id)
            poll.sleep()

    def _log_result(self, result: WaitResult, verbose: bool, state: str) -> None:
        if not verbose:
            return
        if result.success:
            logger.info("Job '%s' %s", result.job_id, state)
        else:
            logger.error("Job '%s' failed: %s", result.job_id, result.error)


def _parse_time(value: str) -> datetime:
    """An RFC 3339 time as Go prints it (nanoseconds, `Z`), timezone-aware."""
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    head, sep, rest = value.partition(".")
    if sep:  # Python takes at most microseconds
        n = len(rest) - len(rest.lstrip("0123456789"))
        digits, zone = rest[:n], rest[n:]
        value = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    return datetime.fromisoformat(value)


def _aware(t: datetime) -> datetime:
    """`t`, read as UTC when it has no timezone (snapshot times are UTC)."""
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)
