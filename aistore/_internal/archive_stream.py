"""Reading tar and zip archives as they stream in, member by member, with bounded memory.

libarchive does the parsing, in the native extension (`csrc/archive_reader.h`): tar (ustar,
pax, GNU long names) and zip from its local headers (stored or deflated, data descriptors), each
plain or inside gzip, lz4 or zstd, recognized by their first bytes. It pulls the stream through
`readinto` into one buffer and copies each regular file once, into the `bytes` handed out,
with the GIL released while it parses, decompresses and copies large members. Memory: the read
buffer, libarchive's read-ahead, and the member being handed out.

    source (readinto) ─► _native.ArchiveReader (libarchive) ─► Member per regular file

A reply of the native HTTP client (`NativeReply`) is read in C++ from its connection, with no
Python call per block; its failures raise the native exceptions (`_native.HttpError` and
subclasses), which `aistore._internal.error_map.map_errors` translates.

Errors: `ArchiveFormatError` (not an archive, or damaged) and its subclass
`TruncatedArchiveError` (cut inside a header or member, or a tar without its end-of-archive
blocks), each naming the archive (`label`) and the member; an exception raised by the source
propagates unchanged.

Example:
    >>> import io, tarfile
    >>> bio = io.BytesIO()
    >>> with tarfile.open(fileobj=bio, mode="w") as t:
    ...     info = tarfile.TarInfo("a.txt"); info.size = 2
    ...     t.addfile(info, io.BytesIO(b"hi"))
    >>> [(m.name, m.data) for m in read_archive(bio.getvalue())]
    [('a.txt', b'hi')]
"""

from __future__ import annotations

import io
from typing import Any

from aistore._internal.body import NativeReply
from aistore._internal.byte_stream import ReaderSource
from aistore._native import (
    ArchiveFormatError,
    ArchiveReader,
    TruncatedArchiveError,
)
from aistore._native import (
    ArchiveMember as Member,
)

__all__ = [
    "DEFAULT_READ_BUFFER",
    "ArchiveFormatError",
    "Member",
    "TruncatedArchiveError",
    "read_archive",
]

DEFAULT_READ_BUFFER = 256 << 10
"""Bytes asked of the source per read: a socket-backed reader returns once it has this much, so
the first members are handed out before the rest arrives."""


def read_archive(
    source: Any, label: str = "archive", buffer_size: int = DEFAULT_READ_BUFFER
) -> ArchiveReader:
    """An iterator of the regular files of the archive stream `source`, in order, as `Member`s
    (`.name` decoded on first use, `.raw_name`, `.data`), read forward once.

    `source` is bytes, or anything with `readinto` (or `read`); `label` names the archive in
    error messages.

    Raises:
        ArchiveFormatError: (while iterating) not a supported archive, or a damaged one.
        TruncatedArchiveError: (while iterating) the archive is cut short.
    """
    if isinstance(source, NativeReply):
        source = source.stream  # read by the archive reader in C++
    elif isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(source)
    elif not hasattr(source, "readinto"):
        source = ReaderSource(source)
    return ArchiveReader(source, label=label, buffer_size=buffer_size)
