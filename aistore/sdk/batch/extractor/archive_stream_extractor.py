"""The base of the Batch API's archive extractors: pairing archive members with items.

Example:
    >>> from aistore.sdk.batch.extractor.tar_stream_extractor import TarStreamExtractor
    >>> isinstance(TarStreamExtractor(), ArchiveStreamExtractor)
    True
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from aistore._internal.archive_stream import (
    DEFAULT_READ_BUFFER,
    ArchiveFormatError,
    read_archive,
)
from aistore._internal.error_map import translate
from aistore._internal.multipart import MultipartError
from aistore.sdk.batch.types import MossOut, MossReq, MossResp, decode_opaque, trusted
from aistore.sdk.const import GB_MISSING_FILES_DIR
from aistore.sdk.utils import get_logger as get_logger

__all__ = ["ArchiveStreamExtractor"]

logger = logging.getLogger(__name__)

# What a streaming reply's MossOut says about a placeholder (the stream has no details).
_FAILED_ENTRY = "Batch entry failed on the server"
# The fields set of every MossOut built here: all of them, so pydantic never adds to it and
# one set serves every item.
_OUT_FIELDS = set(MossOut.model_fields)


class ArchiveStreamExtractor:
    """Reads a GetBatch archive as it streams and yields `(MossOut, bytes)` per item, in order.

    The archive is read by libarchive (`aistore._internal.archive_stream`), which recognizes
    the format and compression by the first bytes. The i-th regular file of the archive belongs
    to the i-th item. With a multipart reply the `MossOut`s are the server's; with a streaming
    reply they are built from the request (sizes from the bytes, `err_msg` only for the
    server's `__404__/` placeholders).

    Example:
        >>> from aistore.sdk.batch.extractor.extractor_registry import get_extractor
        >>> for info, data in get_extractor(".tar").extract(resp, body, req):  # doctest: +SKIP
        ...     print(info.obj_name, len(data))
    """

    _supported_fmts: tuple[str, ...] = ()
    _archive_type = ""

    def _read_buffer(self, **options: Any) -> int:
        """The read buffer the options ask for (bytes).

        Raises:
            ValueError: a bad value.
        """
        return DEFAULT_READ_BUFFER

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
            label = f"GetBatch {self._archive_type} reply"
            members = read_archive(data_stream, label, self._read_buffer(**options))
            while True:
                try:
                    member = next(members, None)
                except OSError as err:  # a native reply's transport errors (see error_map)
                    mapped = translate(err, "read")
                    if mapped is err:
                        raise
                    raise mapped from err
                if member is None:
                    break
                if index >= count:
                    raise RuntimeError(
                        f"missing batch metadata for archive member {index} "
                        f"(metadata length={count})"
                    )
                data = member.data
                if moss_resp is not None:
                    out = moss_resp.out[index]
                else:
                    # A name is decoded only where it matters: a placeholder is empty.
                    name = None if data else member.name
                    out = self._streamed_out(moss_req, index, name, len(data))
                index += 1
                yield out, data
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
        return self._streamed_out(moss_req, index, member_name, content_length)

    @staticmethod
    def _streamed_out(moss_req: MossReq, index: int, name: str | None, size: int) -> MossOut:
        """The `MossOut` of item `index` of a streaming reply, whose member is `size` bytes
        named `name` (needed only for an empty member: it may be a missing item's
        placeholder)."""
        mi = moss_req.moss_in[index]
        err = None
        if not size and name is not None:
            item = mi.obj_name if moss_req.only_obj_name else f"{mi.bck or ''}/{mi.obj_name}"
            missing = f"{GB_MISSING_FILES_DIR}/{item}"
            arch = mi.archpath
            # A missing shard is named without the archpath, a missing file inside it with.
            if name == missing or (
                arch and name in (f"{missing}/{arch}", missing + arch if arch[0] == "/" else "")
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
                "size": size,
            },
            _OUT_FIELDS,
        )
