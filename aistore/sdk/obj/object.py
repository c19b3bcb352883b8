"""One object of a bucket: metadata, readers, writers, copy and delete.

Example:
    >>> obj = Client("http://localhost:8080").bucket("b").object("dir/x.bin")  # doctest: +SKIP
    >>> obj.get_writer().put_content(b"data"); obj.get_reader().read_all()  # doctest: +SKIP
"""

from __future__ import annotations

import posixpath
import warnings
from dataclasses import dataclass
from typing import IO, Any, Protocol
from urllib.parse import quote

import requests
from requests.structures import CaseInsensitiveDict

from aistore.sdk.archive_config import ArchiveConfig
from aistore.sdk.blob_download_config import BlobDownloadConfig
from aistore.sdk.const import (
    ACT_BLOB_DOWNLOAD,
    ACT_PROMOTE,
    AIS_BCK_NAME,
    AIS_BCK_PROVIDER,
    AIS_OBJ_NAME,
    BYTE_RANGE_PREFIX_LENGTH,
    HEADER_OBJECT_BLOB_CHUNK_SIZE,
    HEADER_OBJECT_BLOB_DOWNLOAD,
    HEADER_OBJECT_BLOB_WORKERS,
    HEADER_RANGE,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    QPARAM_ARCHMODE,
    QPARAM_ARCHPATH,
    QPARAM_ARCHREGX,
    QPARAM_LATEST,
    QPARAM_OBJ_TO,
    QPARAM_PROPS,
    QPARAM_SYNC,
    URL_PATH_OBJECTS,
)
from aistore.sdk.const import QPARAM_ETL_ARGS as QPARAM_ETL_ARGS
from aistore.sdk.const import QPARAM_ETL_NAME as QPARAM_ETL_NAME
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.obj.multipart_upload import MultipartUpload
from aistore.sdk.obj.object_attributes import ObjectAttributes as ObjectAttributes
from aistore.sdk.obj.object_client import ByteRange, ObjectClient
from aistore.sdk.obj.object_props import ObjectProps
from aistore.sdk.obj.object_reader import ObjectReader
from aistore.sdk.obj.object_writer import ObjectWriter
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import ActionMsg, BlobMsg, BucketEntry, PromoteAPIArgs

__all__ = ["BucketDetails", "Object"]

# What `Object.props` asks the server for.
_PROPS_FULL = "checksum,atime,version,copies,custom,location"


class ETLConfigLike(Protocol):
    """What the SDK needs of an ETL configuration: to add its query parameters."""

    def update_qparams(self, params: dict[str, str]) -> None: ...


@dataclass
class BucketDetails:
    """The bucket of an object, as the object needs it.

    Example:
        >>> BucketDetails("b", Provider.AIS, {"provider": "ais"}, "ais/@#/b/").path
        'ais/@#/b/'
    """

    name: str
    provider: Provider
    qparams: dict[str, str]
    path: str


def parse_byte_range(byte_range: str) -> ByteRange:
    """(first, last) of an RFC 7233 `bytes=` range; either side may be None.

    Raises:
        ValueError: not a single `bytes=first-last` range.
    """
    if not byte_range.startswith("bytes="):
        raise ValueError(f"Invalid byte range (want 'bytes=first-last'): {byte_range!r}")
    first, sep, last = byte_range[BYTE_RANGE_PREFIX_LENGTH:].partition("-")
    if not sep:
        raise ValueError(f"Invalid byte range (want 'bytes=first-last'): {byte_range!r}")
    try:
        return (int(first) if first else None, int(last) if last else None)
    except ValueError as err:
        raise ValueError(f"Invalid byte range: {byte_range!r}") from err


