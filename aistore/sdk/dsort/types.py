"""Metrics and job info of dSort jobs, as the cluster reports them (strings where AIS sends
strings).

Example:
    >>> PhaseInfo(started_time="", end_time="", elapsed=0, running=False, finished=True).finished
    True
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from aistore.sdk.types import BucketModel

__all__ = [
    "DetailedStats",
    "DsortMetrics",
    "JobInfo",
    "LocalExtraction",
    "MetaSorting",
    "PhaseInfo",
    "ShardCreation",
    "ThroughputStats",
    "TimeStats",
]


class TimeStats(BaseModel):
    """Time spent on a kind of task.

    Example:
        >>> TimeStats(total_ms="10", count="2", min_ms="4", max_ms="6", avg_ms="5").avg_ms
        '5'
    """

    total_ms: str
    count: str
    min_ms: str
    max_ms: str
    avg_ms: str


class ThroughputStats(BaseModel):
    """Throughput of a kind of task.

    Example:
        >>> ThroughputStats(total="8", count="2", min_throughput="3", max_throughput="5",
        ...                 avg_throughput="4").total
        '8'
    """

    total: str
    count: str
    min_throughput: str
    max_throughput: str
    avg_throughput: str


class DetailedStats(TimeStats, ThroughputStats):
    """Time and throughput of a kind of task.

    Example:
        >>> sorted(DetailedStats.model_fields)[:2]
        ['avg_ms', 'avg_throughput']
    """


class PhaseInfo(BaseModel):
    """Progress of one phase of a dSort job.

    Example:
        >>> PhaseInfo(started_time="", end_time="", elapsed=3, running=True, finished=False).elapsed
        3
    """

    started_time: str
    end_time: str
    elapsed: int
    running: bool
    finished: bool


class LocalExtraction(PhaseInfo):
    """Phase 1: records extracted from the input shards.

    Example:
        >>> "extracted_count" in LocalExtraction.model_fields
        True
    """

    total_count: str
    extracted_count: str
    extracted_size: str
    extracted_record_count: str
    extracted_to_disk_count: str
    extracted_to_disk_size: str
    single_shard_stats: DetailedStats | None = None


class MetaSorting(PhaseInfo):
    """Phase 2: the records' metadata sorted across the cluster.

    Example:
        >>> MetaSorting.model_fields["sent_stats"].default is None
        True
    """

    sent_stats: TimeStats | None = None
    recv_stats: TimeStats | None = None


class ShardCreation(PhaseInfo):
    """Phase 3: output shards created.

    Example:
        >>> "created_count" in ShardCreation.model_fields
        True
    """

    to_create: str
    created_count: str
    moved_shard_count: str
    req_stats: TimeStats | None = None
    resp_stats: TimeStats | None = None
    local_send_stats: DetailedStats | None = None
    local_recv_stats: DetailedStats | None = None
    single_shard_stats: DetailedStats | None = None


class DsortMetrics(BaseModel):
    """All phases of a dSort job on one target, and its outcome.

    Example:
        >>> DsortMetrics.model_fields["aborted"].default is None
        True
    """

    local_extraction: LocalExtraction
    meta_sorting: MetaSorting
    shard_creation: ShardCreation
    aborted: bool | None = None
    archived: bool | None = None
    description: str | None = None
    warnings: list[str] | None = None
    errors: list[str] | None = None
    extended: bool | None = None


class JobInfo(BaseModel):
    """A dSort job on one target: buckets, times, counts and metrics (AIS field names as
    aliases).

    Example:
        >>> JobInfo.model_fields["src_bck"].alias
        'src-bck'
    """

    model_config = ConfigDict(populate_by_name=True)

    id: str
    src_bck: BucketModel = Field(alias="src-bck")
    dst_bck: BucketModel = Field(alias="dst-bck")
    started_time: str | None = None
    finish_time: str | None = None
    extracted_duration: int | None = Field(alias="started_meta_sorting", default=None)
    sorting_duration: int | None = Field(alias="started_shard_creation", default=None)
    creation_duration: int | None = Field(alias="finished_shard_creation", default=None)
    objects: str = Field(alias="loc-objs")
    bytes: str = Field(alias="loc-bytes")
    metrics: DsortMetrics = Field(alias="Metrics")
    aborted: bool
    archived: bool
