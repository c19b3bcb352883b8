"""Reading tar and zip archives as they stream in, member by member, with bounded memory.

`tarfile` and `zipfile` cost several Python calls per 512-byte block and per member, and
`zipfile` wants the whole archive (it reads the central directory at the end). GetBatch
archives are written for one pass: tar members come with their sizes, and our zip members carry
their sizes in the local headers. Here one buffer is filled straight from the body
(`readinto`), headers are parsed in place, and each member's bytes are copied once, into the
`bytes` object handed to the caller. Member names are decoded only when asked for.

    source (readinto) ─► StreamBuffer ─► TarStream / ZipStream ─► (name, bytes) per regular file
    GzipSource / Lz4Source decompress in between when the archive is compressed.

Example:
    >>> import io, tarfile
    >>> bio = io.BytesIO()
    >>> with tarfile.open(fileobj=bio, mode="w") as t:
    ...     info = tarfile.TarInfo("a.txt"); info.size = 2
    ...     t.addfile(info, io.BytesIO(b"hi"))
    >>> _ = bio.seek(0)
    >>> [(m.name, m.data) for m in TarStream(ReaderSource(bio)).files(names=True)]
    [('a.txt', b'hi')]
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol

__all__ = [
    "ArchiveFormatError",
    "ByteSource",
    "GzipSource",
    "Lz4Source",
    "Member",
    "ReaderSource",
    "StreamBuffer",
    "TarStream",
    "TruncatedArchiveError",
    "ZipStream",
]

_BLOCK = 512
_DEFAULT_BUFFER = 4 << 20
_READ_PIECE = 256 << 10  # a read returns after this much, so members are handed out early
_ZERO_BLOCK = bytes(_BLOCK)
_REGULAR_KINDS = frozenset(b"0\x007")  # typeflags of regular files: '0', NUL, '7'


class ArchiveFormatError(ValueError):
    """The bytes are not a (supported) archive, or a header is damaged."""


class TruncatedArchiveError(ArchiveFormatError):
    """The archive ended in the middle of a member or before its end-of-archive marker."""


class ByteSource(Protocol):
    """Anything that fills a buffer: returns the number of bytes written, 0 at the end."""

    def readinto(self, buf: memoryview) -> int: ...


class ReaderSource:
    """A `ByteSource` over a file-like object (`readinto` if it has one, else `read`)."""

    def __init__(self, fileobj: Any) -> None:
        self._f = fileobj
        self._readinto = getattr(fileobj, "readinto", None)

    def readinto(self, buf: memoryview) -> int:
        if self._readinto is not None:
            n = self._readinto(buf)
            return int(n or 0)
        data = self._f.read(len(buf))
        buf[: len(data)] = data
        return len(data)


class GzipSource:
    """gzip over a `ByteSource` (concatenated members too)."""

    def __init__(self, source: ByteSource) -> None:
        self._src = source
        self._in = bytearray(_READ_PIECE)
        self._d = zlib.decompressobj(wbits=31)
        self._input = b""  # compressed bytes the decompressor has not taken yet
        self._out = b""
        self._pos = 0
        self._src_eof = False

    def readinto(self, buf: memoryview) -> int:
        while self._pos >= len(self._out):
            if not self._input:
                if self._src_eof:
                    if not self._d.eof:
                        raise TruncatedArchiveError("gzip: the stream ends early")
                    return 0
                n = self._src.readinto(memoryview(self._in))
                if n == 0:
                    self._src_eof = True
                    continue
                self._input = bytes(self._in[:n])
            if self._d.eof:
                if not self._input.strip(b"\0"):  # padding after the last member
                    self._input = b""
                    continue
                self._d = zlib.decompressobj(wbits=31)
            try:
                self._out = self._d.decompress(self._input, len(buf))
            except zlib.error as err:
                raise ArchiveFormatError(f"gzip: {err}") from err
            self._pos = 0
            self._input = self._d.unconsumed_tail or (self._d.unused_data if self._d.eof else b"")
        n = min(len(buf), len(self._out) - self._pos)
        buf[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n


class Lz4Source:
    """One LZ4 frame over a `ByteSource`; needs the optional `lz4` package."""

    def __init__(self, source: ByteSource) -> None:
        try:
            import lz4.frame  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except ImportError as err:
            raise ArchiveFormatError(
                "reading .tar.lz4 needs the optional 'lz4' package (pip install lz4)"
            ) from err
        self._src = source
        self._in = bytearray(_READ_PIECE)
        self._d = lz4.frame.LZ4FrameDecompressor()
        self._out = b""
        self._pos = 0

    def readinto(self, buf: memoryview) -> int:
        while self._pos >= len(self._out):
            if self._d.eof:
                return 0
            n = self._src.readinto(memoryview(self._in))
            if n == 0:
                raise TruncatedArchiveError("lz4: the stream ends early")
            try:
                self._out = self._d.decompress(bytes(self._in[:n]))
            except RuntimeError as err:
                raise ArchiveFormatError(f"lz4: {err}") from err
            self._pos = 0
        n = min(len(buf), len(self._out) - self._pos)
        buf[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n


# Released buffers by size, for the next StreamBuffer of that size: a new 4 MiB bytearray
# costs about a millisecond (zeroing, page faults, and unmapping when freed), which is most of
# the client's cost of a batch of a hundred small objects. Bounded: at most _POOL_KEEP each.
_POOL: dict[int, list[bytearray]] = {}
_POOL_KEEP = 4


def _take_buffer(size: int) -> bytearray:
    try:
        return _POOL[size].pop()
    except (KeyError, IndexError):  # none free (pop is atomic: no lock needed)
        return bytearray(size)


def _give_buffer(buf: bytearray) -> None:
    free = _POOL.setdefault(len(buf), [])
    if len(free) < _POOL_KEEP:
        free.append(buf)


class StreamBuffer:
    """One growable buffer over a `ByteSource`: `ensure(n)` makes n bytes available at `pos`.

    Bytes before `pos` are consumed and may be overwritten by the next refill; memory is the
    buffer (4 MiB by default), more only while a larger member passes through. `release()`
    hands the buffer to the next StreamBuffer; nothing may be read after it.
    """

    def __init__(self, source: ByteSource, size: int = _DEFAULT_BUFFER) -> None:
        self._src = source
        self._default = max(size, 2 * _BLOCK)
        self.buf = _take_buffer(self._default)
        self.mv = memoryview(self.buf)
        self.pos = 0
        self.end = 0
        self.eof = False

    @property
    def available(self) -> int:
        return self.end - self.pos

    def ensure(self, n: int) -> bool:
        """Make `n` bytes available from `pos`; False if the source ends first."""
        if self.end - self.pos >= n:
            return True
        if self.pos + n > len(self.buf):
            self._make_room(n)
        while self.end - self.pos < n:
            if self.eof:
                return False
            room = len(self.buf) - self.end
            got = self._src.readinto(self.mv[self.end : self.end + min(room, max(_READ_PIECE, n))])
            if got == 0:
                self.eof = True
                return False
            self.end += got
        return True

    def _make_room(self, n: int) -> None:
        have = self.end - self.pos
        if n > len(self.buf) or (len(self.buf) > self._default and n <= self._default):
            size = max(self._default, n)
            new = bytearray(size)
            new[:have] = self.mv[self.pos : self.end]
            self.mv.release()
            self.buf, self.mv = new, memoryview(new)
        else:
            self.buf[:have] = self.mv[self.pos : self.end]
        self.pos, self.end = 0, have

    def take(self, n: int) -> bytes:
        """The next n bytes as `bytes` (one copy). REQUIRES: ensure(n)."""
        out = bytes(self.mv[self.pos : self.pos + n])
        self.pos += n
        return out

    def skip(self, n: int) -> bool:
        """Drop n bytes; False if the source ends first."""
        while n > 0:
            if self.available == 0 and not self.ensure(1):
                return False
            k = min(n, self.available)
            self.pos += k
            n -= k
        return True

    def at_eof(self) -> bool:
        return self.available == 0 and not self.ensure(1)

    def release(self) -> None:
        """Give the buffer back for reuse; the StreamBuffer is empty and at its end after."""
        buf, self.buf = self.buf, bytearray()
        self.mv.release()
        self.mv = memoryview(self.buf)
        self.pos = self.end = 0
        self.eof = True
        if len(buf) == self._default:
            _give_buffer(buf)


class Member(NamedTuple):
    """One regular file of an archive: its name (None unless asked for, or when empty) and
    bytes. (A tuple: one is made per file, and tuples are the cheapest to make.)"""

    name: str | None
    data: bytes


def _decode_name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _cstr(b: bytes) -> bytes:
    i = b.find(b"\0")
    return b if i < 0 else b[:i]


def _tar_number(field: bytes) -> int:
    if field[0] & 0x80:  # base-256
        if field[0] & 0x40:
            raise ArchiveFormatError("tar: negative number in header")
        return int.from_bytes(bytes([field[0] & 0x3F]) + field[1:], "big")
    digits = field.replace(b"\0", b" ").strip()
    if not digits:
        return 0
    try:
        return int(digits, 8)
    except ValueError as err:
        raise ArchiveFormatError(f"tar: bad number field {field!r}") from err


def _pax_records(data: bytes) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        sp = data.find(b" ", pos)
        if sp < 0:
            break
        try:
            length = int(data[pos:sp])
        except ValueError as err:
            raise ArchiveFormatError("tar: bad PAX record") from err
        if length <= 0:
            break
        rec = data[sp + 1 : pos + length]
        if rec.endswith(b"\n"):  # the record's terminator; the value may end in newlines too
            rec = rec[:-1]
        key, _, value = rec.partition(b"=")
        out[key.decode("utf-8", "replace")] = value
        pos += length
    return out


class TarStream:
    """The regular files of a tar stream, in order (USTAR, PAX, GNU long names).

    `files()` raises `TruncatedArchiveError` if the stream ends before the end-of-archive
    marker, and `ArchiveFormatError` on a header that is not tar.
    """

    def __init__(self, source: ByteSource, buffer_size: int = _DEFAULT_BUFFER) -> None:
        self._b = StreamBuffer(source, buffer_size)

    def files(self, names: bool = False) -> Iterator[Member]:
        """Yield each regular file; `names` decodes every name (else only for empty files).
        The read buffer is released once the generator ends or is closed."""
        try:
            yield from self._files(names)
        finally:
            self._b.release()

    def _files(self, names: bool) -> Iterator[Member]:
        b = self._b
        long_name: bytes | None = None
        pax_size: int | None = None
        regular_kinds = _REGULAR_KINDS
        while True:
            pos = b.pos
            if b.end - pos < _BLOCK:
                if not b.ensure(_BLOCK):
                    if b.available == 0 and long_name is None:
                        # No end-of-archive blocks: a stream that was cut short.
                        raise TruncatedArchiveError("tar: the archive ends without its end marker")
                    raise TruncatedArchiveError("tar: the archive ends inside a header")
                pos = b.pos
            buf = b.buf
            kind = buf[pos + 156]
            size_field = buf[pos + 124 : pos + 136]
            if kind in regular_kinds and not size_field[0] & 0x80 and pax_size is None:
                # The common case, inline: a regular file with an octal size.
                size = int(size_field.replace(b"\0", b" ").strip() or b"0", 8)
                end = pos + _BLOCK + size
                padded_end = end + (-size % _BLOCK)
                if padded_end <= b.end and buf[pos + 257 : pos + 262] == b"ustar":
                    data = bytes(b.mv[pos + _BLOCK : end])
                    b.pos = padded_end
                    if not names and size:
                        long_name = None
                        yield Member(None, data)
                        continue
                    name = self._name(bytes(buf[pos : pos + _BLOCK]), long_name)
                    long_name = None
                    if not name.endswith("/"):  # an old-style directory
                        yield Member(name, data)
                    continue
            hdr = bytes(b.mv[pos : pos + _BLOCK])
            b.pos = pos + _BLOCK
            if hdr == _ZERO_BLOCK:
                return
            if hdr[257:262] != b"ustar" and hdr[257:262] != b"\0\0\0\0\0":
                raise ArchiveFormatError("tar: not a tar header (bad magic)")
            kind_b = hdr[156:157]
            size = _tar_number(hdr[124:136])
            if kind_b in (b"x", b"L", b"g", b"K"):
                if not b.ensure(size):
                    raise TruncatedArchiveError("tar: the archive ends inside a header")
                data = b.take(size)
                b.skip(-size % _BLOCK)
                if kind_b == b"L":
                    long_name = _cstr(data)
                elif kind_b == b"x":
                    rec = _pax_records(data)
                    if "path" in rec:
                        long_name = rec["path"]
                    if "size" in rec:
                        pax_size = int(rec["size"])
                continue
            if pax_size is not None:
                size, pax_size = pax_size, None
            if hdr[156] not in regular_kinds:
                long_name = None
                b.skip(size + (-size % _BLOCK) if kind_b not in (b"1", b"2", b"5") else 0)
                continue
            if not b.ensure(size):
                raise TruncatedArchiveError("tar: the archive ends inside a member")
            data = b.take(size)
            pad = -size % _BLOCK
            if pad and not b.skip(pad):
                raise TruncatedArchiveError("tar: the archive ends inside a member")
            if not names and size:
                long_name = None
                yield Member(None, data)
                continue
            name = self._name(hdr, long_name)
            long_name = None
            if not name.endswith("/"):  # an old-style directory
                yield Member(name, data)

    @staticmethod
    def _name(hdr: bytes, long_name: bytes | None) -> str:
        if long_name is not None:
            return _decode_name(long_name)
        prefix = _cstr(hdr[345:500]) if hdr[257:263] == b"ustar\0" else b""
        base = _cstr(hdr[0:100])
        return _decode_name(prefix + b"/" + base if prefix else base)


_ZIP_LOCAL = b"PK\x03\x04"
_ZIP_CENTRAL = b"PK\x01\x02"
_ZIP_END = b"PK\x05\x06"
_ZIP64_END = b"PK\x06\x06"
_ZIP_DESCRIPTOR = b"PK\x07\x08"
_LOCAL = struct.Struct("<4sHHHHHIIIHH")


class ZipStream:
    """The regular files of a zip stream, in order, read from the local headers.

    Stored and deflated members are supported; sizes come from the local header (or its zip64
    extra field), or - deflate only - from the end of the compressed data. CRCs are checked.
    """

    def __init__(self, source: ByteSource, buffer_size: int = _DEFAULT_BUFFER) -> None:
        self._b = StreamBuffer(source, buffer_size)

    def files(self, names: bool = False) -> Iterator[Member]:
        """Yield each regular file; the read buffer is released once the generator ends or
        is closed."""
        try:
            yield from self._files(names)
        finally:
            self._b.release()

    def _files(self, names: bool) -> Iterator[Member]:
        b = self._b
        while True:
            if not b.ensure(4):
                raise TruncatedArchiveError("zip: the archive ends without its central directory")
            sig = bytes(b.mv[b.pos : b.pos + 4])
            if sig in (_ZIP_CENTRAL, _ZIP_END, _ZIP64_END):
                return  # the rest is the directory, which repeats what we have seen
            if sig != _ZIP_LOCAL:
                raise ArchiveFormatError("zip: not a local file header")
            if not b.ensure(_LOCAL.size):
                raise TruncatedArchiveError("zip: the archive ends inside a header")
            (_, _, flags, method, _, _, crc, csize, usize, nlen, elen) = _LOCAL.unpack_from(
                b.buf, b.pos
            )
            b.pos += _LOCAL.size
            if not b.ensure(nlen + elen):
                raise TruncatedArchiveError("zip: the archive ends inside a header")
            raw_name = b.take(nlen)
            extra = b.take(elen)
            zip64 = False
            if csize == 0xFFFFFFFF or usize == 0xFFFFFFFF:
                usize, csize = self._zip64_sizes(extra, usize, csize)
                zip64 = True
            has_descriptor = bool(flags & 0x08)
            is_dir = raw_name.endswith(b"/")
            if method == 0:
                # Sizes only after the data: they cannot be found in one pass without scanning.
                unknown_size = has_descriptor and csize == 0 and usize == 0 and not is_dir
                if unknown_size and not self._descriptor_follows():
                    raise ArchiveFormatError(
                        "zip: stored member of unknown size cannot be streamed"
                    )
                if not b.ensure(csize):
                    raise TruncatedArchiveError("zip: the archive ends inside a member")
                data = b.take(csize)
            elif method == 8:
                data = self._inflate(csize if not has_descriptor or csize else None)
            else:
                raise ArchiveFormatError(f"zip: unsupported compression method {method}")
            if has_descriptor:
                crc = self._read_descriptor(zip64)
            if zlib.crc32(data) != crc:
                raise ArchiveFormatError(f"zip: CRC mismatch in {_decode_name(raw_name)!r}")
            if is_dir:
                continue
            name = _decode_name(raw_name) if names or not data else None
            yield Member(name, data)

    def _descriptor_follows(self) -> bool:
        b = self._b
        return b.ensure(4) and bytes(b.mv[b.pos : b.pos + 4]) == _ZIP_DESCRIPTOR

    @staticmethod
    def _zip64_sizes(extra: bytes, usize: int, csize: int) -> tuple[int, int]:
        pos = 0
        while pos + 4 <= len(extra):
            tag, length = struct.unpack_from("<HH", extra, pos)
            if tag == 0x0001:
                body = extra[pos + 4 : pos + 4 + length]
                vals = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
                if usize == 0xFFFFFFFF and vals:
                    usize = vals.pop(0)
                if csize == 0xFFFFFFFF and vals:
                    csize = vals.pop(0)
                return usize, csize
            pos += 4 + length
        raise ArchiveFormatError("zip: zip64 sizes missing")

    def _inflate(self, csize: int | None) -> bytes:
        b = self._b
        d = zlib.decompressobj(-15)
        out: list[bytes] = []
        left = csize
        while not d.eof:
            if b.available == 0 and not b.ensure(1):
                raise TruncatedArchiveError("zip: the archive ends inside a member")
            n = b.available if left is None else min(b.available, left)
            chunk = bytes(b.mv[b.pos : b.pos + n])
            try:
                out.append(d.decompress(chunk))
            except zlib.error as err:
                raise ArchiveFormatError(f"zip: {err}") from err
            used = n - len(d.unused_data)
            b.pos += used
            if left is not None:
                left -= used
                if left == 0 and not d.eof:
                    raise ArchiveFormatError("zip: deflate data ends early")
        return b"".join(out)

    def _read_descriptor(self, zip64: bool) -> int:
        b = self._b
        if not b.ensure(4):
            raise TruncatedArchiveError("zip: the archive ends inside a member")
        if bytes(b.mv[b.pos : b.pos + 4]) == _ZIP_DESCRIPTOR:
            b.pos += 4
        size = 20 if zip64 else 12
        if not b.ensure(size):
            raise TruncatedArchiveError("zip: the archive ends inside a member")
        (crc,) = struct.unpack_from("<I", b.buf, b.pos)
        b.pos += size
        return int(crc)
