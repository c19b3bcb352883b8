"""`read_archive` (libarchive through the native extension) against archives written by
`tarfile`, `zipfile` and by hand: every tar dialect, long names, empty and huge members,
directories, compression, damage, reads cut at every possible point, and the sources it takes.
tests/unit/test_native_archive_reader.py covers the reader itself in more depth."""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zipfile

import pytest
from _streams import ARCHIVE_FILES, Trickle, make_tar
from hypothesis import example, given, settings
from hypothesis import strategies as st

from aistore._internal.archive_stream import (
    ArchiveFormatError,
    TruncatedArchiveError,
    read_archive,
)

FILES = ARCHIVE_FILES


def tar_files(
    data: bytes, step: int | None = None, buffer_size: int = 4 << 20
) -> list[tuple[str, bytes]]:
    src = Trickle(data, step) if step else io.BytesIO(data)
    return [(m.name, m.data) for m in read_archive(src, buffer_size=buffer_size)]


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_tar_dialects(fmt: int) -> None:
    files = FILES if fmt != tarfile.USTAR_FORMAT else [f for f in FILES if len(f[0]) <= 100]
    assert tar_files(make_tar(fmt, files)) == files


def test_tar_reads_cut_anywhere_and_small_buffers() -> None:
    data = make_tar(tarfile.PAX_FORMAT)
    for step in (1, 7, 511, 512, 513, 4096):
        assert tar_files(data, step=step, buffer_size=1024) == FILES


def test_sources_bytes_readinto_and_read_only() -> None:
    data = make_tar(tarfile.GNU_FORMAT)

    class ReadOnly:
        def __init__(self) -> None:
            self._b = io.BytesIO(data)

        def read(self, n: int) -> bytes:
            return self._b.read(min(n, 999))

    for source in (data, bytearray(data), memoryview(data), io.BytesIO(data), ReadOnly()):
        assert [(m.name, m.data) for m in read_archive(source)] == FILES


def test_names_are_decoded_on_first_use() -> None:
    members = list(read_archive(make_tar(tarfile.GNU_FORMAT)))
    assert [m.raw_name for m in members] == [n.encode() for n, _ in FILES]
    assert members[4].name == FILES[4][0]


def test_tar_gzip() -> None:
    data = gzip.compress(make_tar(tarfile.GNU_FORMAT))
    assert [(m.name, m.data) for m in read_archive(Trickle(data, 1000))] == FILES


def test_concatenated_gzip_members() -> None:
    tar = make_tar(tarfile.GNU_FORMAT)
    data = gzip.compress(tar[:10000]) + gzip.compress(tar[10000:])
    assert [m.data for m in read_archive(data)] == [d for _, d in FILES]


def test_truncated_tar_is_an_error() -> None:
    data = make_tar(tarfile.GNU_FORMAT, others=False)
    # Without the end-of-archive blocks (a stream the server cut short).
    end = len(data)
    while data[end - 512 : end] == bytes(512):
        end -= 512
    with pytest.raises(TruncatedArchiveError):
        tar_files(data[:end])
    for cut in (100, 600, end - 1000):
        with pytest.raises(TruncatedArchiveError):
            tar_files(data[:cut])


def test_truncated_gzip_is_an_error() -> None:
    data = gzip.compress(make_tar(tarfile.GNU_FORMAT))
    with pytest.raises(TruncatedArchiveError, match="^shard s.tgz: "):
        list(read_archive(data[:-100], "shard s.tgz"))


def test_not_a_tar() -> None:
    with pytest.raises(ArchiveFormatError):
        tar_files(b"x" * 2048)


def make_zip(method: int, files: list[tuple[str, bytes]] = FILES, stream: bool = False) -> bytes:
    bio = io.BytesIO()
    # A non-seekable target makes zipfile write data descriptors (flag 0x08).
    target = _Unseekable(bio) if stream else bio
    with zipfile.ZipFile(target, "w", method) as z:  # type: ignore[arg-type]
        z.writestr(zipfile.ZipInfo("dir/"), b"")
        for name, data in files:
            z.writestr(name, data)
    return bio.getvalue()


class _Unseekable(io.RawIOBase):
    def __init__(self, inner: io.BytesIO) -> None:
        self._inner = inner

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        return self._inner.write(b)

    def seekable(self) -> bool:
        return False


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zip_members(method: int) -> None:
    data = make_zip(method)
    for step in (None, 3, 1000):
        src = Trickle(data, step) if step else io.BytesIO(data)
        assert [(m.name, m.data) for m in read_archive(src, buffer_size=4096)] == FILES


def test_zip_deflated_with_data_descriptors() -> None:
    data = make_zip(zipfile.ZIP_DEFLATED, stream=True)
    assert [(m.name, m.data) for m in read_archive(data)] == FILES


def test_zip_stored_with_sizes_and_descriptor_like_libarchive() -> None:
    # libarchive (the server) writes sizes in the local header and a descriptor with the CRC.
    import zlib

    out = io.BytesIO()
    central = []
    for name, data in FILES:
        off = out.tell()
        nb = name.encode()
        out.write(
            struct.pack(
                "<4sHHHHHIIIHH",
                b"PK\x03\x04",
                20,
                0x08,
                0,
                0,
                0,
                0,
                len(data),
                len(data),
                len(nb),
                0,
            )
        )
        out.write(nb + data)
        crc = zlib.crc32(data)
        out.write(struct.pack("<4sIII", b"PK\x07\x08", crc, len(data), len(data)))
        central.append((nb, crc, len(data), off))
    out.write(b"PK\x01\x02" + b"\0" * 42)  # where a reader stops
    assert [(m.name, m.data) for m in read_archive(out.getvalue())] == FILES


def test_zip_crc_mismatch() -> None:
    data = bytearray(make_zip(zipfile.ZIP_STORED, [("a", b"abcdef")]))
    data[data.index(b"abcdef")] ^= 1
    with pytest.raises(ArchiveFormatError, match="CRC"):
        list(read_archive(bytes(data)))


def test_truncated_zip() -> None:
    data = make_zip(zipfile.ZIP_STORED)
    with pytest.raises(TruncatedArchiveError):
        list(read_archive(data[:2000]))


@settings(max_examples=60, deadline=None)
@given(
    files=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=200).filter(
                lambda s: "\0" not in s and not s.endswith("/")
            ),
            st.binary(max_size=3000),
        ),
        max_size=12,
    ),
    fmt=st.sampled_from([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
    step=st.integers(1, 2000),
)
@example(files=[("\u00e9t\u00e9\n", b"")], fmt=tarfile.PAX_FORMAT, step=1)  # PAX path ends in \\n
def test_tar_roundtrip_property(files: list[tuple[str, bytes]], fmt: int, step: int) -> None:
    data = make_tar(fmt, files, others=False)
    got = tar_files(data, step=step, buffer_size=1024)
    assert [d for _, d in got] == [d for _, d in files]
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        assert [n for n, _ in got] == t.getnames()
