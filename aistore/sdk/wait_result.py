"""The outcome of waiting for a job.

Example:
    >>> from aistore.sdk.wait_result import WaitResult
    >>> bool(WaitResult(job_id="j1", success=False, error="aborted"))
    False
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from aistore._internal.timefmt import parse_go_time
from aistore.sdk.const import GO_ZERO_TIME as GO_ZERO_TIME
from aistore.sdk.types import JobSnap

__all__ = ["WaitResult"]


@dataclass
class WaitResult:
    """Whether a job reached the awaited state; truthy on success.

    Example:
        >>> WaitResult(job_id="j1", success=True).error is None
        True
    """

    job_id: str
    success: bool
    error: str | None = None
    end_time: datetime | None = None

    def __bool__(self) -> bool:
        return self.success

    @classmethod
    def from_snapshots(cls, job_id: str, snapshots: Iterable[JobSnap]) -> WaitResult:
        """Summarise per-target snapshots: failed if any aborted or erred; the latest end time
        when every snapshot has ended."""
        aborted = False
        error: str | None = None
        ends: list[datetime] = []
        all_ended = True
        for snap in snapshots:
            aborted = aborted or snap.aborted
            if snap.abort_err and error is None:
                error = snap.abort_err
            if snap.has_ended():
                ends.append(parse_go_time(snap.end_time))
            else:
                all_ended = False
        success = not aborted and not error
        return cls(
            job_id=job_id,
            success=success,
            error=error or ("aborted" if aborted else None),
            end_time=max(ends) if all_ended and ends else None,
        )
