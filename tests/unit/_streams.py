"""Helpers shared by the unit tests of stream readers (archives, multipart, byte buffers)."""

from __future__ import annotations

import io
import tarfile

# Archive members that exercise every tar dialect: an empty file, names past 100 bytes with
# and without a slash, non-ASCII names, and a member larger than one read.
ARCHIVE_FILES = [
    ("a.txt", b"hello"),
    ("empty", b""),
    ("dir/" + "n" * 150 + ".bin", bytes(range(256)) * 7),
    ("x" * 120, b"long name without a slash"),
    ("\u00e9t\u00e9/\u0444\u0430\u0439\u043b", b"utf-8 name"),
    ("big", b"\xab" * (600 * 1024)),
]


class Trickle:
    """A file-like whose reads return at most `step` bytes (cuts headers anywhere)."""

    def __init__(self, data: bytes, step: int) -> None:
        self._b = io.BytesIO(data)
        self._step = step

    def readinto(self, buf: memoryview) -> int:
        return self._b.readinto(buf[: self._step])


def make_tar(
    fmt: int, files: list[tuple[str, bytes]] = ARCHIVE_FILES, others: bool = True
) -> bytes:
    """A tar of `files`; `others` adds a directory, a symlink and a hard link around them."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt) as t:
        if others:
            d = tarfile.TarInfo("dir")
            d.type = tarfile.DIRTYPE
            t.addfile(d)
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        if others:
            for kind, name in ((tarfile.SYMTYPE, "sym"), (tarfile.LNKTYPE, "hard")):
                link = tarfile.TarInfo(name)
                link.type = kind
                link.linkname = "a.txt"
                t.addfile(link)
    return bio.getvalue()
