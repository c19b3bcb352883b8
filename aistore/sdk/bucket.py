"""A bucket: create, destroy, inspect and list it; address its objects.

Example:
    >>> bucket = client.bucket("data").create(exist_ok=True)  # doctest: +SKIP
    >>> names = [e.name for e in bucket.list_all_objects(prefix="train/")]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import requests
from requests.structures import CaseInsensitiveDict

from aistore._internal.progress import ProgressBar
from aistore.sdk.ais_source import AISSource
from aistore.sdk.const import (
    ACT_COPY_BCK,
    ACT_CREATE_BCK,
    ACT_CREATE_NBI,
    ACT_DESTROY_BCK,
    ACT_DESTROY_NBI,
    ACT_ETL_BCK,
    ACT_EVICT_REMOTE_BCK,
    ACT_LIST,
    ACT_MOVE_BCK,
    ACT_SHOW_NBI,
    ACT_SUMMARY_BCK,
    DEFAULT_JOB_POLL_TIME,
    HEADER_ACCEPT,
    HEADER_BUCKET_PROPS,
    HEADER_BUCKET_SUMM,
    HEADER_INV_NAME,
    HEADER_XACTION_ID,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_POST,
    MSGPACK_CONTENT_TYPE,
    QPARAM_BCK_TO,
    QPARAM_BSUMM_REMOTE,
    QPARAM_FLT_PRESENCE,
    QPARAM_KEEP_REMOTE,
    QPARAM_NAMESPACE,
    QPARAM_PROVIDER,
    QPARAM_UUID,
    STATUS_ACCEPTED,
    STATUS_OK,
    STATUS_PARTIAL_CONTENT,
    URL_PATH_BUCKETS,
)
from aistore.sdk.dataset.dataset_config import DatasetConfig as DatasetConfig
from aistore.sdk.enums import FLTPresence
from aistore.sdk.errors import (
    ErrBckAlreadyExists,
    ErrBckNotFound,
    InvalidBckProvider,
    UnexpectedHTTPStatusCode,
)
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.etl.etl_const import DEFAULT_ETL_TIMEOUT
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.multiobj import ObjectGroup, ObjectRange
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object import BucketDetails, Object
from aistore.sdk.obj.object_iterator import ObjectIterator
from aistore.sdk.obj.object_props import ObjectProps
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import (
    ActionMsg,
    BsummCtrlMsg,
    BucketEntry,
    BucketList,
    BucketModel,
    CopyBckMsg,
    CreateNBIMsg,
    ListObjectsMsg,
    NBIInfo,
    TCBckMsg,
    TransformBckMsg,
)
from aistore.sdk.utils import get_file_size, validate_directory

__all__ = ["Bucket"]

logger = logging.getLogger(__name__)

# Summary polling: from the official first interval, growing by half up to this.
_SUMMARY_MAX_POLL = 10.0
# put_files: files put at once by default (each PUT waits on the server and the network).
_PUT_FILES_WORKERS = 8
# `info()` polling: the official SDK first sleeps 2 s; a summary of a small bucket is ready far
# sooner, so polling starts at 50 ms and backs off to that interval.
_INFO_FIRST_POLL = 0.05
_INFO_MAX_POLL = 2.0


class Bucket(AISSource):
    """A bucket of the cluster; making one sends no request (see `Client.bucket`).

    Example:
        >>> bucket = client.bucket("data")  # doctest: +SKIP
        >>> bucket.object("a.txt").get_writer().put_content(b"hi")  # doctest: +SKIP

    Args:
        name: bucket name.
        client: sends the requests.
        provider: `ais` (default) or a remote provider (`aws`, `gcp`, ... or aliases).
        namespace: namespace; None is the global one.
    """

    def __init__(
        self,
        name: str,
        client: RequestClient | None = None,
        provider: Provider | str = Provider.AIS,
        namespace: Namespace | None = None,
    ) -> None:
        self._client = client
        self._name = name
        self._provider = Provider.parse(provider)
        self._namespace = namespace
        self._qparam: dict[str, str] = {QPARAM_PROVIDER: self._provider.value}
        if namespace:
            self._qparam[QPARAM_NAMESPACE] = namespace.get_path()

    @property
    def client(self) -> RequestClient:
        """The request client of this bucket.

        Raises:
            ValueError: the bucket was made without one.
        """
        if self._client is None:
            raise ValueError(
                "Bucket requires a client to use functions. Try defining a client and "
                "accessing this bucket with client.bucket()"
            )
        return self._client

    @client.setter
    def client(self, client: RequestClient) -> None:
        self._client = client

    @property
    def qparam(self) -> dict[str, str]:
        """Query parameters identifying the bucket: provider and, if any, namespace."""
        return self._qparam

    @property
    def provider(self) -> Provider:
        """The bucket's provider."""
        return self._provider

    @property
    def name(self) -> str:
        """The bucket's name."""
        return self._name

    @property
    def namespace(self) -> Namespace | None:
        """The bucket's namespace (None for the global one)."""
        return self._namespace

    def create(self, exist_ok: bool = False) -> Bucket:
        """Create this (ais) bucket; returns self.

        Raises:
            InvalidBckProvider: the bucket is remote.
            ErrBckAlreadyExists: it exists and `exist_ok` is False.
        """
        self._verify_ais_bucket()
        try:
            self.make_request(HTTP_METHOD_POST, ACT_CREATE_BCK)
        except ErrBckAlreadyExists:
            if not exist_ok:
                raise
        return self

    def delete(self, missing_ok: bool = False) -> None:
        """Destroy this (ais) bucket and all its objects.

        Raises:
            InvalidBckProvider: the bucket is remote.
            ErrBckNotFound: it does not exist and `missing_ok` is False.
        """
        self._verify_ais_bucket()
        try:
            self.make_request(HTTP_METHOD_DELETE, ACT_DESTROY_BCK)
        except ErrBckNotFound:
            if not missing_ok:
                raise

    def rename(self, to_bck_name: str) -> str:
        """Rename this (ais) bucket to `to_bck_name` as a job (`move-bck`); returns its id.
        From now on this object names the new bucket; wait for the job before using it.

        Raises:
            InvalidBckProvider: the bucket is remote.
            aistore.sdk.errors.AISError: e.g. the destination exists (400).
        """
        self._verify_ais_bucket()
        params = dict(self._qparam)
        params[QPARAM_BCK_TO] = BucketModel(
            name=to_bck_name, namespace=self._namespace, provider=self._provider.value
        ).get_path()
        resp = self.make_request(HTTP_METHOD_POST, ACT_MOVE_BCK, params=params)
        self._name = to_bck_name
        return resp.text

    def evict(self, keep_md: bool = False) -> None:
        """Evict this remote bucket's objects from the cluster (and its metadata unless
        `keep_md`).

        Raises:
            InvalidBckProvider: the bucket is an ais:// bucket (nothing to evict).
        """
        self.verify_cloud_bucket()
        params = dict(self._qparam)
        params[QPARAM_KEEP_REMOTE] = str(keep_md)
        self.make_request(HTTP_METHOD_DELETE, ACT_EVICT_REMOTE_BCK, params=params)

    def summary(
        self, uuid: str = "", prefix: str = "", cached: bool = True, present: bool = True
    ) -> dict[str, Any]:
        """Object count and sizes of this bucket (under `prefix`), computed by a job: starts it
        (202 + job id), then polls until the result (200) and returns it.

        Returns:
            AIS `BsummResult`: `ObjCount` (`obj_count_present`, `obj_count_remote`), `ObjSize`
            (min/avg/max), `TotalSize` (`size_on_disk`, `size_all_present_objs`, ...),
            `used_pct`, `is_present`, and the bucket's `name`/`provider`/`namespace`.

        Raises:
            UnexpectedHTTPStatusCode: the server answered neither 200, 202 nor 206.
        """
        msg = BsummCtrlMsg(uuid=uuid, prefix=prefix, cached=cached, present=present)
        resp = self.make_request(HTTP_METHOD_GET, ACT_SUMMARY_BCK, value=msg.model_dump())
        if resp.status_code == STATUS_OK:
            raise UnexpectedHTTPStatusCode([STATUS_ACCEPTED], resp.status_code)
        msg.uuid = resp.text.strip('"')
        sleep = DEFAULT_JOB_POLL_TIME
        while True:
            resp = self.make_request(HTTP_METHOD_GET, ACT_SUMMARY_BCK, value=msg.model_dump())
            if resp.status_code == STATUS_OK:
                break
            if resp.status_code not in (STATUS_ACCEPTED, STATUS_PARTIAL_CONTENT):
                raise UnexpectedHTTPStatusCode(
                    [STATUS_OK, STATUS_ACCEPTED, STATUS_PARTIAL_CONTENT], resp.status_code
                )
            time.sleep(sleep)
            if resp.status_code != STATUS_PARTIAL_CONTENT:
                sleep = min(_SUMMARY_MAX_POLL, sleep * 1.5)
        result: dict[str, Any] = json.loads(resp.content.decode("utf-8"))[0]
        return result

    def info(
        self,
        flt_presence: int = FLTPresence.FLT_EXISTS,
        bsumm_remote: bool = True,
        prefix: str = "",
    ) -> tuple[str, dict[str, Any]]:
        """Properties and summary of this bucket (under `prefix`): a HEAD that starts a summary
        job (202), then HEADs until it is done (200).

        Args:
            flt_presence: `FLTPresence` value: which buckets/objects count.
            bsumm_remote: count remote objects too (remote buckets).
            prefix: only objects under it.

        Returns:
            (the `Ais-Bucket-Props` JSON string, the summary as in `summary()`).

        Raises:
            ValueError: `flt_presence` is not an `FLTPresence` value.
            UnexpectedHTTPStatusCode: the first reply is not 202.
        """
        try:
            presence = int(FLTPresence(flt_presence))
        except ValueError as err:
            raise ValueError("`flt_presence` must be in values of enum FLTPresence") from err
        params: dict[str, Any] = dict(self._qparam)
        params[QPARAM_FLT_PRESENCE] = presence
        params[QPARAM_BSUMM_REMOTE] = bsumm_remote
        path = f"{URL_PATH_BUCKETS}/{self._name}"
        resp = self.client.request(
            HTTP_METHOD_HEAD, path=f"{path}/{prefix}" if prefix else path, params=params
        )
        props = resp.headers.get(HEADER_BUCKET_PROPS, "{}")
        if resp.status_code != STATUS_ACCEPTED:
            raise UnexpectedHTTPStatusCode([STATUS_ACCEPTED], resp.status_code)
        params[QPARAM_UUID] = resp.headers.get(HEADER_XACTION_ID, "").strip('"')
        result: dict[str, Any] = {}
        sleep = _INFO_FIRST_POLL
        while True:
            time.sleep(sleep)
            resp = self.client.request(HTTP_METHOD_HEAD, path=path, params=params)
            summ = resp.headers.get(HEADER_BUCKET_SUMM, "")
            if summ:
                result = json.loads(summ)
            if resp.status_code == STATUS_OK:
                return props, result
            sleep = min(_INFO_MAX_POLL, sleep * 2)

    def copy(
        self,
        to_bck: Bucket,
        prefix_filter: str = "",
        prepend: str = "",
        ext: dict[str, str] | None = None,
        dry_run: bool = False,
        force: bool = False,
        latest: bool = False,
        sync: bool = False,
        num_workers: int | None = 0,
    ) -> str:
        """Copy this bucket's objects (under `prefix_filter`) into `to_bck` as a job
        (`copy-bck`); the destination is created if missing. Returns the job id.

        Args:
            to_bck: destination bucket.
            prefix_filter: only objects whose names start with it.
            prepend: text put before every copied name.
            ext: rename extensions, e.g. {"jpg": "txt"}.
            dry_run: count what would be copied, copy nothing.
            force: run even if it conflicts with other jobs.
            latest: fetch the latest remote version first.
            sync: keep the destination in sync with a remote source.
            num_workers: concurrent workers per target (0: one per mountpath, -1: none).
        """
        value = TCBckMsg(
            ext=ext,
            num_workers=num_workers,
            copy_msg=CopyBckMsg(
                prefix=prefix_filter,
                prepend=prepend,
                force=force,
                dry_run=dry_run,
                latest=latest,
                sync=sync,
            ),
        ).as_dict()
        params = dict(self._qparam)
        params[QPARAM_BCK_TO] = to_bck.get_path()
        return self.make_request(HTTP_METHOD_POST, ACT_COPY_BCK, value=value, params=params).text

    def transform(
        self,
        etl_name: str,
        to_bck: Bucket,
        timeout: str = DEFAULT_ETL_TIMEOUT,
        prefix_filter: str = "",
        prepend: str = "",
        ext: dict[str, str] | None = None,
        force: bool = False,
        dry_run: bool = False,
        latest: bool = False,
        sync: bool = False,
        num_workers: int | None = 0,
        cont_on_err: bool = False,
        etl_pipeline: list[str] | None = None,
    ) -> str:
        """Transform this bucket's objects with an ETL into `to_bck` as a job (`etl-bck`);
        returns the job id. Per-object errors: `Etl.view(job_id)`.

        Args:
            etl_name: the ETL (first stage of `etl_pipeline`, if given).
            to_bck: destination bucket.
            timeout: the job's ETL request timeout (Go duration).
            cont_on_err: go on after objects that fail.
            etl_pipeline: the later ETL stages.
            others: as for `copy`.
        """
        value = TCBckMsg(
            ext=ext,
            num_workers=num_workers,
            cont_on_err=cont_on_err,
            transform_msg=TransformBckMsg(
                etl_name=etl_name, timeout=timeout, etl_pipeline=etl_pipeline
            ),
            copy_msg=CopyBckMsg(
                prefix=prefix_filter,
                prepend=prepend,
                force=force,
                dry_run=dry_run,
                latest=latest,
                sync=sync,
            ),
        ).as_dict()
        params = dict(self._qparam)
        params[QPARAM_BCK_TO] = to_bck.get_path()
        return self.make_request(HTTP_METHOD_POST, ACT_ETL_BCK, value=value, params=params).text

    def inspect(
        self,
        etl_name: str,
        timeout: str = DEFAULT_ETL_TIMEOUT,
        prefix_filter: str = "",
        latest: bool = False,
        num_workers: int | None = None,
        etl_pipeline: list[str] | None = None,
    ) -> str:
        """Run an ETL over this bucket's objects without writing anything (a dry-run
        `transform` into itself that continues on errors); returns the job id."""
        return self.transform(
            etl_name=etl_name,
            to_bck=self,
            timeout=timeout,
            prefix_filter=prefix_filter,
            latest=latest,
            dry_run=True,
            num_workers=num_workers,
            cont_on_err=True,
            etl_pipeline=etl_pipeline,
        )

    def put_files(
        self,
        path: str | Path,
        prefix_filter: str = "",
        pattern: str = "*",
        basename: bool = False,
        prepend: str | None = None,
        recursive: bool = False,
        dry_run: bool = False,
        verbose: bool = True,
        *,
        show_progress: bool | None = None,
        max_workers: int = _PUT_FILES_WORKERS,
    ) -> list[str]:
        """PUT the files of a local directory as objects; returns the object names (in the
        order the files were found).

        Args:
            path: the directory.
            prefix_filter: only files whose names start with it.
            pattern: shell wildcard the file names must match.
            basename: name objects by file name only (else by path relative to `path`).
            prepend: text put before every object name (no separator added).
            recursive: include subdirectories.
            dry_run: only report what would be put.
            verbose: log each upload (at INFO).
            show_progress: a tqdm bar of files put (our extension); None: only when stderr
                is a terminal.
            max_workers: files put at once (our extension; 1: one after another). On a
                failure the files not yet started are skipped and the error is raised.

        Raises:
            ValueError: `path` is not a directory, or `max_workers` is below 1.
        """
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        validate_directory(path)
        root = Path(path)
        found = root.rglob(pattern) if recursive else root.glob(pattern)
        files = [f for f in found if f.is_file() and f.name.startswith(prefix_filter)]
        dry = "Dry-run enabled. Proposed action:" if dry_run else ""
        log = verbose and logger.isEnabledFor(logging.INFO)
        bar = ProgressBar(
            False if dry_run else show_progress,
            total=len(files),
            desc=f"put {self._provider.value}://{self._name}",
            unit="file",
        )

        def put(file: Path) -> str:
            name = self._put_one(file, root, basename, prepend, dry_run, log, dry)
            bar.update(1)
            return name

        with bar:
            if max_workers == 1 or len(files) <= 1:
                names = [put(file) for file in files]
            else:
                with ThreadPoolExecutor(max_workers=max_workers) as pool:
                    futures = [pool.submit(put, file) for file in files]
                    try:
                        names = [f.result() for f in futures]
                    except BaseException:
                        for f in futures:
                            f.cancel()
                        raise
        if log:
            logger.info(
                "%s Specified files from %s uploaded to bucket %s",
                dry,
                path,
                f"{self._provider.value}://{self._name}",
            )
        return names

    def _put_one(
        self,
        file: Path,
        root: Path,
        basename: bool,
        prepend: str | None,
        dry_run: bool,
        log: bool,
        dry: str,
    ) -> str:
        name = file.name if basename else str(file.relative_to(root))
        if prepend:
            name = prepend + name
        if not dry_run:
            self.object(name).get_writer().put_file(str(file))
        if log:
            logger.info(
                "%s File '%s' uploaded as object '%s' with size %s",
                dry,
                file,
                name,
                get_file_size(file),
            )
        return name

    def objects(
        self,
        obj_names: list[str] | None = None,
        obj_range: ObjectRange | None = None,
        obj_template: str | None = None,
    ) -> ObjectGroup:
        """Several objects of this bucket, by exactly one of a list, a range or a template;
        no request is sent."""
        return ObjectGroup(
            bck=self, obj_names=obj_names, obj_range=obj_range, obj_template=obj_template
        )

    def write_dataset(
        self,
        config: DatasetConfig,
        skip_missing: bool = True,
        *,
        show_progress: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Write a local dataset into this bucket as WebDataset tar shards: samples from
        `config`, shards written locally, uploaded as they complete, then removed.

        Args:
            config: where each sample's parts come from.
            skip_missing: leave out samples that miss an attribute (else write them partial).
            **kwargs: shard writer options: `pattern` (name stem, default "dataset"),
                `maxcount` (samples per shard), `maxsize` (bytes per shard), `post` (called
                with each finished shard's path before it is uploaded).
            show_progress: a tqdm bar of shards uploaded (our extension); None: only when
                stderr is a terminal.
        """
        user_post: Callable[[str], Any] = kwargs.get("post", lambda _path: None)

        with ProgressBar(
            show_progress, desc=f"write_dataset {self._provider.value}://{self._name}", unit="shard"
        ) as bar:

            def upload(shard_path: str) -> None:
                user_post(shard_path)
                self.object(shard_path).get_writer().put_file(shard_path)
                os.unlink(shard_path)
                bar.update(1)

            kwargs["post"] = upload
            config.write_shards(skip_missing=skip_missing, **kwargs)

    def head(self) -> CaseInsensitiveDict[str]:
        """The bucket's response headers; `Ais-Bucket-Props` holds its properties as JSON.

        Raises:
            aistore.sdk.errors.AISError: status 404 when it does not exist.
        """
        return self.client.request(
            HTTP_METHOD_HEAD, path=f"{URL_PATH_BUCKETS}/{self._name}", params=self._qparam
        ).headers

    def list_objects(
        self,
        prefix: str = "",
        props: str = "",
        page_size: int = 0,
        uuid: str = "",
        continuation_token: str = "",
        flags: list[ListObjectFlag] | None = None,
        target: str = "",
        inventory_name: str = "",
        start_after: str = "",
    ) -> BucketList:
        """One page of the listing; pass its `uuid` and `continuation_token` to get the next.

        Args:
            prefix: only names starting with it.
            props: comma list of properties (name, size, version, checksum, atime, ...).
            page_size: entries per page (0: the server's maximum).
            uuid: listing session id from the previous page.
            continuation_token: from the previous page; "" for the first.
            flags: `ListObjectFlag`s.
            target: list one target only.
            inventory_name: list from this bucket inventory.
            start_after: names strictly after this one (first page; ais buckets only).

        Raises:
            NotImplementedError: `start_after` on a remote bucket.
        """
        self._verify_start_after(start_after)
        all_flags = list(flags) if flags else []
        headers = {HEADER_ACCEPT: MSGPACK_CONTENT_TYPE}
        if inventory_name:
            all_flags.append(ListObjectFlag.NBI)
            headers[HEADER_INV_NAME] = inventory_name
        value = ListObjectsMsg(
            prefix=prefix,
            page_size=page_size,
            uuid=uuid,
            props=props,
            continuation_token=continuation_token,
            flags=all_flags,
            target=target,
            start_after=start_after,
        ).as_dict()
        page = self.client.request_deserialize(
            HTTP_METHOD_GET,
            path=f"{URL_PATH_BUCKETS}/{self._name}",
            res_model=BucketList,
            headers=headers,
            json=ActionMsg(action=ACT_LIST, value=value).model_dump(),
            params=self._qparam,
        )
        maker = partial(Object, self.client, self._details())  # once per page, not per entry
        for entry in page.entries:
            entry.maker_ = maker
        return page

    def list_objects_iter(
        self,
        prefix: str = "",
        props: str = "",
        page_size: int = 0,
        flags: list[ListObjectFlag] | None = None,
        target: str = "",
        inventory_name: str = "",
        start_after: str = "",
    ) -> ObjectIterator:
        """All matching entries, fetched page by page as iteration proceeds."""
        self._verify_start_after(start_after)

        def fetch(uuid: str, token: str) -> BucketList:
            return self.list_objects(
                prefix,
                props,
                page_size,
                uuid=uuid,
                continuation_token=token,
                flags=flags,
                target=target,
                inventory_name=inventory_name,
                start_after=start_after if token == "" else "",
            )

        return ObjectIterator(fetch)

    def list_all_objects(
        self,
        prefix: str = "",
        props: str = "",
        page_size: int = 0,
        flags: list[ListObjectFlag] | None = None,
        target: str = "",
        inventory_name: str = "",
        start_after: str = "",
    ) -> list[BucketEntry]:
        """All matching entries in one list (every page fetched now)."""
        return list(
            self.list_objects_iter(
                prefix=prefix,
                props=props,
                page_size=page_size,
                flags=flags,
                target=target,
                inventory_name=inventory_name,
                start_after=start_after,
            )
        )

    def list_archive(
        self,
        archive_obj_name: str,
        include_archive_obj: bool = False,
        props: str = "",
        page_size: int = 0,
    ) -> list[BucketEntry]:
        """The files inside an archived object (.tar, .tgz/.tar.gz, .tar.lz4, .zip): a listing
        with `ListObjectFlag.ARCH_DIR`, which opens the archive on the server.

        Example:
            >>> [e.name for e in bucket.list_archive("shard.tar")]  # doctest: +SKIP
            ['shard.tar/a.jpg', 'shard.tar/a.cls']

        Args:
            archive_obj_name: the archive's object name (it may include a prefix path).
            include_archive_obj: list the archive object itself first, too.
            props: comma-separated properties to return (as in `list_objects`).
            page_size: names per page (as in `list_objects`).

        Returns:
            Entries named `<archive_obj_name>/<path in the archive>`, in name order (and the
            archive's own entry first when asked for). The listing's prefix is the archive's
            name, as the official SDK sends it: a cluster lists an archive's files only
            together with the archive, never for the prefix `<archive_obj_name>/`. Unlike the
            official SDK, objects that merely share that prefix (`shard.tar-1`) are left out.
        """
        inside = archive_obj_name + "/"
        entries = self.list_all_objects(
            prefix=archive_obj_name,
            props=props,
            page_size=page_size,
            flags=[ListObjectFlag.ARCH_DIR],
        )
        return [
            e
            for e in entries
            if e.name.startswith(inside) or (include_archive_obj and e.name == archive_obj_name)
        ]

    def list_all_objects_iter(
        self, prefix: str = "", props: str = "name,size", start_after: str = ""
    ) -> Iterator[Object]:
        """`Object`s of all matching entries, with the listed properties in `props_cached`."""
        self._verify_start_after(start_after)
        entries = self.list_objects_iter(prefix=prefix, props=props, start_after=start_after)
        if type(self).object is not Bucket.object:  # a subclass makes its own Objects
            for entry in entries:
                yield self.object(entry.name, entry.generate_object_props())
            return
        details = self._details()
        for entry in entries:
            yield Object._listed(self.client, details, entry)

    def list_urls(self, prefix: str = "", etl: Any = None) -> Iterator[str]:
        """GET URLs of all matching objects."""
        for entry in self.list_objects_iter(prefix=prefix, props="name"):
            yield self.object(entry.name).get_url(etl=etl)

    def create_inventory(
        self,
        name: str = "",
        prefix: str = "",
        props: str = "",
        names_per_chunk: int = 0,
        force: bool = False,
    ) -> str:
        """Start building a bucket inventory: a sorted snapshot of the listing, served by
        `list_objects(..., inventory_name=...)` far faster than walking the bucket.

        Args:
            name: inventory name (letters, digits, `-_.`; at most 64); "" = the job id.
            prefix: snapshot only names with this prefix.
            props: listing properties to store (default "name,size,cached").
            names_per_chunk: names per stored chunk (0 = server default 20000; 2..640000).
            force: replace the bucket's existing inventory.

        Returns:
            The job id; wait with `client.job(job_id).wait()`.
        """
        msg = CreateNBIMsg(
            name=name, prefix=prefix, props=props, names_per_chunk=names_per_chunk, force=force
        )
        return self.make_request(HTTP_METHOD_POST, ACT_CREATE_NBI, value=msg.as_dict()).text

    def destroy_inventory(self, name: str = "") -> None:
        """Remove the inventory `name`, or every inventory of this bucket when `name` is ""."""
        self.make_request(HTTP_METHOD_DELETE, ACT_DESTROY_NBI, name=name)

    def show_inventory(self, name: str = "") -> dict[str, NBIInfo]:
        """Inventories of this bucket (or just `name`), keyed by inventory object name."""
        data = self.make_request(HTTP_METHOD_GET, ACT_SHOW_NBI, name=name).json()
        return {key: NBIInfo(**value) for key, value in data.items()}

    def object(self, obj_name: str, props: ObjectProps | None = None) -> Object:
        """The object `obj_name` of this bucket; no request is sent."""
        return Object(client=self.client, bck_details=self._details(), name=obj_name, props=props)

    def _details(self) -> BucketDetails:
        return BucketDetails(self._name, self._provider, self._qparam, self.get_path())

    def make_request(
        self,
        method: str,
        action: str,
        value: Any = None,
        params: dict[str, Any] | None = None,
        name: str = "",
    ) -> requests.Response:
        """Send an action message to `/v1/buckets/<name>` (bucket params unless `params`)."""
        return self.client.request(
            method,
            path=f"{URL_PATH_BUCKETS}/{self._name}",
            json=ActionMsg(action=action, value=value, name=name).model_dump(),
            params=params if params else self._qparam,
        )

    def get_path(self) -> str:
        """`<provider>/<namespace>/<name>/`, the bucket part of object unames."""
        return self.as_model().get_path()

    def as_model(self) -> BucketModel:
        """The bucket as a `BucketModel`."""
        return BucketModel(
            name=self._name, provider=self._provider.value, namespace=self._namespace
        )

    def verify_cloud_bucket(self) -> None:
        """Raise InvalidBckProvider unless the bucket is remote."""
        if not self._provider.is_remote():
            raise InvalidBckProvider(self._provider)

    def _verify_ais_bucket(self) -> None:
        if self._provider.is_remote():
            raise InvalidBckProvider(self._provider)

    def _verify_start_after(self, start_after: str) -> None:
        if start_after and self._provider.is_remote():
            raise NotImplementedError(
                f"'start_after' is not supported for remote bucket provider "
                f"'{self._provider.value}'"
            )
