"""The Batch API (GetBatch, AIS "MOSS"): many objects, byte ranges and files inside shards in
one request, delivered as one archive in request order.

Example:
    >>> from aistore import Client
    >>> client = Client("http://localhost:8080")
    >>> batch = client.batch(["a.jpg", "b.jpg"], bucket=client.bucket("imgs"))
    >>> batch.add("shard.tar", archpath="x/1.jpg")
    Batch(objects=3, format=.tar)
    >>> for info, data in batch.get():  # doctest: +SKIP
    ...     print(info.obj_name, len(data))
"""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Generator, Sequence
from typing import Any

import requests
from urllib3.response import HTTPResponse

from aistore._internal.body import Reply
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.extractor.archive_stream_extractor import ArchiveStreamExtractor
from aistore.sdk.batch.extractor.extractor_registry import get_extractor
from aistore.sdk.batch.extractor.tar_stream_extractor import TarStreamExtractor
from aistore.sdk.batch.multipart.multipart_decoder import MultipartDecoder
from aistore.sdk.batch.types import (
    MossIn,
    MossOut,
    MossReq,
    MossResp,
    encode_request,
    model_defaults,
    trusted,
)
from aistore.sdk.bucket import Bucket
from aistore.sdk.const import (
    EXT_TAR,
    HEADER_CONTENT_TYPE,
    HTTP_METHOD_GET,
    JSON_CONTENT_TYPE,
    QPARAM_COLOC,
    QPARAM_PROVIDER,
    URL_PATH_GB,
)
from aistore.sdk.enums import Colocation
from aistore.sdk.obj.object import Object
from aistore.sdk.request_client import RequestClient
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["Batch", "BatchResult"]

logger = logging.getLogger(__name__)

_BUCKET_REQUIRED_MSG = (
    "Bucket must be provided when objects are specified as raw names (str or list of str)"
)

BatchResult = Generator[tuple[MossOut, bytes], None, None]
"""What `Batch.get()` yields: `(MossOut, content)` per item, in request order."""


