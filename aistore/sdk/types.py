"""Wire types: JSON documents as pydantic models, list-object pages as msgspec Structs.

Field names are those of the AIS wire format and of the official SDK; they must not change.

Example:
    >>> from aistore.sdk.types import ActionMsg
    >>> ActionMsg(action="list").model_dump()
    {'action': 'list', 'name': '', 'value': None}
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import msgspec
from pydantic import BaseModel, Field, RootModel, field_validator
from requests.structures import CaseInsensitiveDict

from aistore._internal.hrw import xoshiro256_hash, xxh64
from aistore.sdk.const import (
    AIS_ACCESS_TIME,
    AIS_CHECKSUM_VALUE,
    AIS_LOCATION,
    AIS_MIRROR_COPIES,
    AIS_OBJ_NAME,
    AIS_VERSION,
    CHANNEL_COUNT_MASK,
    CHANNEL_COUNT_SHIFT,
    GO_ZERO_TIME,
    HEADER_CONTENT_LENGTH,
    JOGGER_COUNT_MASK,
    WORKER_COUNT_MASK,
    WORKER_COUNT_SHIFT,
    XX_HASH_SEED,
)
from aistore.sdk.errors import NoTargetError
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object_props import ObjectProps
from aistore.sdk.utils import get_digest as get_digest

__all__ = [
    "ETLDetails",
    "ETLInfo",
    "ETLInitMsg",
    "ETLNodeLogs",
    "ETLObjError",
    "ETLRuntimeSpec",
    "ETLSpecMsg",
    "EnvVar",
    "InitETLArgs",
    "ArchiveMultiObj",
    "BlobMsg",
    "BsummCtrlMsg",
    "CopyBckMsg",
    "CreateNBIMsg",
    "NBIInfo",
    "ActionMsg",
    "AggregatedJobSnap",
    "PrefetchMsg",
    "PromoteAPIArgs",
    "TCBckMsg",
    "TCMultiObj",
    "TransformBckMsg",
    "BucketEntry",
    "BucketList",
    "BucketModel",
    "JobArgs",
    "JobQuery",
    "JobSnap",
    "JobStats",
    "JobStatus",
    "ListObjectsMsg",
    "MptCompletedPart",
    "Namespace",
    "NetInfo",
    "Smap",
    "Snode",
]

# Snode flags: a node in maintenance or being decommissioned owns no objects.
_SNODE_MAINT_OR_DECOMM = (1 << 2) | (1 << 3)
# BucketEntry flags: bits 0-4 are the placement status (0 = OK); bit 6 = in the cluster.
_ENTRY_STATUS_MASK = (1 << 5) - 1
_ENTRY_IS_CACHED = 1 << 6


class ActionMsg(BaseModel):
    """The JSON body of most control requests: `{"action", "name", "value"}`.

    Example:
        >>> ActionMsg(action="create-bck").model_dump()["value"] is None
        True
    """

    action: str
    name: str = ""
    value: Any = None


class NetInfo(BaseModel):
    """One network of a node; `direct_url` is how clients reach it.

    Example:
        >>> NetInfo(direct_url="http://10.0.0.1:8081").direct_url
        'http://10.0.0.1:8081'
    """

    node_hostname: str = ""
    daemon_port: str = ""
    direct_url: str = ""


class Snode(BaseModel):
    """A node (proxy or target) of the cluster map.

    Example:
        >>> Snode(daemon_id="t1", daemon_type="target").in_maint_or_decomm()
        False
    """

    daemon_id: str
    daemon_type: str
    public_net: NetInfo | None = None
    intra_control_net: NetInfo | None = None
    intra_data_net: NetInfo | None = None
    flags: int = 0
    id_digest: int = 0

    def in_maint_or_decomm(self) -> bool:
        """Whether the node is in maintenance or being decommissioned."""
        return (self.flags & _SNODE_MAINT_OR_DECOMM) != 0


class Smap(BaseModel):
    """The cluster map: targets, proxies and the primary proxy.

    Example:
        >>> smap = Smap(tmap={}, pmap={}, proxy_si=Snode(daemon_id="p1", daemon_type="proxy"))
        >>> smap.version
        0
    """

    tmap: Mapping[str, Snode]
    pmap: Mapping[str, Snode]
    proxy_si: Snode
    version: int = 0
    uuid: str = ""
    creation_time: str = ""

    def get_target_for_object(self, uname: str) -> Snode:
        """The target that owns the object named `uname` (highest random weight wins).

        Raises:
            NoTargetError: no target is available.
        """
        digest = xxh64(uname.encode("utf-8"), XX_HASH_SEED)
        best: Snode | None = None
        best_weight = -1
        for node in self.tmap.values():
            if node.in_maint_or_decomm():
                continue
            weight = xoshiro256_hash(node.id_digest ^ digest)
            if weight > best_weight:
                best, best_weight = node, weight
        if best is None:
            raise NoTargetError(len(self.tmap))
        return best


class BucketEntry(msgspec.Struct):
    """One object of a list-objects page (Go `cmn/objlist.go` `LsoEnt`).

    Unknown msgpack keys (e.g. custom metadata `m`) are ignored. For entries returned by
    `Bucket.list_objects`, `object` is the matching `Object`, built on first access: a listing
    of millions of names would otherwise spend most of its time constructing Objects.

    Example:
        >>> BucketEntry(n="a.txt", s=3, f=64).is_cached()
        True
    """

    n: str
    cs: str = ""
    a: str = ""
    v: str = ""
    t: str = ""
    s: int = 0
    c: int = 0
    f: int = 0
    # `object` is a property over these two: the Object once built, or the (client, bucket)
    # to build it from. Never on the wire.
    object_: Any = None
    maker_: Any = None

    @property
    def object(self) -> Any:
        """The entry's `Object` (None for an entry not from `Bucket.list_objects`)."""
        if self.object_ is None and self.maker_ is not None:
            self.object_ = self.maker_(self.n)
            self.maker_ = None
        return self.object_

    @object.setter
    def object(self, value: Any) -> None:
        self.object_ = value
        self.maker_ = None

    def __repr__(self) -> str:
        fields = ("n", "cs", "a", "v", "t", "s", "c", "f")
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in fields)
        return f"BucketEntry({shown})"

    @property
    def name(self) -> str:
        """Object name."""
        return self.n

    @property
    def checksum(self) -> str:
        """Checksum value (the type is the bucket's)."""
        return self.cs

    @property
    def atime(self) -> str:
        """Access time as formatted by the server."""
        return self.a

    @property
    def version(self) -> str:
        """Object version."""
        return self.v

    @property
    def location(self) -> str:
        """Target and mountpath holding the object."""
        return self.t

    @property
    def size(self) -> int:
        """Size in bytes."""
        return self.s

    @property
    def copies(self) -> int:
        """Number of copies."""
        return self.c

    @property
    def flags(self) -> int:
        """Entry flags (status bits and `EntryIs*` bits)."""
        return self.f

    def is_cached(self) -> bool:
        """Whether the object is present in the cluster."""
        return (self.f & _ENTRY_IS_CACHED) != 0

    def is_ok(self) -> bool:
        """Whether the object is properly placed."""
        return (self.f & _ENTRY_STATUS_MASK) == 0

    def generate_object_props(self) -> ObjectProps:
        """The entry's fields as `ObjectProps` (a subset of what HEAD returns)."""
        headers: CaseInsensitiveDict[Any] = CaseInsensitiveDict(
            {
                AIS_OBJ_NAME: self.n,
                AIS_CHECKSUM_VALUE: self.cs,
                AIS_ACCESS_TIME: self.a,
                AIS_VERSION: self.v,
                AIS_LOCATION: self.t,
                HEADER_CONTENT_LENGTH: self.s,
                AIS_MIRROR_COPIES: self.c,
            }
        )
        return ObjectProps(headers)


