"""aistore._native.ArchiveReader (libarchive) against archives written by `tarfile`, `zipfile`,
by hand and by the lz4/zstd tools: every tar dialect, long and undecodable names, non-regular
entries, zip with and without data descriptors, compression filters, reads cut anywhere,
archives cut at every block, garbage, a source that raises, and memory that stays at one member
however long the stream."""

from __future__ import annotations

import gzip
import io
import pickle
import shutil
import struct
import subprocess
import sys
import tarfile
import textwrap
import zipfile
import zlib
from typing import Any

import pytest
from _streams import ARCHIVE_FILES, Trickle, make_tar

from aistore._native import (
    ArchiveFormatError,
    ArchiveMember,
    ArchiveReader,
    TruncatedArchiveError,
)

FILES = ARCHIVE_FILES


def read(data: bytes, step: int | None = None, **kw: Any) -> list[tuple[str, bytes]]:
    src = Trickle(data, step) if step else io.BytesIO(data)
    return [(m.name, m.data) for m in ArchiveReader(src, **kw)]


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_tar_dialects_regular_files_only(fmt: int) -> None:
    files = FILES if fmt != tarfile.USTAR_FORMAT else [f for f in FILES if len(f[0]) <= 100]
    assert read(make_tar(fmt, files)) == files


def test_pax_long_name_and_gnu_long_name() -> None:
    long = "deep/" * 60 + "name.jpg"  # 308 bytes: a pax `path` record, or a GNU 'L' header
    for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        data = make_tar(fmt, [(long, b"jpg"), ("short", b"s")], others=False)
        assert (b"path=" in data) == (fmt == tarfile.PAX_FORMAT)
        assert (b"././@LongLink" in data) == (fmt == tarfile.GNU_FORMAT)
        assert read(data) == [(long, b"jpg"), ("short", b"s")]


def test_names_are_raw_bytes_decoded_on_use() -> None:
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as t:
        info = tarfile.TarInfo("caf\u00e9")  # stored as the single byte 0xe9: not UTF-8
        info.size = 1
        t.addfile(info, io.BytesIO(b"c"))
    (m,) = ArchiveReader(io.BytesIO(bio.getvalue()))
    assert m.raw_name == b"caf\xe9"
    assert m.name == "caf\udce9" and m.name.encode("utf-8", "surrogateescape") == m.raw_name
    assert m.name is m.name  # decoded once
    assert repr(m) == "ArchiveMember(raw_name=b'caf\\xe9', size=1)"


def test_member_is_constructible() -> None:
    m = ArchiveMember(b"a/b", b"data")
    assert (m.name, m.raw_name, m.data) == ("a/b", b"a/b", b"data")


@pytest.mark.parametrize("step", [1, 7, 511, 512, 513, 4096])
def test_reads_cut_anywhere(step: int) -> None:
    assert read(make_tar(tarfile.PAX_FORMAT), step=step) == FILES


def test_small_and_large_read_buffers() -> None:
    data = make_tar(tarfile.GNU_FORMAT)
    for size in (1, 4096, 1 << 20):
        assert read(data, buffer_size=size) == FILES


def test_tgz_and_concatenated_gzip_members() -> None:
    tar = make_tar(tarfile.GNU_FORMAT)
    assert read(gzip.compress(tar), step=1000) == FILES
    assert read(gzip.compress(tar[:10000]) + gzip.compress(tar[10000:])) == FILES


@pytest.mark.parametrize("tool", ["lz4", "zstd"])
def test_tar_lz4_and_zstd(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool} command to write the archive")
    tar = make_tar(tarfile.PAX_FORMAT)
    data = subprocess.run([tool, "-c", "-q"], input=tar, capture_output=True, check=True).stdout
    assert read(data, step=3000) == FILES
    with pytest.raises(TruncatedArchiveError):
        read(data[: len(data) // 2])


class _Unseekable(io.RawIOBase):
    def __init__(self, inner: io.BytesIO) -> None:
        self._inner = inner

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        return self._inner.write(b)

    def seekable(self) -> bool:
        return False


def make_zip(method: int, files: list[tuple[str, bytes]] = FILES, stream: bool = False) -> bytes:
    """A zip of `files` after a directory entry; `stream` writes to a non-seekable target, so
    that every member has a data descriptor and no sizes in its local header."""
    bio = io.BytesIO()
    target = _Unseekable(bio) if stream else bio
    with zipfile.ZipFile(target, "w", method) as z:
        z.writestr(zipfile.ZipInfo("dir/"), b"")
        for name, data in files:
            z.writestr(name, data)
    data = bio.getvalue()
    assert (struct.unpack_from("<H", data, 6)[0] & 0x08 != 0) == stream
    return data


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("stream", [False, True], ids=["sizes", "descriptors"])
def test_zip_stored_and_deflated(method: int, stream: bool) -> None:
    data = make_zip(method, stream=stream)
    for step in (None, 3, 1000):
        assert read(data, step=step) == FILES


def test_zip_stored_with_sizes_and_descriptor_as_libarchive_writes() -> None:
    out = io.BytesIO()
    for name, data in FILES:
        nb = name.encode()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0x08, 0, 0, 0, 0,
                              len(data), len(data), len(nb), 0))  # fmt: skip
        out.write(nb + data)
        out.write(struct.pack("<4sIII", b"PK\x07\x08", zlib.crc32(data), len(data), len(data)))
    out.write(b"PK\x01\x02" + b"\0" * 42)  # where a streaming reader stops
    assert read(out.getvalue()) == FILES


