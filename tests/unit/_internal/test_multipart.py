"""The streaming multipart reader: parts split at every possible read boundary."""

from __future__ import annotations

import io

import pytest
from _streams import Trickle
from hypothesis import given, settings
from hypothesis import strategies as st

from aistore._internal.multipart import MultipartError, MultipartStream, ReaderSource, boundary_of


def body(
    boundary: bytes, parts: list[tuple[dict[str, str], bytes]], preamble: bytes = b""
) -> bytes:
    out = preamble
    for headers, data in parts:
        out += b"--" + boundary + b"\r\n"
        out += b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"
        out += data + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


def parse(
    data: bytes, boundary: bytes, step: int | None = None
) -> list[tuple[dict[str, str], bytes]]:
    src = ReaderSource(Trickle(data, step) if step else io.BytesIO(data))
    mp = MultipartStream(src, boundary)
    out = []
    while (part := mp.next_part()) is not None:
        out.append((part[0], part[1].read()))
    return out


def test_getbatch_layout() -> None:
    b = b"0123456789abcdef" * 3 + b"012345678901"
    meta = b'{"out":[],"uuid":"u"}\n'
    archive = b"\0" * 5000 + b"\r\n--" + b[:10] + b"tricky" + b"\r\n"
    parts = [
        ({"content-disposition": 'form-data; name="metadata"'}, meta),
        (
            {
                "content-disposition": 'form-data; name="archive"; filename="get-batch[u]"',
                "content-type": "application/octet-stream",
            },
            archive,
        ),
    ]
    data = body(b, parts)
    for step in (None, 1, 2, 61, 62, 63, 4096):
        assert parse(data, b, step) == parts


def test_unread_part_is_skipped() -> None:
    data = body(b"B", [({}, b"x" * 100000), ({}, b"second")])
    mp = MultipartStream(ReaderSource(io.BytesIO(data)), b"B")
    mp.next_part()
    part = mp.next_part()
    assert part is not None and part[1].read() == b"second"


def test_truncated_body() -> None:
    data = body(b"B", [({}, b"x" * 1000)])
    with pytest.raises(MultipartError):
        parse(data[:500], b"B")


def test_no_opening_delimiter() -> None:
    with pytest.raises(MultipartError):
        parse(b"no multipart here", b"B")


def test_boundary_of() -> None:
    assert boundary_of("multipart/mixed; boundary=abc") == b"abc"
    assert boundary_of('multipart/mixed; boundary="abc"') == b"abc"
    with pytest.raises(MultipartError):
        boundary_of("application/x-tar")
    with pytest.raises(MultipartError):
        boundary_of("multipart/mixed")


@settings(max_examples=100, deadline=None)
@given(
    parts=st.lists(st.binary(max_size=300), min_size=1, max_size=4),
    step=st.integers(1, 100),
    preamble=st.sampled_from([b"", b"preamble text\r\n"]),
)
def test_property(parts: list[bytes], step: int, preamble: bytes) -> None:
    b = b"bndry"
    specs = [({"n": str(i)}, p) for i, p in enumerate(parts)]
    assert parse(body(b, specs, preamble), b, step) == specs
