"""Splitting a multipart GetBatch reply into its parts (metadata JSON, then the archive).

Example:
    >>> decoder = MultipartDecoder(parse_as_stream=True)
    >>> decoder.parse_as_stream
    True
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

from aistore._internal.body import BodyReader
from aistore._internal.multipart import (
    MultipartError,
    MultipartStream,
    PartReader,
    ReaderSource,
    boundary_of,
)
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.multipart.body_stream_reader import BodyStreamReader as BodyStreamReader
from aistore.sdk.batch.multipart.stateful_streaming_parser import (
    StatefulStreamingParser as StatefulStreamingParser,
)
from aistore.sdk.const import DEFAULT_CHUNK_SIZE as DEFAULT_CHUNK_SIZE
from aistore.sdk.const import DEFAULT_MAX_BUFFER_SIZE as DEFAULT_MAX_BUFFER_SIZE
from aistore.sdk.const import HEADER_CONTENT_TYPE
from aistore.sdk.const import HTTP_BOUNDARY_REGEX as HTTP_BOUNDARY_REGEX
from aistore.sdk.const import MULTIPART_MARKER as MULTIPART_MARKER
from aistore.sdk.const import UNIX_LINE_END as UNIX_LINE_END
from aistore.sdk.const import UTF_ENCODING as UTF_ENCODING
from aistore.sdk.const import WIN_LINE_END as WIN_LINE_END
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["MultipartDecoder"]

# Module logger, as in the official SDK (configure it through `logging`).
logger = logging.getLogger(__name__)


class MultipartDecoder:
    """Yields `(headers, body)` per part of a `multipart/...` response, in order.

    With `parse_as_stream` each body is a reader (`read()`, `readinto()`) over the live
    response; otherwise the whole reply is read first and bodies are `bytes`.

    Example:
        >>> parts = MultipartDecoder(parse_as_stream=True).decode(response)  # doctest: +SKIP
        >>> headers, body = next(parts)  # doctest: +SKIP
    """

    def __init__(self, parse_as_stream: bool = False, encoding: str = "utf-8") -> None:
        self.parse_as_stream = parse_as_stream
        self.encoding = encoding
        self.body: BodyReader | None = None  # the live body being decoded (stream mode)

    def decode(self, response: Any) -> Iterator[tuple[dict[str, str], Any]]:
        """The parts of `response` (a `requests.Response`).

        Raises:
            MultipartDecodeError: not multipart, or malformed.
        """
        try:
            boundary = boundary_of(response.headers.get(HEADER_CONTENT_TYPE, ""))
        except MultipartError as err:
            raise MultipartDecodeError(str(err)) from err
        source: Any
        if self.parse_as_stream:
            source = self.body = BodyReader(response)
        else:
            source = io.BytesIO(BodyReader(response).read_all())
        return self._parts(MultipartStream(ReaderSource(source), boundary))

    def _parts(self, stream: MultipartStream) -> Iterator[tuple[dict[str, str], Any]]:
        while True:
            try:
                part = stream.next_part()
            except MultipartError as err:
                raise MultipartDecodeError(str(err)) from err
            if part is None:
                return
            headers, body = part
            yield headers, (body if self.parse_as_stream else _read_part(body))


def _read_part(body: PartReader) -> bytes:
    try:
        return body.read()
    except MultipartError as err:
        raise MultipartDecodeError(str(err)) from err