class Object:
    """An object in a bucket; making one sends no request (see `Bucket.object`).

    Example:
        >>> obj = bucket.object("images/cat.jpg")  # doctest: +SKIP
        >>> obj.uname  # doctest: +SKIP
        'ais/@#/b/images/cat.jpg'

    Args:
        client: sends the requests.
        bck_details: the object's bucket.
        name: object name.
        props: known properties, if any (from a listing).
    """

    def __init__(
        self,
        client: RequestClient,
        bck_details: BucketDetails,
        name: str,
        props: ObjectProps | None = None,
    ) -> None:
        self._client = client
        self._bck_details = bck_details
        self._name = name
        self._props = props
        # Listed fields `props_cached` is built from on first use (see `_listed`).
        self._entry: BucketEntry | None = None
        self._path: str | None = None  # built on first use: listings create many Objects

    @classmethod
    def _listed(
        cls, client: RequestClient, bck_details: BucketDetails, entry: BucketEntry
    ) -> Object:
        """The object of a listing entry, its `props_cached` made from the entry on first use:
        a listing makes an Object per entry, and most are only read."""
        obj = cls(client, bck_details, entry.n)
        obj._entry = entry
        return obj

    @property
    def _object_path(self) -> str:
        # Names are quoted but keep "/"; the bucket name never needs quoting.
        if self._path is None:
            self._path = f"{URL_PATH_OBJECTS}/{self._bck_details.name}/{quote(self._name)}"
        return self._path

    @property
    def bucket_name(self) -> str:
        """Name of the object's bucket."""
        return self._bck_details.name

    @property
    def bucket_provider(self) -> Provider:
        """Provider of the object's bucket."""
        return self._bck_details.provider

    @property
    def query_params(self) -> dict[str, str]:
        """Query parameters of every request about this object (bucket identity)."""
        return self._bck_details.qparams

    @property
    def name(self) -> str:
        """Object name."""
        return self._name

    @property
    def uname(self) -> str:
        """Unified name: `<provider>/<namespace>/<bucket>/<name>`."""
        return posixpath.join(self._bck_details.path, self._name)

    @property
    def props(self) -> ObjectProps:
        """Current properties, fetched with a HEAD on every access."""
        return self.head(_PROPS_FULL)

    @property
    def props_cached(self) -> ObjectProps | None:
        """Properties from the last `head()`/`props` (or a listing), without a request."""
        if self._props is None and self._entry is not None:
            self._props = self._entry.generate_object_props()
        return self._props

    def head(self, props: str = "") -> ObjectProps:
        """Selective HEAD: `props` is a comma list (name, size, version, checksum, atime,
        copies, ec, custom, location, chunked, last-modified, etag), "name,size" by default.
        Presence always comes back. The result is cached in `props_cached`.

        Raises:
            aistore.sdk.errors.AISError: e.g. status 404 when the object does not exist.
        """
        params = {**self.query_params, QPARAM_PROPS: props or "name,size"}
        resp = self._client.request(HTTP_METHOD_HEAD, path=self._object_path, params=params)
        headers: CaseInsensitiveDict[Any] = CaseInsensitiveDict(resp.headers)
        headers.setdefault(AIS_BCK_NAME, self.bucket_name)
        headers.setdefault(AIS_BCK_PROVIDER, self.bucket_provider.value)
        headers.setdefault(AIS_OBJ_NAME, self._name)
        self._props = ObjectProps(headers)
        return self._props

    def head_v2(self, props: str = "") -> ObjectProps:
        """Deprecated 1.25 name of `head(props)` (selective HEAD); use `head()`."""
        warnings.warn(
            "Object.head_v2() is deprecated; use Object.head(props=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.head(props)

    def get_reader(
        self,
        archive_config: ArchiveConfig | None = None,
        blob_download_config: BlobDownloadConfig | None = None,
        chunk_size: int | None = None,
        etl: ETLConfigLike | None = None,
        writer: IO[bytes] | None = None,
        latest: bool = False,
        byte_range: str | None = None,
        direct: bool = False,
        num_workers: int | None = None,
    ) -> ObjectReader:
        """A reader of the object's content; no request is sent until it reads (except
        `direct=True`, which loads the cluster map, and `writer`, which reads at once).

        Args:
            archive_config: read a file (or a regex match) out of an archived object.
            blob_download_config: use the blob downloader (remote buckets).
            chunk_size: size of chunks when iterating (32 KiB by default).
            etl: transform the content with an ETL.
            writer: write the whole content there now (the caller closes it).
            latest: fetch the latest version from the remote backend.
            byte_range: one RFC 7233 range: "bytes=0-499", "bytes=500-", "bytes=-500".
            direct: read from the owning target, bypassing the proxy.
            num_workers: read with this many concurrent range GETs (at least 2): iteration
                streams through a bounded ring, `read_all()` returns a shared-memory
                `ParallelBuffer`. Sends the HEAD that sizes the object now.

        Raises:
            ValueError: conflicting options, or `num_workers` on an empty object.
        """
        params = dict(self.query_params)
        headers: dict[str, str] = {}
        if archive_config:
            if archive_config.mode:
                params[QPARAM_ARCHMODE] = archive_config.mode.value
            params[QPARAM_ARCHPATH] = archive_config.archpath
            params[QPARAM_ARCHREGX] = archive_config.regex
        if blob_download_config:
            headers[HEADER_OBJECT_BLOB_DOWNLOAD] = "true"
            if blob_download_config.chunk_size is not None:
                headers[HEADER_OBJECT_BLOB_CHUNK_SIZE] = blob_download_config.chunk_size
            if blob_download_config.num_workers is not None:
                headers[HEADER_OBJECT_BLOB_WORKERS] = blob_download_config.num_workers
        if etl:
            etl.update_qparams(params)
        if latest:
            params[QPARAM_LATEST] = "true"
        if byte_range and blob_download_config:
            raise ValueError("Cannot use `byte_range` with `blob_download_config`.")
        if num_workers is not None:
            _check_parallel_options(num_workers, byte_range, blob_download_config, etl)
        bounds: ByteRange = (None, None)
        if byte_range:
            bounds = parse_byte_range(byte_range)
            headers = {HEADER_RANGE: byte_range}
        object_client = ObjectClient(
            request_client=self._client,
            path=self._object_path,
            params=params,
            headers=headers,
            byte_range=bounds,
            uname=self.uname,
            direct=direct,
        )
        reader = ObjectReader(object_client, chunk_size=chunk_size, num_workers=num_workers)
        if writer is not None:
            writer.writelines(reader)
        return reader

    def get_writer(self) -> ObjectWriter:
        """A writer of the object's content and metadata."""
        return ObjectWriter(self._client, self._object_path, self.query_params)

    def multipart_upload(self) -> MultipartUpload:
        """A multipart upload of this object (call `create()` on it first)."""
        return MultipartUpload(self._client, self._object_path, self.query_params)

    def delete(self) -> requests.Response:
        """Delete the object.

        Raises:
            aistore.sdk.errors.ErrObjNotFound: it does not exist.
        """
        return self._client.request(
            HTTP_METHOD_DELETE, path=self._object_path, params=self.query_params
        )

    def copy(
        self,
        to_obj: Object,
        etl: ETLConfigLike | None = None,
        latest: bool = False,
        sync: bool = False,
    ) -> requests.Response:
        """Copy this object to `to_obj` (any bucket, any name), optionally transformed."""
        params = {
            **self.query_params,
            QPARAM_OBJ_TO: to_obj.uname,
            QPARAM_LATEST: "true" if latest else "false",
            QPARAM_SYNC: "true" if sync else "false",
        }
        if etl:
            etl.update_qparams(params)
        return self._client.request(HTTP_METHOD_PUT, path=self._object_path, params=params)

    def promote(
        self,
        path: str,
        target_id: str = "",
        recursive: bool = False,
        overwrite_dest: bool = False,
        delete_source: bool = False,
        src_not_file_share: bool = False,
    ) -> str:
        """Make objects of local files of the server: a file becomes this object; a directory's
        files become objects named `<this name>/<relative path>`, as a job. The source must lie
        under the server's promote root (AIS: /var/lib/ais/promote).

        Args:
            path: absolute path of the file or directory on the server.
            target_id: the target that reads it (a single node: any).
            recursive: include subdirectories.
            overwrite_dest: replace existing objects (else they are kept).
            delete_source: remove each file once it is an object.
            src_not_file_share: the source is not shared by all targets.

        Returns:
            The job id for a directory, "" for a file (promoted before the reply).

        Raises:
            aistore.sdk.errors.AISError: bad or missing source (400/404).
        """
        value = PromoteAPIArgs(
            source_path=path,
            object_name=self._name,
            target_id=target_id,
            recursive=recursive,
            overwrite_dest=overwrite_dest,
            delete_source=delete_source,
            src_not_file_share=src_not_file_share,
        ).as_dict()
        msg = ActionMsg(action=ACT_PROMOTE, name=path, value=value).model_dump()
        return self._client.request(
            HTTP_METHOD_POST, path=self._bucket_path, params=self.query_params, json=msg
        ).text

    def blob_download(
        self, chunk_size: int | None = None, num_workers: int | None = None, latest: bool = False
    ) -> str:
        """Fetch this object of a remote bucket in parallel chunks, as a job; returns its id.

        Raises:
            aistore.sdk.errors.AISError: the bucket is not remote (400).
        """
        value = BlobMsg(chunk_size=chunk_size, num_workers=num_workers, latest=latest).as_dict()
        msg = ActionMsg(action=ACT_BLOB_DOWNLOAD, value=value, name=self._name).model_dump()
        return self._client.request(
            HTTP_METHOD_POST, path=self._bucket_path, params=self.query_params, json=msg
        ).text

    @property
    def _bucket_path(self) -> str:
        return f"{URL_PATH_OBJECTS}/{self._bck_details.name}"

    def get_url(self, archpath: str = "", etl: ETLConfigLike | None = None) -> str:
        """Full URL of a GET of this object, e.g. for tools that fetch URLs themselves."""
        params = dict(self.query_params)
        if archpath:
            params[QPARAM_ARCHPATH] = archpath
        if etl:
            etl.update_qparams(params)
        return self._client.get_full_url(self._object_path, params)

    def get_semantic_url(self) -> str:
        """`<provider>://<bucket>/<name>`."""
        return f"{self.bucket_provider.value}://{self.bucket_name}/{self._name}"


def _check_parallel_options(
    num_workers: int,
    byte_range: str | None,
    blob_download_config: BlobDownloadConfig | None,
    etl: ETLConfigLike | None,
) -> None:
    """The official rules for `num_workers`."""
    if num_workers < 2:
        raise ValueError("`num_workers` must be at least 2.")
    if byte_range:
        raise ValueError(
            "Cannot use `num_workers` with `byte_range`. "
            "Parallel download is for full object retrieval."
        )
    if blob_download_config:
        raise ValueError("Cannot use `num_workers` with `blob_download_config`.")
    if etl:
        raise ValueError(
            "Cannot use `num_workers` with `etl`. "
            "Parallel download issues raw range reads that bypass ETL."
        )