def test_zip_crc_mismatch() -> None:
    data = bytearray(make_zip(zipfile.ZIP_STORED, [("a", b"abcdef")]))
    data[data.index(b"abcdef")] ^= 1
    with pytest.raises(ArchiveFormatError, match="CRC") as err:
        read(bytes(data))
    assert not isinstance(err.value, TruncatedArchiveError)


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_tar_cut_at_every_block_is_truncated(fmt: int) -> None:
    files = [f for f in FILES if fmt != tarfile.USTAR_FORMAT or len(f[0]) <= 100]
    data = make_tar(fmt, files, others=False)
    end = len(data)
    while data[end - 512 : end] == bytes(512):  # the end-of-archive blocks and padding
        end -= 512
    for cut in range(0, end + 1, 512):
        with pytest.raises(TruncatedArchiveError):
            read(data[:cut])
    assert read(data[: end + 512]) == files  # one zero block is an end marker too


def test_cut_inside_blocks_and_compressed_streams_is_truncated() -> None:
    tar = make_tar(tarfile.PAX_FORMAT, others=False)
    for cut in (100, 600, 5000, len(tar) // 2):
        with pytest.raises(TruncatedArchiveError):
            read(tar[:cut])
    tgz = gzip.compress(tar)
    for cut in range(20, len(tgz), max(1, len(tgz) // 50)):
        with pytest.raises(TruncatedArchiveError):
            read(tgz[:cut])
    for stream in (False, True):
        zipped = make_zip(zipfile.ZIP_DEFLATED, stream=stream)
        directory = zipped.index(b"PK\x01\x02")  # the rest only repeats what was read
        for cut in range(1, directory, 97):
            with pytest.raises(TruncatedArchiveError):
                read(zipped[:cut])


def test_empty_stream_is_truncated() -> None:
    with pytest.raises(TruncatedArchiveError, match="empty"):
        read(b"")


@pytest.mark.parametrize("garbage", [b"x" * 2048, bytes(range(256)) * 40, b"PK\x05\x07" * 300])
def test_garbage_is_a_format_error(garbage: bytes) -> None:
    with pytest.raises(ArchiveFormatError) as err:
        read(garbage)
    assert not isinstance(err.value, TruncatedArchiveError)


def test_damaged_header_is_a_format_error() -> None:
    data = bytearray(make_tar(tarfile.GNU_FORMAT, others=False) + bytes(1 << 20))
    second = data.index(b"empty")
    data[second + 148 : second + 156] = b"0000000\0"  # a wrong header checksum
    with pytest.raises(ArchiveFormatError, match="Damaged") as err:
        read(bytes(data))
    assert not isinstance(err.value, TruncatedArchiveError)


def test_errors_name_the_archive_and_member() -> None:
    data = make_tar(tarfile.GNU_FORMAT, others=False)
    cut = data.index(b"\xab" * 512) + 1000  # inside "big"
    with pytest.raises(TruncatedArchiveError, match=r"^shard s\.tar: member 6 b'big': cut short: "):
        read(data[:cut], label="shard s.tar")
    end = data.index(b"\xab" * 512) + 600 * 1024  # right after "big"
    with pytest.raises(TruncatedArchiveError, match=r"after member 6 b'big': .*end-of-archive"):
        read(data[:end])


def test_errors_pickle() -> None:
    err = TruncatedArchiveError("x: cut")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is TruncatedArchiveError and back.args == ("x: cut",)
    assert issubclass(TruncatedArchiveError, ArchiveFormatError)
    assert issubclass(ArchiveFormatError, ValueError)


class Raising:
    """Gives `good` bytes, then raises `err` from readinto."""

    def __init__(self, good: bytes, err: BaseException) -> None:
        self._b = io.BytesIO(good)
        self._err = err

    def readinto(self, buf: memoryview) -> int:
        n = self._b.readinto(buf[:1000])
        if n == 0:
            raise self._err
        return n


@pytest.mark.parametrize("at", [0, 3000, 20000])
def test_source_exception_propagates_unchanged(at: int) -> None:
    err = ConnectionResetError("peer went away")
    reader = ArchiveReader(Raising(make_tar(tarfile.PAX_FORMAT)[:at], err))
    with pytest.raises(ConnectionResetError) as got:
        list(reader)
    assert got.value is err
    assert list(reader) == []  # the reader is finished


def test_source_keyboard_interrupt_and_bad_counts() -> None:
    with pytest.raises(KeyboardInterrupt):
        read_from(Raising(b"", KeyboardInterrupt()))

    class Liar:
        def readinto(self, buf: memoryview) -> int:
            return len(buf) + 1

    with pytest.raises(ValueError, match="readinto returned"):
        read_from(Liar())
    with pytest.raises(AttributeError):
        ArchiveReader(object())  # type: ignore[arg-type]


def read_from(source: Any) -> list[ArchiveMember]:
    return list(ArchiveReader(source))


def test_reentrant_read_is_refused() -> None:
    class Sneaky:
        reader: ArchiveReader | None = None

        def readinto(self, buf: memoryview) -> int:
            assert self.reader is not None
            next(self.reader)
            return 0

    src = Sneaky()
    src.reader = ArchiveReader(src)
    with pytest.raises(RuntimeError, match="another call is reading it"):
        next(src.reader)
    src.reader = None  # break the cycle


def test_a_kept_view_of_the_read_buffer_stays_valid() -> None:
    views: list[memoryview] = []

    class Keeper(io.BytesIO):
        def readinto(self, buf: memoryview) -> int:  # type: ignore[override]
            views.append(buf)
            return super().readinto(buf)

    data = make_tar(tarfile.GNU_FORMAT)
    assert read_from(Keeper(data))[0].data == b"hello"
    # The reader is gone; its buffer lives on with the view (a bytearray, not freed memory).
    assert isinstance(views[0].obj, bytearray) and len(views[0]) == 256 << 10
    last = len(data) // (256 << 10) * (256 << 10)  # the last read landed here
    assert views[0][:512].tobytes() == data[last : last + 512]


_BOUNDED = textwrap.dedent(
    """
    import sys
    from aistore._native import ArchiveReader

    MEMBER, COUNT = 256 << 20, 4  # a 1 GiB stream
    PATTERN = bytes(range(256)) * 4096

    def header(name, size):
        h = bytearray(512)
        h[0:len(name)] = name
        h[100:108] = b"0000644\\0"
        h[124:136] = b"%011o\\0" % size
        h[136:148] = b"00000000000\\0"
        h[156:157] = b"0"
        h[257:265] = b"ustar\\x0000"
        h[148:156] = b" " * 8
        h[148:156] = b"%06o\\0 " % sum(h)
        return bytes(h)

    def pieces():
        for i in range(COUNT):
            yield header(b"m%d" % i, MEMBER)
            for _ in range(MEMBER // len(PATTERN)):
                yield PATTERN
        yield bytes(1024)

    class Generated:
        def __init__(self):
            self._it = pieces()
            self._rest = memoryview(b"")

        def readinto(self, buf):
            if not self._rest:
                self._rest = memoryview(next(self._it, b""))
            n = min(len(buf), len(self._rest))
            buf[:n] = self._rest[:n]
            self._rest = self._rest[n:]
            return n

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) << 10

    base = rss("VmRSS:")
    n = 0
    for m in ArchiveReader(Generated()):
        assert len(m.data) == MEMBER and m.data[:512] == PATTERN[:512]
        n += 1
        del m
    assert n == COUNT
    print(rss("VmHWM:") - base)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_memory_is_one_member_however_long_the_stream() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _BOUNDED], capture_output=True, text=True, check=True, timeout=120
    )
    peak = int(out.stdout)
    # One 256 MiB member plus the read buffer and libarchive's state - not the 1 GiB stream.
    assert peak < (256 + 48) << 20, peak
