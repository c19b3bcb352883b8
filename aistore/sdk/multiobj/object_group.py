"""`ObjectGroup`: many objects of one bucket, chosen by list, range or template, and the jobs
that act on them all (delete, copy, archive, prefetch, evict).

Example:
    >>> group = client.bucket("b").objects(obj_template="shard-{000..999}.tar")  # doctest: +SKIP
    >>> client.job(group.delete()).wait()  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from aistore.sdk.ais_source import AISSource
from aistore.sdk.const import (
    ACT_ARCHIVE_OBJECTS,
    ACT_COPY_OBJECTS,
    ACT_DELETE_OBJECTS,
    ACT_EVICT_OBJECTS,
    ACT_PREFETCH_OBJECTS,
    ACT_TRANSFORM_OBJECTS,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
)
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.etl.etl_const import DEFAULT_ETL_TIMEOUT
from aistore.sdk.multiobj.object_collection import ObjectCollection
from aistore.sdk.multiobj.object_names import ObjectNames
from aistore.sdk.multiobj.object_range import ObjectRange
from aistore.sdk.multiobj.object_template import ObjectTemplate
from aistore.sdk.obj.object import Object
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import (
    ArchiveMultiObj,
    CopyBckMsg,
    PrefetchMsg,
    TCBckMsg,
    TCMultiObj,
    TransformBckMsg,
)

if TYPE_CHECKING:
    from aistore.sdk.bucket import Bucket

__all__ = ["ObjectGroup"]

logger = logging.getLogger(__name__)


class ObjectGroup(AISSource):
    """Objects of `bck` named by exactly one of a list, an `ObjectRange` or a template string;
    made by `Bucket.objects()`. Each operation starts a job and returns its id.

    Args:
        bck: the objects' bucket.
        obj_names: names of the objects.
        obj_range: a numbered range of names.
        obj_template: a brace-expansion template (a template without braces is a prefix).

    Raises:
        ValueError: none or several selections, or an empty one.
        TypeError: `obj_range` is not an `ObjectRange`.

    Example:
        >>> group = bucket.objects(obj_names=["a.txt", "b.txt"])  # doctest: +SKIP
        >>> group.list_names()  # doctest: +SKIP
        ['a.txt', 'b.txt']
    """

    def __init__(
        self,
        bck: Bucket,
        obj_names: list[str] | None = None,
        obj_range: ObjectRange | None = None,
        obj_template: str | None = None,
    ) -> None:
        self.bck = bck
        if sum(x is not None for x in (obj_names, obj_range, obj_template)) != 1:
            raise ValueError(
                "ObjectGroup accepts one and only one of: obj_names, obj_range, or obj_template"
            )
        if (obj_names is not None and not obj_names) or obj_template == "":
            raise ValueError("Object selection must not be empty")
        if obj_range is not None and not isinstance(obj_range, ObjectRange):
            raise TypeError("obj_range must be of type ObjectRange")
        self._obj_collection: ObjectCollection
        if obj_range is not None:
            self._obj_collection = obj_range
        elif obj_names is not None:
            self._obj_collection = ObjectNames(obj_names)
        else:
            assert obj_template is not None
            self._obj_collection = ObjectTemplate(obj_template)

    @property
    def client(self) -> RequestClient:
        """The request client of the group's bucket."""
        return self.bck.client

    @client.setter
    def client(self, client: RequestClient) -> None:
        self.bck.client = client

    @staticmethod
    def _parse_job_ids(response_text: str) -> list[str]:
        # Copy and archive may run one job per target: their ids come comma-separated.
        return response_text.split(",") if response_text else []

    def list_urls(self, prefix: str = "", etl: Any = None) -> Iterator[str]:
        """GET URLs of the group's objects (every name the selection gives)."""
        for name in self._obj_collection:
            yield self.bck.object(name).get_url(etl=etl)

    def list_all_objects_iter(
        self, prefix: str = "", props: str | None = "name,size"
    ) -> Iterator[Object]:
        """The group's objects whose names start with `prefix`; each is HEADed for `props`
        unless `props` is None."""
        for name in self._obj_collection:
            if not name.startswith(prefix):
                continue
            obj = self.bck.object(name)
            if props is not None:
                obj.head(props)
            yield obj

    def delete(self) -> str:
        """Delete the objects; returns the job id. Listed names that do not exist fail the job
        (after the others are deleted); a range skips them."""
        return self.bck.make_request(
            HTTP_METHOD_DELETE, ACT_DELETE_OBJECTS, value=self._obj_collection.get_value()
        ).text

    def evict(self) -> str:
        """Evict the objects from the cluster (remote buckets only); returns the job id.

        Raises:
            aistore.sdk.errors.InvalidBckProvider: the bucket is an ais:// bucket.
        """
        self.bck.verify_cloud_bucket()
        return self.bck.make_request(
            HTTP_METHOD_DELETE, ACT_EVICT_OBJECTS, value=self._obj_collection.get_value()
        ).text

    def prefetch(
        self,
        blob_threshold: int | None = None,
        num_workers: int | None = None,
        latest: bool = False,
        continue_on_error: bool = False,
    ) -> str:
        """Fetch the objects into the cluster (remote buckets only); returns the job id.

        Args:
            blob_threshold: objects at least this big use the blob downloader.
            num_workers: concurrent readers per target (0: one per mountpath, -1: none).
            latest: fetch the latest remote version.
            continue_on_error: keep going past a failed object.

        Raises:
            aistore.sdk.errors.InvalidBckProvider: the bucket is an ais:// bucket.
        """
        self.bck.verify_cloud_bucket()
        value = PrefetchMsg(
            object_selection=self._obj_collection.get_value(),
            continue_on_err=continue_on_error,
            latest=latest,
            blob_threshold=blob_threshold,
            num_workers=num_workers,
        ).as_dict()
        return self.bck.make_request(HTTP_METHOD_POST, ACT_PREFETCH_OBJECTS, value=value).text

    def copy(
        self,
        to_bck: Bucket,
        prepend: str = "",
        continue_on_error: bool = False,
        dry_run: bool = False,
        force: bool = False,
        latest: bool = False,
        sync: bool = False,
        num_workers: int | None = None,
    ) -> list[str]:
        """Copy the objects into `to_bck` (created if missing), names prefixed by `prepend`;
        returns the job ids.

        Args:
            to_bck: destination bucket.
            prepend: text put before every copied name.
            continue_on_error: keep going past a failed object (else the job stops there).
            dry_run: count what would be copied, copy nothing.
            force: run even if it conflicts with other jobs.
            latest: fetch the latest remote version first.
            sync: keep the destination in sync with a remote source.
            num_workers: concurrent workers per target.
        """
        selection = self._obj_collection.get_value()
        if dry_run:
            logger.info(
                "Copy dry-run: would copy from %s to %s: %s",
                self.bck.get_path(),
                to_bck.get_path(),
                selection,
            )
        copy_msg = CopyBckMsg(
            prepend=prepend, dry_run=dry_run, force=force, latest=latest, sync=sync
        )
        value = TCMultiObj(
            to_bck=to_bck.as_model(),
            tc_msg=TCBckMsg(copy_msg=copy_msg),
            object_selection=selection,
            continue_on_err=continue_on_error,
            num_workers=num_workers,
        ).as_dict()
        resp = self.bck.make_request(HTTP_METHOD_POST, ACT_COPY_OBJECTS, value=value)
        return self._parse_job_ids(resp.text)

    def transform(
        self,
        to_bck: Bucket,
        etl_name: str,
        timeout: str = DEFAULT_ETL_TIMEOUT,
        prepend: str = "",
        ext: dict[str, str] | None = None,
        continue_on_error: bool = False,
        dry_run: bool = False,
        force: bool = False,
        latest: bool = False,
        sync: bool = False,
        num_workers: int | None = None,
        etl_pipeline: list[str] | None = None,
    ) -> str:
        """Transform the selected objects with an ETL into `to_bck` as a job
        (`etl-listrange`); returns the job id. Per-object errors: `Etl.view(job_id)`.

        Args:
            to_bck: destination bucket.
            etl_name: the ETL (first stage of `etl_pipeline`, if given).
            timeout: the job's ETL request timeout (Go duration).
            etl_pipeline: the later ETL stages.
            others: as for `copy`.
        """
        copy_msg = CopyBckMsg(
            prepend=prepend, dry_run=dry_run, force=force, latest=latest, sync=sync
        )
        transform_msg = TransformBckMsg(
            etl_name=etl_name, timeout=timeout, etl_pipeline=etl_pipeline
        )
        value = TCMultiObj(
            to_bck=to_bck.as_model(),
            tc_msg=TCBckMsg(ext=ext, transform_msg=transform_msg, copy_msg=copy_msg),
            object_selection=self._obj_collection.get_value(),
            continue_on_err=continue_on_error,
            num_workers=num_workers,
        ).as_dict()
        return self.bck.make_request(HTTP_METHOD_POST, ACT_TRANSFORM_OBJECTS, value=value).text

    def inspect(
        self,
        etl_name: str,
        timeout: str = DEFAULT_ETL_TIMEOUT,
        latest: bool = False,
        num_workers: int | None = None,
        etl_pipeline: list[str] | None = None,
    ) -> str:
        """Run an ETL over the selected objects without writing anything (a dry-run
        `transform` into this bucket that continues on errors); returns the job id."""
        return self.transform(
            to_bck=self.bck,
            etl_name=etl_name,
            timeout=timeout,
            continue_on_error=True,
            dry_run=True,
            latest=latest,
            num_workers=num_workers,
            etl_pipeline=etl_pipeline,
        )

    def archive(
        self,
        archive_name: str,
        mime: str = "",
        to_bck: Bucket | None = None,
        include_source_name: bool = False,
        allow_append: bool = False,
        continue_on_err: bool = False,
    ) -> list[str]:
        """Write the objects into one archive (shard) `archive_name` (.tar, .tgz, .tar.gz,
        .tar.lz4, .zip, or as `mime` says); returns the job ids.

        Args:
            archive_name: name of the archive object.
            mime: archive format, overriding the name's extension.
            to_bck: bucket of the archive (default: this one).
            include_source_name: name entries `<source bucket>/<object>`.
            allow_append: add to an existing archive instead of replacing it.
            continue_on_err: skip objects that fail instead of failing the job.
        """
        value = ArchiveMultiObj(
            object_selection=self._obj_collection.get_value(),
            archive_name=archive_name,
            mime=mime,
            to_bck=to_bck.as_model() if to_bck else self.bck.as_model(),
            include_source_name=include_source_name,
            allow_append=allow_append,
            continue_on_err=continue_on_err,
        ).as_dict()
        resp = self.bck.make_request(HTTP_METHOD_PUT, ACT_ARCHIVE_OBJECTS, value=value)
        return self._parse_job_ids(resp.text)

    def list_names(self) -> list[str]:
        """Every name the selection gives."""
        return list(self._obj_collection)