class BucketList(msgspec.Struct):
    """One page of a listing: entries plus what is needed to ask for the next page.

    Example:
        >>> page = BucketList(UUID="u", ContinuationToken="", Flags=0)
        >>> page.entries
        []
    """

    UUID: str
    ContinuationToken: str
    Flags: int
    Entries: list[BucketEntry] | None = None

    @property
    def uuid(self) -> str:
        """Listing session id; pass it back with the continuation token."""
        return self.UUID

    @property
    def continuation_token(self) -> str:
        """Where the next page starts; empty on the last page."""
        return self.ContinuationToken

    @property
    def flags(self) -> int:
        """Page flags."""
        return self.Flags

    @property
    def entries(self) -> list[BucketEntry]:
        """The page's entries (never None)."""
        if self.Entries is None:
            self.Entries = []
        return self.Entries


class BucketModel(BaseModel):
    """A bucket's identity as the API exchanges it.

    Example:
        >>> BucketModel(name="b", provider="ais").get_path()
        'ais/@#/b/'
    """

    name: str
    provider: str
    namespace: Namespace | None = None

    def as_dict(self) -> dict[str, Any]:
        """The model without unset (None) fields."""
        return self.model_dump(exclude_none=True)

    def get_path(self) -> str:
        """`<provider>/<namespace>/<name>/`, the bucket part of an object uname."""
        namespace = self.namespace.get_path() if self.namespace else "@#"
        return f"{self.provider}/{namespace}/{self.name}/"


