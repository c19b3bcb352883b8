"""The base of the Batch API's archive extractors: pairing archive members with items.

Example:
    >>> from aistore.sdk.batch.extractor.tar_stream_extractor import TarStreamExtractor
    >>> isinstance(TarStreamExtractor(), ArchiveStreamExtractor)
    True
"""

from __future__ import annotations

import io
import logging
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator
from typing import Any

from aistore._internal.archive_stream import (
    ArchiveFormatError,
    ByteSource,
    Member,
    ReaderSource,
)
from aistore._internal.multipart import MultipartError
from aistore.sdk.batch.types import MossOut, MossReq, MossResp, decode_opaque, trusted
from aistore.sdk.const import GB_MISSING_FILES_DIR

__all__ = ["ArchiveStreamExtractor"]

logger = logging.getLogger(__name__)

# What a streaming reply's MossOut says about a placeholder (the stream has no details).
_FAILED_ENTRY = "Batch entry failed on the server"


def as_source(data_stream: Any) -> ByteSource:
    """A `ByteSource` over bytes, a file-like object, or something that already is one."""
    if isinstance(data_stream, (bytes, bytearray, memoryview)):
        return ReaderSource(io.BytesIO(data_stream))
    return ReaderSource(data_stream)


class ArchiveStreamExtractor(ABC):
    """Reads a GetBatch archive as it streams and yields `(MossOut, bytes)` per item, in order.

    The i-th regular file of the archive belongs to the i-th item. With a multipart reply the
    `MossOut`s are the server's; with a streaming reply they are built from the request (sizes
    from the bytes, `err_msg` only for the server's `__404__/` placeholders).

    Example:
        >>> from aistore.sdk.batch.extractor.extractor_registry import get_extractor
        >>> for info, data in get_extractor(".tar").extract(resp, body, req):  # doctest: +SKIP
        ...     print(info.obj_name, len(data))
    """

    _supported_fmts: tuple[str, ...] = ()
    _archive_type = ""

    @abstractmethod
    def _members(self, source: ByteSource, moss_req: MossReq, **options: Any) -> Iterator[Member]:
        """The archive's regular files, in order."""

    def get_supported_formats(self) -> tuple[str, ...]:
        """The output formats (extensions) this extractor reads."""
        return self._supported_fmts

    def extract(
        self,
        response: Any,
        data_stream: Any,
        moss_req: MossReq,
        moss_resp: MossResp | None = None,
        **options: Any,
    ) -> Generator[tuple[MossOut, bytes], None, None]:
        """Yield `(MossOut, content)` per item; closes `response` when done or abandoned.

        Raises:
            RuntimeError: the archive is damaged, cut short, or has more or fewer files than
                the request has items.
        """
        items = moss_resp.out if moss_resp is not None else moss_req.moss_in
        count = len(items)
        index = 0
        try:
            source = as_source(data_stream)
            for member in self._members(source, moss_req, **options):
                if index >= count:
                    raise RuntimeError(
                        f"missing batch metadata for archive member {index} "
                        f"(metadata length={count})"
                    )
                if moss_resp is not None:
                    out = moss_resp.out[index]
                else:
                    out = self._streamed_out(moss_req, index, member)
                index += 1
                yield out, member.data
            if index != count:
                raise RuntimeError(
                    f"the batch archive holds {index} files for {count} requested items"
                )
        except (ArchiveFormatError, MultipartError) as err:
            logger.error("Failed to read %s archive: %s", self._archive_type, err)
            raise RuntimeError(
                f"Failed to read {self._archive_type} archive stream "
                f"(after {index} of {count} items): {err}"
            ) from err
        finally:
            response.close()

    def _get_moss_out(
        self,
        index: int,
        content_length: int,
        moss_req: MossReq,
        moss_resp: MossResp | None = None,
        *,
        member_name: str | None = None,
    ) -> MossOut:
        """The `MossOut` of item `index` (the server's, or one built from the request)."""
        metadata: list[Any] = list(moss_resp.out if moss_resp is not None else moss_req.moss_in)
        if index >= len(metadata):
            raise RuntimeError(
                f"missing batch metadata for archive member {index} "
                f"(metadata length={len(metadata)})"
            )
        if moss_resp is not None:
            out: MossOut = moss_resp.out[index]
            return out
        return self._streamed_out(moss_req, index, Member(member_name, b"\0" * content_length))

    @staticmethod
    def _streamed_out(moss_req: MossReq, index: int, member: Member) -> MossOut:
        mi = moss_req.moss_in[index]
        err = None
        if not member.data and member.name is not None:
            name = mi.obj_name if moss_req.only_obj_name else f"{mi.bck or ''}/{mi.obj_name}"
            missing = f"{GB_MISSING_FILES_DIR}/{name}"
            arch = mi.archpath
            # A missing shard is named without the archpath, a missing file inside it with.
            if member.name == missing or (
                arch
                and member.name in (f"{missing}/{arch}", missing + arch if arch[0] == "/" else "")
            ):
                err = _FAILED_ENTRY
        return trusted(
            MossOut,
            {
                "obj_name": mi.obj_name,
                "archpath": mi.archpath or "",
                "bucket": mi.bck or "",
                "provider": mi.provider or "",
                "opaque": decode_opaque(mi.opaque) if mi.opaque else None,
                "err_msg": err,
                "size": len(member.data),
            },
        )
