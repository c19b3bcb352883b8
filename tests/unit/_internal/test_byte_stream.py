"""StreamBuffer over a ByteSource: look-ahead across reads of any size, growth for a large
request, and its buffer handed to the next StreamBuffer once released."""

from __future__ import annotations

import io

from _streams import Trickle

from aistore._internal import byte_stream
from aistore._internal.byte_stream import ReaderSource, StreamBuffer


def test_ensure_take_skip_across_small_reads() -> None:
    data = bytes(range(256)) * 20
    b = StreamBuffer(Trickle(data, 7), 1024)
    assert b.ensure(300) and b.take(300) == data[:300]
    assert b.skip(1000)
    assert b.ensure(3000) and b.take(3000) == data[1300:4300]  # more than the buffer: it grows
    assert not b.ensure(len(data))
    assert b.take(b.available) == data[4300:]
    assert b.at_eof()


def test_read_only_file_objects() -> None:
    class ReadOnly:
        def __init__(self) -> None:
            self._b = io.BytesIO(b"abcdef")

        def read(self, n: int) -> bytes:
            return self._b.read(min(n, 2))

    b = StreamBuffer(ReaderSource(ReadOnly()), 1024)
    assert b.ensure(6) and b.take(6) == b"abcdef"


def test_buffers_are_reused_once_released() -> None:
    """A released StreamBuffer hands its buffer to the next one: no new multi-MiB buffer per
    reply. Bytes already taken are copies, so they stay intact."""
    size = 1 << 20
    byte_stream._POOL.pop(size, None)
    first = StreamBuffer(ReaderSource(io.BytesIO(b"x" * 100)), size)
    buf = first.buf
    assert first.ensure(100)
    taken = first.take(100)
    first.release()
    assert byte_stream._POOL[size] == [buf]
    second = StreamBuffer(ReaderSource(io.BytesIO(b"y" * 100)), size)
    assert second.buf is buf and byte_stream._POOL[size] == []
    assert second.ensure(100) and second.take(100) == b"y" * 100
    second.release()
    assert taken == b"x" * 100
    assert byte_stream._POOL[size] == [buf]