class ListObjectsMsg(BaseModel):
    """The `value` of a list-objects request (Go `apc.LsoMsg`).

    Example:
        >>> msg = ListObjectsMsg(prefix="", page_size=0, uuid="", props="", continuation_token="",
        ...                      flags=[ListObjectFlag.CACHED], target="")
        >>> msg.as_dict()["flags"]
        '1'
    """

    prefix: str
    page_size: int
    uuid: str
    props: str
    continuation_token: str
    flags: list[ListObjectFlag]
    target: str
    start_after: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Wire form; `flags` travels as a decimal string, `start_after` only when set."""
        body: dict[str, Any] = {
            "prefix": self.prefix,
            "pagesize": self.page_size,
            "uuid": self.uuid,
            "props": self.props,
            "continuation_token": self.continuation_token,
            "flags": str(ListObjectFlag.join_flags(self.flags)),
            "target": self.target,
        }
        if self.start_after:
            body["start_after"] = self.start_after
        return body


class CreateNBIMsg(BaseModel):
    """The `create-inventory` action value (AIS `apc.CreateNBIMsg`).

    Example:
        >>> CreateNBIMsg(name="nightly", prefix="train/").as_dict()
        {'name': 'nightly', 'prefix': 'train/'}
    """

    name: str = ""
    names_per_chunk: int = 0
    force: bool = False
    prefix: str = ""
    props: str = ""
    flags: str = "0"

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_defaults=True)


class NBIInfo(BaseModel):
    """One bucket inventory as `Bucket.show_inventory()` reports it (AIS `apc.NBIInfo`).

    Example:
        >>> info = NBIInfo(name="nightly", ntotal=1000)
        >>> info.ntotal
        1000
    """

    bucket: str = ""
    name: str = ""
    obj_name: str = ""
    size: int = 0
    prefix: str = ""
    started: int = 0
    finished: int = 0
    ntotal: int = 0
    smap_ver: int = 0
    chunks: int = 0
    nat: int = 0


class MptCompletedPart(BaseModel):
    """One entry of a multipart-upload completion list.

    Example:
        >>> MptCompletedPart(part_number=2).as_dict()
        {'part-number': 2, 'etag': ''}
    """

    part_number: int
    etag: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {"part-number": self.part_number, "etag": self.etag}


class JobArgs(BaseModel):
    """Selects jobs in `/v1/cluster` queries.

    Example:
        >>> JobArgs(id="j1").as_dict()["ID"]
        'j1'
    """

    id: str = ""
    kind: str = ""
    daemon_id: str = ""
    bucket: BucketModel | None = None
    buckets: list[BucketModel] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Wire form (Go field names)."""
        return {
            "ID": self.id,
            "Kind": self.kind,
            "DaemonID": self.daemon_id,
            "Bck": self.bucket.model_dump() if self.bucket else None,
            "Buckets": [b.model_dump() for b in self.buckets] if self.buckets else None,
        }


class JobQuery(BaseModel):
    """Filters for listing jobs.

    Example:
        >>> JobQuery(kind="rechunk", active=True).as_dict()["show_active"]
        True
    """

    active: bool = False
    kind: str = ""
    target: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {"kind": self.kind, "node": self.target, "show_active": self.active}


class JobStatus(BaseModel):
    """Status of one job; `end_time` is Unix nanoseconds, 0 while running.

    Example:
        >>> JobStatus(uuid="j1").end_time
        0
    """

    uuid: str = ""
    err: str = ""
    end_time: int = 0
    aborted: bool = False


class JobStats(BaseModel):
    """Counters of a job on one target.

    Example:
        >>> JobStats.model_validate({"loc-objs": "3"}).objects
        3
    """

    model_config = {"populate_by_name": True}

    objects: int = Field(default=0, alias="loc-objs")
    bytes: int = Field(default=0, alias="loc-bytes")
    out_objects: int = Field(default=0, alias="out-objs")
    out_bytes: int = Field(default=0, alias="out-bytes")
    in_objects: int = Field(default=0, alias="in-objs")
    in_bytes: int = Field(default=0, alias="in-bytes")