class Batch:
    """A GetBatch request under construction; `get()` sends it and yields the items in order.

    Items are objects (by name with the batch's bucket, or as `Object`s), byte ranges of
    objects, or files inside archived objects ("shards", `archpath=`), from any buckets.

    Example:
        >>> batch = Batch(client._request_client, bucket=bucket)  # doctest: +SKIP
        >>> batch.add("a.txt").add("shard.tar", archpath="b.txt")  # doctest: +SKIP
        >>> for info, data in batch.get():  # doctest: +SKIP
        ...     print(info.obj_name, len(data))

    Args:
        request_client: sends the request.
        objects: names (need `bucket`), `Object`s, or one of either; more via `add()`.
        bucket: the default bucket of names.
        output_format: ".tar" (default), ".tgz", ".tar.gz", ".tar.lz4" or ".zip".
        cont_on_err: missing items become empty `__404__/` placeholders instead of failing.
        only_obj_name: archive entry names without the bucket.
        streaming_get: a plain archive stream (True) or a multipart reply with the server's
            per-item metadata first (False).
        colocation: a placement hint for multi-node clusters.

    Raises:
        ValueError: unknown format or colocation, a name without a bucket, a wrong object type.
        NotImplementedError: `Colocation.TARGET_AND_SHARD_AWARE`.
    """

    def __init__(
        self,
        request_client: RequestClient,
        objects: list[Object] | Object | str | list[str] | None = None,
        bucket: Bucket | None = None,
        output_format: str = EXT_TAR,
        cont_on_err: bool = True,
        only_obj_name: bool = False,
        streaming_get: bool = True,
        colocation: Colocation = Colocation.NONE,
    ) -> None:
        self.request_client = request_client
        self.bucket = bucket
        if colocation < Colocation.NONE or colocation > Colocation.TARGET_AND_SHARD_AWARE:
            raise ValueError(
                f"Invalid colocation value: {colocation}. Must be a Colocation enum member."
            )
        if colocation == Colocation.TARGET_AND_SHARD_AWARE:
            raise NotImplementedError(
                "Colocation.TARGET_AND_SHARD_AWARE is not yet implemented on the server side."
            )
        self.extractor: ArchiveStreamExtractor = get_extractor(output_format)
        # Field names, not the JSON aliases (populate_by_name); passed as a mapping because
        # type checkers see only the aliases as constructor keywords.
        settings: dict[str, Any] = {
            "moss_in": [],
            "output_format": output_format,
            "cont_on_err": cont_on_err,
            "only_obj_name": only_obj_name,
            "streaming_get": streaming_get,
            "colocation": int(colocation) if colocation > Colocation.NONE else None,
        }
        self.request = MossReq(**settings)
        if objects is not None:
            self._add_plain(objects if isinstance(objects, list) else [objects])

    def _add_plain(
        self,
        objects: Sequence[Object] | Sequence[str] | Sequence[Object | str],
        archpaths: Sequence[str] | None = None,
    ) -> None:
        """`add(obj)` for each of `objects` (`add(obj, archpath=archpaths[i])` when given):
        names and Objects without other per-item options, in one loop (a batch may hold 100k
        of them). REQUIRES: `archpaths` non-empty strings, as many as `objects`."""
        bck = self.bucket.name if self.bucket else None
        provider = self.bucket.provider.value if self.bucket else None
        # Every item gets a full state of its own, from one template, and all share one
        # fields set (MossIn is frozen): half the cost of building each from scratch.
        template = {**model_defaults(MossIn), "bck": bck, "provider": provider}
        given = {"obj_name", "bck", "provider"} | ({"archpath"} if archpaths else set())
        items = []
        for i, obj in enumerate(objects):
            state = template.copy()
            if archpaths:
                state["archpath"] = archpaths[i]
            if isinstance(obj, str):
                if bck is None:
                    raise ValueError(_BUCKET_REQUIRED_MSG)
                state["obj_name"] = obj
            elif isinstance(obj, Object):
                state["obj_name"] = obj.name
                state["bck"] = obj.bucket_name
                state["provider"] = obj.bucket_provider.value
            else:
                raise ValueError(f"Unsupported object type: {type(obj)}")
            items.append(trusted(MossIn, state, given))
        self.request.moss_in.extend(items)

    @property
    def requests_list(self) -> list[MossIn]:
        """The items added so far, in order."""
        return self.request.moss_in

    def add(
        self,
        obj: Object | str,
        opaque: bytes | None = None,
        archpath: str | None = None,
        start: int | None = None,
        length: int | None = None,
        bck: str | None = None,
        provider: str | None = None,
    ) -> Batch:
        """Append one item; returns self (chainable).

        Args:
            obj: an `Object`, or a name in the batch's bucket (or in `bck`).
            opaque: bytes echoed back in this item's `MossOut`.
            archpath: a file inside the object (a .tar/.tgz/.tar.gz/.tar.lz4/.zip shard).
            start, length: a byte range (of the object, or of the archived file); `length`
                -1 reads to the end; a non-zero start needs a length.
            bck, provider: the bucket of a name, both or neither (not with an `Object`).

        Raises:
            ValueError: a bad range, `bck`/`provider` misuse, a name without any bucket.
        """
        if not isinstance(obj, (Object, str)):
            raise ValueError(f"Unsupported object type: {type(obj)}")
        for name, text in (("archpath", archpath), ("bck", bck), ("provider", provider)):
            if text is not None and not isinstance(text, str):
                raise ValueError(f"{name} must be a string, got {type(text)}")
        for name, number in (("start", start), ("length", length)):
            if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
                raise ValueError(f"{name} must be an integer, got {type(number)}")
        if start or length:
            _validate_byte_range(start, length)
        if (bck is None) != (provider is None):
            raise ValueError("bck and provider must be set together, or not at all")
        fields: dict[str, Any] = {}
        if opaque:
            fields["opaque"] = base64.b64encode(opaque).decode("ascii")
        if archpath:
            fields["archpath"] = archpath
        if start:
            fields["start"] = start
        if length:
            fields["length"] = length
        if isinstance(obj, Object):
            if bck is not None or provider is not None:
                raise ValueError("bck/provider cannot be combined with an Object instance")
            fields.update(
                obj_name=obj.name, bck=obj.bucket_name, provider=obj.bucket_provider.value
            )
        else:
            if bck is None:
                if not self.bucket:
                    raise ValueError(_BUCKET_REQUIRED_MSG)
                bck, provider = self.bucket.name, self.bucket.provider.value
            fields.update(obj_name=obj, bck=bck, provider=provider)
        # Every value was checked above: no need to validate them again.
        self.request.moss_in.append(trusted(MossIn, fields))
        return self

    def clear(self) -> Batch:
        """Remove every item (the settings stay); returns self."""
        self.request.moss_in = []
        return self

    def get(
        self,
        raw: bool = False,
        decode_as_stream: bool = False,
        clear_batch: bool = True,
        *,
        tar_buffer_size: int | None = None,
    ) -> BatchResult | HTTPResponse:
        """Send the request; yield `(MossOut, content)` per item in request order.

        HTTP errors are raised here, before the first item. The archive is read as it streams
        in: memory stays at one read buffer plus the item being handed out.

        Args:
            raw: return the raw `urllib3` response instead (the caller reads and closes it).
            decode_as_stream: multipart replies only: decode while reading instead of reading
                the whole reply first.
            clear_batch: empty the batch once sent, so that it can be reused.
            tar_buffer_size: the read buffer of tar extraction (bytes).

        Raises:
            ValueError: no items; a bad `tar_buffer_size`.
            aistore.sdk.errors.AISError: (or a subclass) the server refused the request.
            aistore.sdk.batch.errors.MultipartDecodeError: a malformed multipart reply.
            RuntimeError: (while iterating) a damaged or cut-short archive.
        """
        if not self.requests_list:
            raise ValueError("No objects added to batch")
        if tar_buffer_size is not None:
            if (
                isinstance(tar_buffer_size, bool)
                or not isinstance(tar_buffer_size, int)
                or tar_buffer_size <= 0
            ):
                raise ValueError("tar_buffer_size must be a positive integer")
            if raw or not isinstance(self.extractor, TarStreamExtractor):
                raise ValueError("tar_buffer_size requires TAR extraction with raw=False")
        path = URL_PATH_GB
        params: dict[str, str] = {}
        if self.bucket:
            path = f"{URL_PATH_GB}/{self.bucket.name}"
            params[QPARAM_PROVIDER] = self.bucket.provider.value
        if self.request.colocation:
            params[QPARAM_COLOC] = str(self.request.colocation)
        body = encode_request(self.request)
        headers = {HEADER_CONTENT_TYPE: JSON_CONTENT_TYPE}
        options = {} if tar_buffer_size is None else {"buffer_size": tar_buffer_size}
        if self.request.streaming_get and not raw:
            # Sent by the transport `select_transport` picks (the native client when it can);
            # the extractor reads the archive as it streams in and closes the reply.
            reply = self.request_client.send(
                HTTP_METHOD_GET, path, _open_reply, headers=headers, params=params, body=body
            )
            snapshot = self._snapshot(clear_batch)
            return self.extractor.extract(_Reply(reply), reply, snapshot, None, **options)
        response = self.request_client.request(
            HTTP_METHOD_GET, path, params=params, headers=headers, stream=True, data=body
        )
        if raw:
            if clear_batch:
                self.clear()
            raw_response: HTTPResponse = response.raw
            return raw_response
        snapshot = self._snapshot(clear_batch)
        return self._extract_multipart(response, decode_as_stream, snapshot, options)

    def _snapshot(self, clear_batch: bool) -> MossReq:
        """The request as sent, for the extractor; the batch is emptied when asked to."""
        snapshot = self.request.model_copy()
        if clear_batch:
            self.clear()  # the snapshot keeps the list that was sent
        else:
            snapshot.moss_in = list(self.requests_list)
        return snapshot

    def _extract_multipart(
        self,
        response: requests.Response,
        decode_as_stream: bool,
        snapshot: MossReq,
        options: dict[str, Any],
    ) -> BatchResult:
        try:
            decoder = MultipartDecoder(parse_as_stream=decode_as_stream)
            parts = decoder.decode(response)
            _, meta = next(parts)
            meta_bytes = meta.read() if decode_as_stream else meta
            moss_resp = MossResp.model_validate_json(meta_bytes.decode(decoder.encoding))
            _, archive = next(parts)
            data = archive if decode_as_stream else io.BytesIO(archive)
            reply: Any = _Reply(decoder.body) if decoder.body is not None else response
        except StopIteration as err:
            response.close()
            raise MultipartDecodeError("multipart reply has fewer than two parts") from err
        except Exception:
            logger.error("Failed to decode multipart batch response", exc_info=True)
            response.close()
            raise
        return self.extractor.extract(reply, data, snapshot, moss_resp, **options)

    def __len__(self) -> int:
        return len(self.requests_list)

    def __repr__(self) -> str:
        return f"Batch(objects={len(self)}, format={self.request.output_format})"


def _open_reply(reply: Reply) -> Reply:
    """The reply itself, still open: its new owner, the extractor, reads and closes it."""
    return reply


class _Reply:
    """The reply as an extractor closes it: the few bytes left after the archive (its last
    block, the chunked coding's end, a closing multipart delimiter) are read first, so that the
    connection is kept instead of dropped. A reply abandoned early, with more than
    `_DRAIN_LIMIT` left, is closed as it is."""

    def __init__(self, reply: Reply) -> None:
        self._reply = reply

    def close(self) -> None:
        self._reply.close(_DRAIN_LIMIT)


_DRAIN_LIMIT = 1 << 20


def _validate_byte_range(start: int | None, length: int | None) -> None:
    """The server's parse-time range rules: start >= 0; length > 0 or -1; a non-zero start
    needs a length."""
    if start and start < 0:
        raise ValueError(f"Invalid byte range: start={start} must be >= 0")
    if length is not None and length < -1:
        raise ValueError(
            f"Invalid byte range: length={length} must be > 0, or -1 to read to the end"
        )
    if start and not length:
        raise ValueError(
            f"Invalid byte range: start={start} requires length > 0 or -1 "
            "(use -1 to read to the end)"
        )
