"""Requests about one object, with the reader's options (range, archive, headers) applied.

Example:
    >>> reader = bucket.object("name").get_reader(byte_range="bytes=0-99")  # doctest: +SKIP
    >>> reader.read_all()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

import requests
from tenacity import Retrying

from aistore._internal.body import BodyReader, Reply, StreamedReply
from aistore.sdk.const import (
    HEADER_RANGE,
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    QPARAM_ARCHMODE,
    QPARAM_ARCHPATH,
    QPARAM_ARCHREGX,
    QPARAM_ETL_NAME,
    QPARAM_PROPS,
)
from aistore.sdk.errors import ErrObjNotFound
from aistore.sdk.obj.object_attributes import ObjectAttributes
from aistore.sdk.request_client import RequestClient

__all__ = ["ObjectClient"]


def _read_all(reply: Reply) -> bytes:
    try:
        return reply.read_all()
    finally:
        reply.close()


def _headers(reply: Reply) -> Mapping[str, str]:
    headers = reply.headers
    reply.close()
    return headers


ByteRange = tuple[int | None, int | None]
T = TypeVar("T")


class ObjectClient:
    """Sends an object's GET and HEAD requests.

    With `uname` and `direct`, requests go straight to the target that owns the object (found
    in the cluster map by HRW); a 404 there refreshes the map once and retries. With `uname`
    alone they go there where the cluster map allows it (`RequestClient.direct_reads`), else
    through `request_client`; a 404 at the target is asked of `request_client` again.

    Example:
        >>> oc = ObjectClient(request_client, "objects/b/o", {"provider": "ais"})  # doctest: +SKIP
        >>> oc.head().size  # doctest: +SKIP

    Args:
        request_client: sends the requests.
        path: `objects/<bucket>/<quoted name>`.
        params: query parameters of every request.
        headers: headers of every GET (range, blob download).
        byte_range: (first, last) bytes of the user's range; (None, last) is a suffix range.
        uname: object uname, to read from its target directly.
        direct: always read from its target (the map is loaded now; ValueError if the
            target has no public URL).
    """

    def __init__(
        self,
        request_client: RequestClient,
        path: str,
        params: Mapping[str, str],
        headers: Mapping[str, str] | None = None,
        byte_range: ByteRange | None = (None, None),
        uname: str | None = None,
        direct: bool = False,
    ) -> None:
        self._request_client = request_client
        self._request_path = path
        self._request_params = dict(params)
        self._request_headers = dict(headers) if headers else {}
        self._byte_range: ByteRange = byte_range or (None, None)
        self._uname = uname
        self._direct = direct and bool(uname)
        # Without `direct`: the owner's client once the first request chose it (or the origin).
        self._origin: RequestClient | None = None if self._direct or not uname else request_client
        self._owner_chosen = False
        if self._direct:
            self._use_owning_target()

    @property
    def path(self) -> str:
        """URL path of the object."""
        return self._request_path

    def can_get_at_offset(self) -> bool:
        """Whether a GET can start at an arbitrary offset; may issue a HEAD.

        Archive selections, ETL transforms and suffix ranges cannot; an object absent from
        the cluster (a remote object being fetched) must be read from the start.
        """
        params = self._request_params
        archive = any(params.get(p) for p in (QPARAM_ARCHPATH, QPARAM_ARCHREGX, QPARAM_ARCHMODE))
        first, last = self._byte_range
        if archive or params.get(QPARAM_ETL_NAME) or (first is None and last is not None):
            return False
        return self.head().present

    def get(self, stream: bool, offset: int | None = None) -> requests.Response:
        """GET the content (from `offset` within the reader's range, when given)."""
        return self._get(self._headers_at(offset or 0), stream)

    def get_chunk(self, start: int, end: int) -> requests.Response:
        """Streamed GET of bytes [start, end); the caller closes the response."""
        headers = {**self._request_headers, HEADER_RANGE: f"bytes={start}-{end - 1}"}
        return self._get(headers, stream=True)

    def read_range(
        self,
        start: int,
        end: int,
        read: Callable[[StreamedReply], T],
        retrying: Retrying | None = None,
    ) -> T:
        """GET bytes [start, end) and let `read` consume a successful reply (through the native
        client when it can, see `RequestClient.send`); a transport error while sending or
        inside `read` repeats both under `retrying` (the client's network policy by default).
        Error statuses raise without retry.
        """
        headers = {**self._request_headers, HEADER_RANGE: f"bytes={start}-{end - 1}"}
        return self._refreshing_target(
            lambda rc: rc.send(
                HTTP_METHOD_GET,
                self._request_path,
                read,
                headers=headers,
                params=self._request_params,
                retrying=retrying,
            )
        )

    @property
    def request_client(self) -> RequestClient:
        """The client requests go through (the owning target's where reads go direct)."""
        self._choose_owner()
        return self._request_client

    def head(self, props: str = "checksum,atime,version,custom") -> ObjectAttributes:
        """Selective (v2) HEAD with `props` ("name,size" when empty)."""
        params = {**self._request_params, QPARAM_PROPS: props or "name,size"}
        headers = self._refreshing_target(
            lambda rc: rc.send(
                HTTP_METHOD_HEAD, self._request_path, _headers, params=params, stream=False
            )
        )
        return ObjectAttributes(headers)

    def read_all(self) -> bytes:
        """The whole content in one `bytes`, each byte copied once from the socket."""
        headers = self._headers_at(0)
        return self._refreshing_target(
            lambda rc: rc.send(
                HTTP_METHOD_GET,
                self._request_path,
                _read_all,
                headers=headers,
                params=self._request_params,
                stream=False,
            )
        )

    def _open_source(self, offset: int) -> BodyReader:
        """A streamed GET from logical position `offset`, ready to read."""
        return BodyReader(self.get(stream=True, offset=offset), offset)

    def _headers_at(self, offset: int) -> dict[str, str]:
        """GET headers, with the user's range moved forward by `offset` bytes."""
        headers = dict(self._request_headers)
        if offset:
            first, last = self._byte_range
            if first is not None:
                rng = f"bytes={first + offset}-{'' if last is None else last}"
            elif last is not None:
                rng = f"bytes=-{last - offset}"  # the suffix shrinks as it is consumed
            else:
                rng = f"bytes={offset}-"
            headers[HEADER_RANGE] = rng
        return headers

    def _get(self, headers: Mapping[str, str], stream: bool) -> requests.Response:
        return self._refreshing_target(
            lambda rc: rc.request(
                HTTP_METHOD_GET,
                self._request_path,
                params=self._request_params,
                stream=stream,
                headers=headers,
            )
        )

    def _refreshing_target(self, send: Callable[[RequestClient], T]) -> T:
        """`send` through the current client; reading from a target directly, a 404 may mean
        the object moved with a newer cluster map: refresh the map once and send again (or,
        where the target was chosen for speed only, ask the origin, which knows)."""
        origin = self._origin
        self._choose_owner()
        try:
            return send(self._request_client)
        except ErrObjNotFound:
            if origin is not None:
                if self._request_client is origin:
                    raise
                self._request_client = origin
                found = send(origin)
                origin.direct_reads.map_changed()
                return found
            if not self._uname:
                raise
            self._use_owning_target(force=True)
            return send(self._request_client)

    def _choose_owner(self) -> None:
        """Without `direct`: the owning target's client for this reader's requests, chosen at
        the first one (the map is loaded then, not when the reader is made)."""
        if self._origin is not None and not self._owner_chosen:
            owner = self._origin.direct_reads.client_for(self._uname or "")
            self._request_client = owner or self._origin
            self._owner_chosen = True

    def _use_owning_target(self, force: bool = False) -> None:
        target = self._request_client.get_smap(force).get_target_for_object(self._uname or "")
        if target.public_net is None or not target.public_net.direct_url:
            raise ValueError(f"target {target.daemon_id} has no public direct URL")
        self._request_client = self._request_client.clone(base_url=target.public_net.direct_url)