class JobSnap(BaseModel):
    """A job as one target sees it.

    Example:
        >>> JobSnap.model_validate({"kind": "list", "end-time": GO_ZERO_TIME}).has_ended()
        False
    """

    model_config = {"populate_by_name": True}

    id: str = ""
    kind: str = ""
    start_time: str = Field(default="", alias="start-time")
    end_time: str = Field(default="", alias="end-time")
    bucket: BucketModel | None = Field(default=None, alias="bck")
    source_bck: BucketModel | None = Field(default=None, alias="src-bck")
    destination_bck: BucketModel | None = Field(default=None, alias="dst-bck")
    stats: JobStats | None = None
    aborted: bool = False
    is_idle: bool = False
    abort_err: str = Field(default="", alias="abort-err")
    packed: int = Field(default=0, alias="glob.id")

    def has_ended(self) -> bool:
        """Whether the snapshot carries a real end time."""
        return bool(self.end_time) and self.end_time != GO_ZERO_TIME

    def unpack_glob_id(self) -> tuple[int, int, int]:
        """`glob.id` unpacked: (joggers, workers, times the work channel was full)."""
        joggers = self.packed & JOGGER_COUNT_MASK
        workers = (self.packed & WORKER_COUNT_MASK) >> WORKER_COUNT_SHIFT
        chan_full = (self.packed & CHANNEL_COUNT_MASK) >> CHANNEL_COUNT_SHIFT
        return joggers, workers, chan_full


class AggregatedJobSnap(RootModel[dict[str, list[JobSnap]]]):
    """Job snapshots keyed by target id (`what=qryxstats`).

    Example:
        >>> AggregatedJobSnap.model_validate({"t1": [{"is_idle": True}]}).all_idle()
        True
    """

    def list_snapshots(self) -> list[JobSnap]:
        """All snapshots of all targets."""
        return [snap for snaps in self.root.values() for snap in snaps]

    def get_num_workers(self) -> int:
        """Workers per target, from any snapshot (all targets run the same number)."""
        for snaps in self.root.values():
            if snaps:
                return snaps[0].unpack_glob_id()[1]
        return 0

    def all_idle(self) -> bool:
        """Every snapshot is idle, aborted or failed."""
        return all(s.is_idle or s.aborted or s.abort_err for s in self.list_snapshots())

    def any_aborted(self) -> bool:
        """Some snapshot is aborted or failed."""
        return any(s.aborted or s.abort_err for s in self.list_snapshots())

    def idle_or_aborted(self) -> bool:
        """Done condition of idle kinds."""
        return self.all_idle() or self.any_aborted()

    def any_finished(self) -> bool:
        """Some snapshot is aborted, failed or has ended."""
        return any(s.aborted or s.abort_err or s.has_ended() for s in self.list_snapshots())


class BsummCtrlMsg(BaseModel):
    """Asks for a bucket summary (`summary-bck`); `uuid` is "" to start one, then its job id.

    Example:
        >>> BsummCtrlMsg(uuid="", prefix="a/", cached=True, present=True).model_dump()["prefix"]
        'a/'
    """

    uuid: str
    prefix: str
    cached: bool
    present: bool


class CopyBckMsg(BaseModel):
    """What and how to copy between buckets (the copy part of AIS `TCBMsg`).

    Example:
        >>> msg = CopyBckMsg(prepend="x/", dry_run=False, force=False, latest=False, sync=False)
        >>> msg.as_dict()["latest-ver"]
        False
    """

    prefix: str = ""
    prepend: str
    dry_run: bool
    force: bool
    latest: bool
    sync: bool

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {
            "prefix": self.prefix,
            "prepend": self.prepend,
            "dry_run": self.dry_run,
            "force": self.force,
            "latest-ver": self.latest,
            "synchronize": self.sync,
        }


class TransformBckMsg(BaseModel):
    """The ETL part of AIS `TCBMsg`.

    Example:
        >>> TransformBckMsg(etl_name="md5", timeout="5m").as_dict()["id"]
        'md5'
    """

    etl_name: str
    etl_pipeline: list[str] | None = None
    timeout: str

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {"id": self.etl_name, "request_timeout": self.timeout, "pipeline": self.etl_pipeline}


