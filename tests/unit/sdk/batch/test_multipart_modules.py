"""The official multipart module names: the streaming parser, body reader and window buffer."""

from __future__ import annotations

import random

import pytest

from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.multipart.body_stream_reader import BodyStreamReader
from aistore.sdk.batch.multipart.multipart_stream_buffer import MultipartStreamBuffer
from aistore.sdk.batch.multipart.sliding_window_buffer import SlidingWindowBuffer
from aistore.sdk.batch.multipart.stateful_streaming_parser import StatefulStreamingParser

BOUNDARY = b"frontier42"


def _document(bodies: list[bytes]) -> bytes:
    out = b"preamble\r\n"
    for i, body in enumerate(bodies):
        out += b"--" + BOUNDARY + b"\r\nX-Index: " + str(i).encode() + b"\r\n\r\n" + body + b"\r\n"
    return out + b"--" + BOUNDARY + b"--\r\n"


def _chunks(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, 40)
        out.append(data[pos : pos + n])
        pos += n
    return out


@pytest.mark.parametrize("seed", range(20))
def test_parts_survive_any_chunking(seed: int) -> None:
    rng = random.Random(seed)
    # Bodies that contain near-delimiters: the boundary without CRLF, and CRLF--.
    bodies = [
        b"",
        b"--" + BOUNDARY,
        b"\r\n--frontier4",
        bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000))),
    ]
    parser = StatefulStreamingParser(
        iter(_chunks(_document(bodies), seed)), b"--" + BOUNDARY, 1 << 16
    )
    got = []
    while (part := parser.get_next_part()) is not None:
        headers, body = part
        got.append((headers, body.read()))
    assert got == [(b"x-index: " + str(i).encode(), b) for i, b in enumerate(bodies)]


def test_unread_body_is_skipped_and_its_reader_ends() -> None:
    parser = StatefulStreamingParser(iter([_document([b"a" * 5000, b"b"])]), BOUNDARY, 1024)
    first = parser.get_next_part()
    assert first is not None
    assert first[1].read(10) == b"a" * 10
    second = parser.get_next_part()
    assert second is not None and second[1].read() == b"b"
    assert first[1].read() == b""  # the stream moved on
    assert parser.get_next_part() is None


def test_truncated_body_is_a_decode_error() -> None:
    doc = _document([b"x" * 100])[:-30]
    parser = StatefulStreamingParser(iter([doc]), BOUNDARY, 1024)
    part = parser.get_next_part()
    assert part is not None
    with pytest.raises(MultipartDecodeError):
        part[1].read()


def test_body_reader_is_a_binary_file() -> None:
    buf = MultipartStreamBuffer(iter([_document([b"0123456789"])]), BOUNDARY, 1024)
    assert buf.next_part() is not None
    reader = BodyStreamReader(buf)
    target = bytearray(4)
    assert reader.readable() and reader.readinto(target) == 4 and target == b"0123"
    assert reader.read() == b"456789"
    assert buf.next_part() is None and buf.is_exhausted()


def test_sliding_window_keeps_the_overlap() -> None:
    w = SlidingWindowBuffer(max_size=10, boundary_size=3)
    w.append(b"abcdefgh--")
    w.append(b"Bxyz")  # slides: keeps at least the 3 bytes before the new data
    assert w.find(b"--B") >= 0
    assert len(w) == 10 and w.total_processed == 4
    w.append_no_slide(b"  \r\n")
    assert w.consume(6) == b"efgh--" and w.find_relative(b"z", 1) == 2
    assert w.skip_leading_whitespace() == 0
    w.discard(4)
    assert w.skip_leading_whitespace() == 4 and len(w) == 0
