# Types of the pybind11 extension built from csrc/native.cc.
from typing import Protocol

from typing_extensions import Buffer

def xxhash64_hex(data: Buffer, seed: int = 0) -> str: ...
def copy_to_bytes(data: Buffer) -> bytes: ...

class FillableBytes(Buffer):
    def __init__(self, size: int) -> None: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def take(self) -> bytes: ...

class PiecePool:
    """Bytes pieces its FillableBytes handed out, filled again once nobody else holds them."""

    def __init__(self, piece_size: int, limit: int) -> None: ...
    def fillable(self, size: int, /) -> FillableBytes: ...
    def clear(self) -> None: ...
    @property
    def idle_bytes(self) -> int: ...
    @property
    def limit(self) -> int: ...
    @property
    def piece_size(self) -> int: ...
    @property
    def reused(self) -> int: ...
    @property
    def allocated(self) -> int: ...
    @property
    def kept(self) -> int: ...

class _ReadInto(Protocol):
    def readinto(self, buf: memoryview, /) -> int | None: ...

class ArchiveFormatError(ValueError):
    """The bytes are not a (supported) archive, or the archive is damaged."""

class TruncatedArchiveError(ArchiveFormatError):
    """The archive ended inside a header or a member, or before its end-of-archive marker."""

class ArchiveMember:
    """One regular file of an archive."""

    def __init__(self, raw_name: bytes, data: bytes) -> None: ...
    @property
    def raw_name(self) -> bytes: ...
    @property
    def name(self) -> str: ...
    @property
    def data(self) -> bytes: ...

class ArchiveReader:
    """The regular files of a tar or zip stream (plain, gzip, lz4 or zstd), in order."""

    def __init__(
        self, source: _ReadInto, *, label: str = "archive", buffer_size: int = 262144
    ) -> None: ...
    def __iter__(self) -> ArchiveReader: ...
    def __next__(self) -> ArchiveMember: ...

class HttpError(OSError):
    """A request failed below HTTP: a reply that cannot be parsed (subclasses: the rest)."""

class ConnectionFailed(HttpError):
    """The connection could not be made, or broke off before the reply's end."""

class ConnectTimeout(HttpError):
    """No connection within the connect timeout."""

class ReadTimeout(HttpError):
    """No byte of the reply within the read timeout."""

class HttpResponse:
    """A reply whose body is read as it arrives; close() ends it."""

    @property
    def status(self) -> int: ...
    @property
    def fields(self) -> list[tuple[str, str]]: ...
    def readinto(self, buffer: Buffer, /) -> int: ...
    def close(self, drain: int = 0) -> None: ...
    def abort(self) -> None: ...

class HttpClient:
    """Keep-alive HTTP/1.1 requests; one per process (not fork-safe)."""

    def __init__(self, min_idle_per_host: int = 10) -> None: ...
    def keep_idle_at_least(self, n: int) -> None: ...
    def get(
        self,
        host: str,
        port: int,
        target: str,
        headers: list[tuple[str, str]],
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> tuple[int, bytes | HttpResponse, list[tuple[str, str]] | None]: ...
    def open(
        self,
        host: str,
        port: int,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: Buffer,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> HttpResponse: ...
    def open_file(
        self,
        host: str,
        port: int,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        fd: int,
        offset: int,
        length: int,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> HttpResponse: ...