class TCBckMsg(BaseModel):
    """Copy (or transform) between buckets: AIS `TCBMsg`; also the options of `TCMultiObj`.

    Example:
        >>> TCBckMsg(ext={"jpg": "png"}, num_workers=4).as_dict()
        {'ext': {'jpg': 'png'}, 'num-workers': 4}
    """

    ext: dict[str, str] | None = None
    copy_msg: CopyBckMsg | None = None
    transform_msg: TransformBckMsg | None = None
    num_workers: int | None = None
    cont_on_err: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Wire form: only what is set."""
        out: dict[str, Any] = {}
        if self.ext:
            out["ext"] = self.ext
        if self.num_workers:
            out["num-workers"] = self.num_workers
        if self.cont_on_err:
            out["coer"] = self.cont_on_err
        if self.copy_msg:
            out.update(self.copy_msg.as_dict())
        if self.transform_msg:
            out.update(self.transform_msg.as_dict())
        return out


class PrefetchMsg(BaseModel):
    """Prefetch of a list/range of objects (remote buckets).

    Example:
        >>> PrefetchMsg(object_selection={"template": "a{0..9}"}, continue_on_err=False,
        ...             latest=False).as_dict()["template"]
        'a{0..9}'
    """

    object_selection: dict[str, Any]
    continue_on_err: bool
    latest: bool
    blob_threshold: int | None = None
    num_workers: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Wire form: the selection plus the options."""
        out = dict(self.object_selection)
        out["coer"] = self.continue_on_err
        out["latest-ver"] = self.latest
        if self.blob_threshold:
            out["blob-threshold"] = self.blob_threshold
        if self.num_workers:
            out["num-workers"] = self.num_workers
        return out


class TCMultiObj(BaseModel):
    """Copy (or transform) a list/range of objects into `to_bck`: AIS `TCOMsg`.

    Example:
        >>> TCMultiObj(to_bck=BucketModel(name="d", provider="ais"), continue_on_err=False,
        ...            object_selection={"objnames": ["a"]}).as_dict()["tobck"]["name"]
        'd'
    """

    to_bck: BucketModel
    tc_msg: TCBckMsg | None = None
    continue_on_err: bool
    object_selection: dict[str, Any]
    num_workers: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Wire form: the selection, the copy options, the destination."""
        out = dict(self.object_selection)
        if self.tc_msg:
            out.update(self.tc_msg.as_dict())
        out["tobck"] = self.to_bck.model_dump()
        out["coer"] = self.continue_on_err
        if self.num_workers:
            out["num-workers"] = self.num_workers
        return out


class ArchiveMultiObj(BaseModel):
    """Archive a list/range of objects into one shard `archive_name` in `to_bck`.

    Example:
        >>> ArchiveMultiObj(archive_name="s.tar", to_bck=BucketModel(name="b", provider="ais"),
        ...                 object_selection={"template": "x-{0..9}"}).as_dict()["archname"]
        's.tar'
    """

    archive_name: str
    to_bck: BucketModel
    mime: str | None = None
    include_source_name: bool = False
    allow_append: bool = False
    continue_on_err: bool = False
    object_selection: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """Wire form (AIS `ArchiveBckMsg`)."""
        out = dict(self.object_selection)
        out["archname"] = self.archive_name
        out["isbn"] = self.include_source_name
        out["aate"] = self.allow_append
        out["coer"] = self.continue_on_err
        if self.mime:
            out["mime"] = self.mime
        if self.to_bck:
            out["tobck"] = self.to_bck.model_dump()
        return out


class PromoteAPIArgs(BaseModel):
    """Promote a local file or directory of the target into a bucket (AIS `PromoteArgs`).

    Example:
        >>> PromoteAPIArgs(source_path="/var/lib/ais/promote/d", recursive=True).as_dict()["rcr"]
        True
    """

    target_id: str = ""
    source_path: str = ""
    object_name: str = ""
    recursive: bool = False
    overwrite_dest: bool = False
    delete_source: bool = False
    src_not_file_share: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {
            "tid": self.target_id,
            "src": self.source_path,
            "obj": self.object_name,
            "rcr": self.recursive,
            "ovw": self.overwrite_dest,
            "dls": self.delete_source,
            "notshr": self.src_not_file_share,
        }


class BlobMsg(BaseModel):
    """Options of a blob download (remote buckets).

    Example:
        >>> BlobMsg(latest=True, num_workers=4).as_dict()
        {'latest-ver': True, 'num-workers': 4}
    """

    chunk_size: int | None = None
    num_workers: int | None = None
    latest: bool

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        out: dict[str, Any] = {"latest-ver": self.latest}
        if self.chunk_size:
            out["chunk-size"] = self.chunk_size
        if self.num_workers:
            out["num-workers"] = self.num_workers
        return out


# ETL (transformers: Kubernetes pods on a cluster, local processes on our server): the
# documents both send and accept.


class ETLInfo(BaseModel):
    """One ETL in a cluster's list of ETLs.

    Example:
        >>> ETLInfo(id="md5", stage="Running").stage
        'Running'
    """

    id: str = ""
    xaction_id: str = ""
    stage: str = ""
    obj_count: int = 0
    in_bytes: int = 0
    out_bytes: int = 0


class InitETLArgs(BaseModel):
    """What every ETL initialization names: the ETL, how targets talk to it, its timeouts.

    Example:
        >>> InitETLArgs(name="md5", comm_type="hpush", init_timeout="5m", obj_timeout="45s").name
        'md5'
    """

    name: str
    comm_type: str
    init_timeout: str | None
    obj_timeout: str | None
    direct_put: bool = False


class EnvVar(BaseModel):
    """An environment variable of an ETL container (values are sent as strings).

    Example:
        >>> EnvVar(name="WORKERS", value=4).as_dict()
        {'name': 'WORKERS', 'value': '4'}
    """

    name: str
    value: str

    @field_validator("value", mode="before")
    @classmethod
    def convert_to_str(cls, v: Any) -> str:
        """Any value, as its string."""
        return str(v)

    def as_dict(self) -> dict[str, str]:
        """Wire form."""
        return {"name": self.name, "value": self.value}


class ETLRuntimeSpec(BaseModel):
    """The container an ETL runs in: image, optional command and environment.

    Example:
        >>> ETLRuntimeSpec(image="aistorage/transformer_md5:latest").as_dict()
        {'image': 'aistorage/transformer_md5:latest'}
    """

    image: str
    command: list[str] | None = None
    env: list[EnvVar] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Wire form; `command` and `env` only when given."""
        out: dict[str, Any] = {"image": self.image}
        if self.command is not None:
            out["command"] = self.command
        if self.env is not None:
            out["env"] = [e.as_dict() for e in self.env]
        return out


