"""Exceptions of the file-like object reader, under their official module.

Defined in `aistore._internal.file_errors` (the resumable stream below the SDK raises them);
all of them pickle with their constructor arguments.

Example:
    >>> from aistore.sdk.obj.obj_file.errors import ObjectFileReaderUnexpectedEOF
    >>> str(ObjectFileReaderUnexpectedEOF(10, 20))
    'Object stream ended early at byte 10; expected byte 20'
"""

from __future__ import annotations

from aistore._internal.file_errors import (
    ObjectFileReaderMaxResumeError,
    ObjectFileReaderStreamError,
    ObjectFileReaderUnexpectedEOF,
)

for _cls in (
    ObjectFileReaderMaxResumeError,
    ObjectFileReaderStreamError,
    ObjectFileReaderUnexpectedEOF,
):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "ObjectFileReaderMaxResumeError",
    "ObjectFileReaderStreamError",
    "ObjectFileReaderUnexpectedEOF",
]
