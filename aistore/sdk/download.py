"""Download jobs: the cluster fetches files from HTTP(S) links, or a remote bucket's objects
from its backend, into a bucket (AIS `/v1/download`, the CLI's `ais download`).

Not part of the official SDK 2.0.0, which has no download API: this is ours, over the same
REST calls a real AIStore cluster serves, so it works against one as well. Each file lands
whole or not at all; a failed file is reported in the job's status and the rest go on.

Example:
    >>> dl = client.download()  # doctest: +SKIP
    >>> shards = "https://host/shard-{0000..0099}.tar"
    >>> dl.start_range(client.bucket("data"), shards)  # doctest: +SKIP
    >>> dl.wait(timeout=600).finished_cnt  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aistore._internal.extras import require_extra
from aistore._internal.progress import ProgressBar
from aistore.sdk.bucket import Bucket
from aistore.sdk.errors import DownloadError, Timeout
from aistore.sdk.request_client import RequestClient

__all__ = ["Download", "DownloadError", "DownloadFileError", "DownloadStatus", "DownloadTask"]

_PATH = "download"
_ZERO_TIME = "0001-01-01T00:00:00Z"
_DEFAULT_WAIT_TIMEOUT = 3600.0


@dataclass(frozen=True)
class DownloadTask:
    """One file of a job: in progress (`end_time` zero) or finished (AIS `dload.TaskDlInfo`)."""

    name: str
    downloaded: int
    total: int  # 0: not known (yet)
    start_time: str
    end_time: str


@dataclass(frozen=True)
class DownloadFileError:
    """A file that failed, and why (AIS `dload.TaskErrInfo`)."""

    name: str
    error: str


@dataclass(frozen=True)
class DownloadStatus:
    """A job as `GET /v1/download` reports it (AIS `dload.StatusResp`; a listing gives the
    counters only). `total` is -1 when unknown before listing (a backend job)."""

    id: str
    xaction_id: str
    description: str
    started_time: str
    finished_time: str
    finished_cnt: int
    scheduled_cnt: int
    skipped_cnt: int
    error_cnt: int
    total: int
    all_dispatched: bool
    aborted: bool
    current_tasks: list[DownloadTask] = field(default_factory=list)
    finished_tasks: list[DownloadTask] = field(default_factory=list)
    errors: list[DownloadFileError] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        """Whether the job ended (all its files done, or aborted)."""
        return self.finished_time not in ("", _ZERO_TIME)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> DownloadStatus:
        def task(t: Mapping[str, Any]) -> DownloadTask:
            return DownloadTask(
                name=str(t["name"]),
                downloaded=int(t.get("downloaded", 0)),
                total=int(t.get("total", 0)),
                start_time=str(t.get("start_time", _ZERO_TIME)),
                end_time=str(t.get("end_time", _ZERO_TIME)),
            )

        return cls(
            id=str(doc["id"]),
            xaction_id=str(doc.get("xaction_id", "")),
            description=str(doc.get("description", "")),
            started_time=str(doc.get("started_time", _ZERO_TIME)),
            finished_time=str(doc.get("finished_time", _ZERO_TIME)),
            finished_cnt=int(doc.get("finished_cnt", 0)),
            scheduled_cnt=int(doc.get("scheduled_cnt", 0)),
            skipped_cnt=int(doc.get("skipped_cnt", 0)),
            error_cnt=int(doc.get("error_cnt", 0)),
            total=int(doc.get("total", 0)),
            all_dispatched=bool(doc.get("all_dispatched", False)),
            aborted=bool(doc.get("aborted", False)),
            current_tasks=[task(t) for t in doc.get("current_tasks") or []],
            finished_tasks=[task(t) for t in doc.get("finished_tasks") or []],
            errors=[
                DownloadFileError(str(e["name"]), str(e["error"]))
                for e in doc.get("download_errors") or []
            ],
        )


def _duration(seconds: float | str | None) -> str:
    """A Go duration string ("90s", "1500ms") from seconds, or as given."""
    if seconds is None:
        return ""
    if isinstance(seconds, str):
        return seconds
    if seconds <= 0:
        raise ValueError(f"timeout must be positive, got {seconds}")
    return f"{round(seconds * 1000)}ms"


class Download:
    """Download jobs of the cluster: start one (each `start_*` sets `job_id`), then watch,
    wait for, abort or remove it; or list them all.

    Every `start_*` takes the options AIS's downloader has: `description`; `timeout` per file
    (seconds, or a Go duration such as "5m"; the cluster's default is an hour); `connections`,
    files fetched at once (0: the cluster's default); `bytes_per_hour` (0: no limit); and
    `headers` sent with every GET (e.g. ``{"Authorization": "Bearer ..."}``); `etl_name` (and
    `etl_args`): each file goes through that running ETL (hpush or ws) and the object is its
    output.

    Example:
        >>> dl = client.download()  # doctest: +SKIP
        >>> links = {"a.bin": "https://host/a", "b.bin": "https://host/b"}
        >>> dl.start_multi(bucket, links)  # doctest: +SKIP
        >>> status = dl.wait(timeout=60)  # doctest: +SKIP
    """

    def __init__(self, client: RequestClient, job_id: str = "") -> None:
        self._client = client
        self.job_id = job_id

    # -- starting ---------------------------------------------------------------------------

    def start_single(self, bucket: Bucket, link: str, object_name: str = "", **options: Any) -> str:
        """Download one file; `object_name` defaults to the link's last path element."""
        return self._start(bucket, "single", {"link": link, "object_name": object_name}, options)

    def start_range(self, bucket: Bucket, template: str, subdir: str = "", **options: Any) -> str:
        """Download every link a brace template names (``https://h/shard-{0000..0999}.tar``),
        each as `subdir/<last path element>`."""
        return self._start(bucket, "range", {"template": template, "subdir": subdir}, options)

    def start_multi(
        self, bucket: Bucket, objects: Mapping[str, str] | Sequence[str], **options: Any
    ) -> str:
        """Download a list of links (named by their last path element) or a mapping of
        object name -> link."""
        payload: dict[str, str] | list[str] = (
            dict(objects) if isinstance(objects, Mapping) else list(objects)
        )
        return self._start(bucket, "multi", {"objects": payload}, options)

    def start_backend(
        self, bucket: Bucket, prefix: str = "", suffix: str = "", sync: bool = False, **options: Any
    ) -> str:
        """Fetch the objects of a remote bucket (`bucket`, e.g. ``s3://b``) under `prefix`
        ending in `suffix` into the cluster; `sync` also drops cached objects the backend no
        longer has. Objects already cached and unchanged are skipped."""
        fields = {"prefix": prefix, "suffix": suffix, "synchronize": sync}
        return self._start(bucket, "backend", fields, options)

    def start_hf(
        self,
        bucket: Bucket,
        repo_id: str,
        *,
        repo_type: str = "model",
        filename: str | None = None,
        revision: str = "main",
        prefix: str = "",
        parquet: bool = True,
        token: str | bool | None = None,
        endpoint: str | None = None,
        **options: Any,
    ) -> str:
        """Download a HuggingFace repository, or one file of it, into `bucket`: one job, whose
        files the cluster fetches (the Hub's listing is read here, with ``huggingface_hub``).

        Beyond the official SDK, which has no download API; the CLI's
        ``ais download --hf-model/--hf-dataset`` sends the same jobs, but only ever to
        ``https://huggingface.co``. This call honours ``HF_ENDPOINT`` and ``HF_TOKEN`` (and a
        token saved by ``hf auth login``) as ``huggingface_hub`` does, so it works against any
        Hub-compatible endpoint.

        Args:
            bucket: where the files land (created by the job if missing).
            repo_id: the repository, e.g. ``"org/name"``.
            repo_type: ``"model"`` or ``"dataset"``.
            filename: one file of the repository (a ``single`` job), else every file.
            revision: a branch, tag or commit. A whole repository is fetched at the commit the
                revision points to when the listing is read, so the files are one snapshot.
            prefix: put before every object name (e.g. ``"squad/"``).
            parquet: for a whole dataset: its Parquet conversion (``<split>/<i>.parquet`` or
                ``<config>/<split>/<i>.parquet``, as the CLI names them), or with False its
                repository's own files.
            token: a token for gated or private repositories; None: ``huggingface_hub``'s
                (``HF_TOKEN``, else a saved login); False: none. Sent to the cluster as the
                job's ``Authorization`` header, kept in memory with the job.
            endpoint: the Hub; None: ``HF_ENDPOINT``, else ``https://huggingface.co``.
            options: as for the other `start_*` calls (``description``, ``timeout``,
                ``connections``, ``bytes_per_hour``; ``headers`` are added to the token's).

        Returns:
            The job's id (also in `job_id`).

        Raises:
            ImportError: ``huggingface_hub`` is not installed (the ``hf`` extra).
            huggingface_hub.errors.HfHubHTTPError: the Hub refused the listing (e.g.
                ``GatedRepoError`` without a token, ``RepositoryNotFoundError``).
            ValueError: a bad `repo_type`, or a dataset with no Parquet conversion.
        """
        require_extra("hf", "huggingface_hub", what="Download.start_hf")
        from aistore.sdk.hf_listing import hf_job  # noqa: PLC0415 (the extra's import, on use)

        kind, fields, headers = hf_job(
            repo_id,
            repo_type=repo_type,
            filename=filename,
            revision=revision,
            prefix=prefix,
            parquet=parquet,
            token=token,
            endpoint=endpoint,
        )
        if options.get("headers"):
            headers = {**headers, **options["headers"]}
        if headers:
            options = {**options, "headers": headers}
        if "description" not in options:
            options = {**options, "description": f"huggingface {repo_type} {repo_id}"}
        return self._start(bucket, kind, fields, options)

    def _start(
        self, bucket: Bucket, kind: str, fields: Mapping[str, Any], options: Mapping[str, Any]
    ) -> str:
        unknown = set(options) - {
            "description",
            "timeout",
            "connections",
            "bytes_per_hour",
            "headers",
            "etl_name",
            "etl_args",
        }
        if unknown:
            raise TypeError(f"unknown download option(s): {', '.join(sorted(unknown))}")
        body: dict[str, Any] = {
            "type": kind,
            "bucket": {"name": bucket.name, "provider": bucket.provider.value},
            "description": options.get("description", ""),
            "timeout": _duration(options.get("timeout")),
            "limits": {
                "connections": int(options.get("connections", 0)),
                "bytes_per_hour": int(options.get("bytes_per_hour", 0)),
            },
            **fields,
        }
        for key in ("etl_name", "etl_args"):
            if options.get(key):
                body[key] = str(options[key])
        headers = options.get("headers")
        if headers:
            body["headers"] = {
                k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in headers.items()
            }
        resp = self._client.request("post", _PATH, json=body)
        self.job_id = str(resp.json()["id"])
        return self.job_id

    # -- watching ---------------------------------------------------------------------------

    def status(self, only_active: bool = False) -> DownloadStatus:
        """The job's status with its files (`only_active`: the files in progress only)."""
        job_id = self._require_id()
        resp = self._client.request(
            "get", _PATH, json={"id": job_id, "only_active_tasks": only_active}
        )
        return DownloadStatus.from_json(resp.json())

    def list_jobs(self, regex: str = "", only_active: bool = False) -> list[DownloadStatus]:
        """Every job whose description matches `regex` (POSIX), running ones first."""
        resp = self._client.request(
            "get", _PATH, json={"regex": regex, "only_active_tasks": only_active}
        )
        return [DownloadStatus.from_json(j) for j in resp.json() or []]

    def wait(
        self,
        timeout: float = _DEFAULT_WAIT_TIMEOUT,
        *,
        raise_on_error: bool = True,
        progress: bool | None = None,
    ) -> DownloadStatus:
        """Wait for the job to end and return its status. `progress`: tqdm bars of files and
        bytes (None: only on a terminal).

        Raises:
            DownloadError: the job ended with failed files (unless not `raise_on_error`) or
                was aborted.
            Timeout: it is still running after `timeout` seconds.
        """
        job_id = self._require_id()
        deadline = time.monotonic() + timeout
        interval = 0.05
        with (
            ProgressBar(progress, desc=f"download[{job_id}]", unit="file") as files,
            ProgressBar(progress, desc="bytes", unit="B", unit_scale=True) as nbytes,
        ):
            shown_files = shown_bytes = 0
            while True:
                st = self.status()
                if files.active:
                    if st.total > 0:
                        files.set_total(st.total)
                    done = st.finished_cnt + st.error_cnt
                    files.update(done - shown_files)
                    shown_files = done
                    got = sum(t.downloaded for t in st.finished_tasks + st.current_tasks)
                    nbytes.update(got - shown_bytes)
                    shown_bytes = got
                if st.finished:
                    break
                if time.monotonic() > deadline:
                    raise Timeout(f"download job {job_id!r}", f"after {timeout}s")
                time.sleep(interval)
                interval = min(interval * 2, 1.0)
        if st.aborted or (raise_on_error and st.errors):
            raise DownloadError(job_id, [(e.name, e.error) for e in st.errors], st.aborted)
        return st

    # -- ending -----------------------------------------------------------------------------

    def abort(self) -> None:
        """Stop the job: files in progress are dropped (nothing partial is kept)."""
        self._client.request("delete", f"{_PATH}/abort", json={"id": self._require_id()})

    def remove(self) -> None:
        """Forget a finished job (a running one: the cluster refuses)."""
        self._client.request("delete", f"{_PATH}/remove", json={"id": self._require_id()})

    def _require_id(self) -> str:
        if not self.job_id:
            raise ValueError("no download job: start one, or give its id to client.download()")
        return self.job_id