class ETLSpecMsg(InitETLArgs):
    """The body of an ETL initialization from a container image.

    Example:
        >>> msg = ETLSpecMsg(name="md5", comm_type="hpush", init_timeout="5m",
        ...                  obj_timeout="45s", runtime=ETLRuntimeSpec(image="img"))
        >>> msg.as_dict()["communication"]
        'hpush://'
    """

    runtime: ETLRuntimeSpec

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        return {
            "name": self.name,
            "communication": f"{self.comm_type}://",
            "init_timeout": self.init_timeout,
            "obj_timeout": self.obj_timeout,
            "support_direct_put": self.direct_put,
            "runtime": self.runtime.as_dict(),
        }


class ETLInitMsg(BaseModel):
    """An ETL's initialization as the cluster reports it (`code` arrives base64-encoded).

    Example:
        >>> ETLInitMsg(name="md5", communication="hpush://", code="cHJpbnQ=").code
        b'print'
    """

    name: str
    communication: str
    init_timeout: str | None = None
    obj_timeout: str | None = None
    code: bytes | None = None
    dependencies: bytes | None = None
    chunk_size: int = 0
    runtime: str | ETLRuntimeSpec | None = None

    @field_validator("code")
    @classmethod
    def set_code(cls, code: bytes | None) -> bytes | None:
        """The decoded code."""
        return base64.b64decode(code) if code is not None else None


class ETLObjError(BaseModel):
    """One object an ETL failed to transform.

    Example:
        >>> ETLObjError(obj_name="a.jpg", msg="bad header", ecode=500).ecode
        500
    """

    obj_name: str
    msg: str
    ecode: int


class ETLDetails(BaseModel):
    """One ETL in detail: its initialization and the objects it failed on.

    Example:
        >>> ETLDetails(init_msg=ETLInitMsg(name="md5", communication="hpush://")).obj_errors is None
        True
    """

    init_msg: ETLInitMsg
    obj_errors: list[ETLObjError] | None = None


class ETLNodeLogs(BaseModel):
    """The logs of an ETL's container on one target.

    Example:
        >>> ETLNodeLogs(target_id="t1", logs="ready").logs
        'ready'
    """

    target_id: str = ""
    logs: str = ""
