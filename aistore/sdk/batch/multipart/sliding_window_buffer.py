"""A bounded byte window for scanning a stream for a pattern.

Example:
    >>> w = SlidingWindowBuffer(max_size=16, boundary_size=4)
    >>> w.append(b"abc--B--def")
    >>> w.find(b"--B"), w.consume(3), len(w)
    (3, b'abc', 8)
"""

from __future__ import annotations

from aistore.sdk.const import WHITESPACE_CHARS as WHITESPACE_CHARS

__all__ = ["SlidingWindowBuffer"]

_WHITESPACE = b" \t\r\n"


class SlidingWindowBuffer:
    """Bytes of a stream that have not been consumed yet, at most `max_size` of them.

    `append` slides the window when it would grow past `max_size`: the oldest bytes are
    dropped, keeping at least `boundary_size` bytes of what was there before the new data,
    so a pattern of up to `boundary_size + 1` bytes cut between two appends is still found.
    `append_no_slide` never drops bytes (the window grows). Positions are relative to the
    first unconsumed byte. Not thread-safe.

    Example:
        >>> w = SlidingWindowBuffer(max_size=8, boundary_size=2)
        >>> w.append(b"01234")
        >>> w.append(b"56789")
        >>> w.get_data_bytes(), w.total_processed
        (b'23456789', 2)

    Args:
        max_size: bytes kept before sliding.
        boundary_size: bytes of overlap a slide keeps from the earlier data.
    """

    def __init__(self, max_size: int, boundary_size: int) -> None:
        if max_size <= 0 or boundary_size < 0:
            raise ValueError("max_size must be positive and boundary_size not negative")
        self.max_size = max_size
        self.boundary_size = boundary_size
        self._data = bytearray()
        self.total_processed = 0  # bytes consumed, discarded or slid out so far

    def append(self, data: bytes) -> None:
        """Add `data`, dropping the oldest bytes beyond `max_size` (see the class)."""
        overflow = len(self._data) + len(data) - self.max_size
        if overflow > 0:
            keep_old = max(self.boundary_size, self.max_size - len(data))
            drop = min(overflow, max(len(self._data) - keep_old, 0))
            self.discard(drop)
        self._data += data

    def append_no_slide(self, data: bytes) -> None:
        """Add `data` without dropping anything."""
        self._data += data

    def find(self, pattern: bytes, start: int = 0) -> int:
        """Position of `pattern` at or after `start`, or -1."""
        return self._data.find(pattern, start)

    def find_relative(self, pattern: bytes, start: int = 0) -> int:
        """Position of `pattern` counted from `start`, or -1."""
        pos = self._data.find(pattern, start)
        return pos - start if pos >= 0 else -1

    def get_data_bytes(self, start: int = 0, end: int | None = None) -> bytes:
        """A copy of the bytes in `[start, end)`."""
        return bytes(self._data[start:end])

    def consume(self, length: int) -> bytes:
        """Remove and return the first `length` bytes (fewer if the window holds fewer)."""
        out = bytes(self._data[:length])
        self.discard(length)
        return out

    def discard(self, length: int) -> None:
        """Drop the first `length` bytes."""
        n = min(max(length, 0), len(self._data))
        del self._data[:n]
        self.total_processed += n

    def skip_leading_whitespace(self) -> int:
        """Drop leading spaces, tabs, CRs and LFs; returns how many."""
        n = len(self._data) - len(self._data.lstrip(_WHITESPACE))
        self.discard(n)
        return n

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop everything (not counted as processed)."""
        self._data.clear()
