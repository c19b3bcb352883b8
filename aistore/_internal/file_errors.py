"""Exceptions of the file-like object reader.

All of them pickle with their constructor arguments (see `aistore._internal.errors`).

Example:
    >>> from aistore._internal.file_errors import ObjectFileReaderUnexpectedEOF
    >>> str(ObjectFileReaderUnexpectedEOF(10, 20))
    'Object stream ended early at byte 10; expected byte 20'
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ObjectFileReaderMaxResumeError",
    "ObjectFileReaderStreamError",
    "ObjectFileReaderUnexpectedEOF",
]


class ObjectFileReaderMaxResumeError(Exception):
    """The stream broke more often than `max_resume` allows; `original_error` is the last break."""

    def __init__(self, err: BaseException, max_retries: int) -> None:
        self.original_error = err
        self.max_retries = max_retries
        super().__init__(
            f"ObjectFileReader exceeded max number of stream resumptions: {max_retries}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.original_error, self.max_retries))


class ObjectFileReaderUnexpectedEOF(Exception):
    """The stream ended cleanly at byte `actual`, before the expected byte `expected`."""

    def __init__(self, actual: int, expected: int) -> None:
        self.actual = actual
        self.expected = expected
        super().__init__(f"Object stream ended early at byte {actual}; expected byte {expected}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.actual, self.expected))


class ObjectFileReaderStreamError(Exception):
    """The reader could not establish a stream; `original_error` says why."""

    def __init__(self, err: BaseException) -> None:
        self.original_error = err
        super().__init__("ObjectFileReader failed to establish stream connection")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.original_error,))
