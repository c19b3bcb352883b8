"""The file reader's resume-on-error rules, against a server that breaks connections."""

from __future__ import annotations

import numpy as np
import pytest
from _fakes import FakeServer, Reply, Req
from requests.exceptions import ChunkedEncodingError

from aistore import Client
from aistore.sdk.errors import ErrObjNotFound
from aistore.sdk.obj.content_iterator import BaseContentIterProvider, StreamBounds
from aistore.sdk.obj.obj_file.errors import ObjectFileReaderMaxResumeError
from aistore.sdk.obj.obj_file.object_file import ObjectFileReader
from aistore.sdk.obj.object import parse_byte_range

DATA = bytes((i * 7) % 251 for i in range(300_000))


class Flaky:
    """Serves DATA; the first `breaks` GETs hang up after `cut` body bytes."""

    def __init__(
        self, breaks: int, cut: int = 100_000, present: bool = True, honour_range: bool = True
    ) -> None:
        self.breaks = breaks
        self.cut = cut
        self.present = present
        self.honour_range = honour_range

    def __call__(self, req: Req) -> Reply:
        if req.method == "HEAD":
            present = "true" if self.present else "false"
            return Reply(200, b"", {"Content-Length": str(len(DATA)), "Ais-Present": present})
        body, status = DATA, 200
        rng = req.headers.get("Range")
        if rng and self.honour_range:
            first, last = parse_byte_range(rng)
            if first is None:
                body = DATA[-(last or 0) :]
            else:
                body = DATA[first : None if last is None else last + 1]
            status = 206
        cut = None
        if self.breaks > 0:
            self.breaks -= 1
            cut = min(self.cut, len(body) - 1)
        return Reply(status, body, cut_after=cut)


def _gets(server: FakeServer) -> list[str | None]:
    return [r.headers.get("Range") for r in server.requests if r.method == "GET"]


def test_resumes_at_offset_when_present(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=2, cut=100_000)
    with client.bucket("b").object("o").get_reader().as_file() as f:
        assert f.read() == DATA
    assert _gets(server) == [None, "bytes=100000-", "bytes=200000-"]
    heads = [r for r in server.requests if r.method == "HEAD"]
    assert [h.query["props"] for h in heads] == ["checksum,atime,version,custom"] * 2


def test_server_ignoring_range_replays_and_skips(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=123_457, honour_range=False)
    f = client.bucket("b").object("o").get_reader().as_file()
    assert f.read(200_000) == DATA[:200_000]
    assert f.read() == DATA[200_000:]
    assert _gets(server) == [None, "bytes=123457-"]


def test_absent_object_restarts_from_zero(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, present=False)
    f = client.bucket("b").object("o").get_reader().as_file()
    assert f.read() == DATA
    assert _gets(server) == [None, None]


def test_suffix_range_cannot_resume_at_offset(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=10_000)
    f = client.bucket("b").object("o").get_reader(byte_range="bytes=-50000").as_file()
    assert f.read() == DATA[-50_000:]
    assert _gets(server) == ["bytes=-50000", "bytes=-50000"]
    assert not [r for r in server.requests if r.method == "HEAD"]


def test_user_range_moves_forward_on_resume(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=1_000)
    f = client.bucket("b").object("o").get_reader(byte_range="bytes=5000-9999").as_file()
    assert f.read() == DATA[5000:10000]
    assert _gets(server) == ["bytes=5000-9999", "bytes=6000-9999"]


def test_too_many_breaks(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=10, cut=1_000)
    f = client.bucket("b").object("o").get_reader().as_file(max_resume=2)
    with pytest.raises(ObjectFileReaderMaxResumeError) as info:
        f.read()
    assert isinstance(info.value.original_error, ChunkedEncodingError)
    assert f.closed
    with pytest.raises(ValueError, match="closed"):
        f.read()
    with pytest.raises(ValueError):
        client.bucket("b").object("o").get_reader().as_file(max_resume=-1)


def test_max_resume_zero_fails_on_first_break(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=1_000)
    f = client.bucket("b").object("o").get_reader().as_file(max_resume=0)
    with pytest.raises(ObjectFileReaderMaxResumeError):
        f.read()


def test_readinto_lands_in_caller_buffers(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=70_001)
    f = client.bucket("b").object("o").get_reader().as_file()
    head = np.zeros(100_000, dtype=np.uint8)
    assert f.readinto(head) == 100_000
    assert head.tobytes() == DATA[:100_000]
    rest = bytearray(len(DATA))
    n = f.readinto(rest)
    assert n == len(DATA) - 100_000
    assert bytes(rest[:n]) == DATA[100_000:]
    assert f.readinto(bytearray(10)) == 0
    assert f.read() == b""


def test_small_reads_and_read1(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=0)
    f = client.bucket("b").object("o").get_reader().as_file()
    assert f.readable() and not f.seekable()
    assert f.read(0) == b""
    assert f.read(3) == DATA[:3]
    assert f.read1(5) == DATA[3:8]
    buf = bytearray(4)
    assert f.readinto1(buf) == 4 and bytes(buf) == DATA[8:12]
    assert f.read(None) == DATA[12:]
    f.close()
    assert not f.readable()


def test_with_block_starts_over(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=0)
    f = client.bucket("b").object("o").get_reader().as_file()
    assert f.read(10) == DATA[:10]
    with f:
        assert f.read(10) == DATA[:10]
    assert f.closed
    with f:
        assert f.read() == DATA


def test_other_errors_propagate_and_close(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(404, b'"ais://b/o" does not exist')
    f = client.bucket("b").object("o").get_reader().as_file()
    with pytest.raises(ErrObjNotFound):
        f.read()
    assert f.closed


def test_iteration_does_not_resume(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=50_000)
    with pytest.raises(ChunkedEncodingError):
        b"".join(client.bucket("b").object("o").get_reader())


def test_read_all_retries_a_broken_body(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=1, cut=50_000)
    assert client.bucket("b").object("o").get_reader().read_all() == DATA
    assert _gets(server) == [None, None]


class _StubClient:
    path = "objects/b/stub"

    def can_get_at_offset(self) -> bool:
        return True


class _ChunkProvider(BaseContentIterProvider):
    """A provider with only `create_iter`: the file reader adapts its chunks."""

    def __init__(self, breaks: int) -> None:
        super().__init__(_StubClient(), chunk_size=7000)  # type: ignore[arg-type]
        self.breaks = breaks
        self.offsets: list[int] = []

    def read_all(self) -> bytes:
        return DATA

    def create_iter(self, offset: int = 0, bounds: StreamBounds | None = None):  # type: ignore[no-untyped-def]
        self.offsets.append(offset)
        if bounds is not None:
            bounds.start, bounds.expected_end = offset, len(DATA)
        for pos in range(offset, len(DATA), self._chunk_size):
            if self.breaks and pos - offset > 20_000:
                self.breaks -= 1
                raise ChunkedEncodingError("broken")
            yield DATA[pos : pos + self._chunk_size]


def test_chunk_only_provider_resumes() -> None:
    provider = _ChunkProvider(breaks=2)
    f = ObjectFileReader(provider, max_resume=2)
    head = bytearray(10_001)
    assert f.readinto(head) == 10_001 and bytes(head) == DATA[:10_001]
    assert f.read() == DATA[10_001:]
    assert provider.offsets[0] == 0 and len(provider.offsets) == 3
    assert provider.offsets[1] > 0
