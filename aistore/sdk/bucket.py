"""A bucket: create, destroy, inspect and list it; address its objects.

Example:
    >>> bucket = client.bucket("data").create(exist_ok=True)  # doctest: +SKIP
    >>> names = [e.name for e in bucket.list_all_objects(prefix="train/")]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import requests
from requests.structures import CaseInsensitiveDict

from aistore.sdk.ais_source import AISSource
from aistore.sdk.const import (
    ACT_CREATE_BCK,
    ACT_CREATE_NBI,
    ACT_DESTROY_BCK,
    ACT_DESTROY_NBI,
    ACT_LIST,
    ACT_SHOW_NBI,
    HEADER_ACCEPT,
    HEADER_INV_NAME,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_POST,
    MSGPACK_CONTENT_TYPE,
    QPARAM_NAMESPACE,
    QPARAM_PROVIDER,
    URL_PATH_BUCKETS,
)
from aistore.sdk.errors import ErrBckAlreadyExists, ErrBckNotFound, InvalidBckProvider
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object import BucketDetails, Object
from aistore.sdk.obj.object_iterator import ObjectIterator
from aistore.sdk.obj.object_props import ObjectProps
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.types import (
    ActionMsg,
    BucketEntry,
    BucketList,
    BucketModel,
    CreateNBIMsg,
    ListObjectsMsg,
    NBIInfo,
)

__all__ = ["Bucket"]


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
        details = self._details()  # once per page, not per entry
        for entry in page.entries:
            entry.object = Object(client=self.client, bck_details=details, name=entry.name)
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

    def list_all_objects_iter(
        self, prefix: str = "", props: str = "name,size", start_after: str = ""
    ) -> Iterator[Object]:
        """`Object`s of all matching entries, with the listed properties in `props_cached`."""
        self._verify_start_after(start_after)
        for entry in self.list_objects_iter(prefix=prefix, props=props, start_after=start_after):
            yield self.object(entry.name, entry.generate_object_props())

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
