"""`obj_file.stream.ResumableStream`: chunks of an object across broken and short streams."""

from __future__ import annotations

import pytest
from _fakes import FakeServer
from test_object_file import DATA, Flaky, _ChunkProvider, _gets

from aistore import Client
from aistore.sdk.obj.content_iterator import StreamBounds
from aistore.sdk.obj.obj_file.errors import ObjectFileReaderMaxResumeError
from aistore.sdk.obj.obj_file.stream import ResumableStream


def _stream(client: Client, max_resume: int) -> ResumableStream:
    reader = client.bucket("b").object("o").get_reader(chunk_size=32_768)
    return ResumableStream(reader._content_provider, max_resume=max_resume)


def test_resumes_at_the_delivered_offset(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=2, cut=100_000)
    stream = _stream(client, max_resume=3)
    data = b"".join(bytes(c) for c in stream)
    assert data == DATA
    assert stream.resumes == 2
    assert stream.delivered_position == len(DATA)
    gets = _gets(server)
    assert gets[0] is None and len(gets) == 3
    assert all(g is not None and g.startswith("bytes=") for g in gets[1:])


def test_restarts_from_zero_without_offsets_and_drops_replayed_bytes(
    server: FakeServer, client: Client
) -> None:
    server.route = Flaky(breaks=1, cut=50_000, present=False)
    stream = _stream(client, max_resume=1)
    assert b"".join(bytes(c) for c in stream) == DATA
    assert stream.resumes == 1
    assert _gets(server) == [None, None]


def test_gives_up_after_max_resume(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=5, cut=10_000)
    stream = _stream(client, max_resume=2)
    with pytest.raises(ObjectFileReaderMaxResumeError):
        for _ in stream:
            pass


def test_restart_starts_a_new_pass(server: FakeServer, client: Client) -> None:
    server.route = Flaky(breaks=0)
    stream = _stream(client, max_resume=0)
    first = bytes(next(stream))
    stream.restart()
    assert stream.delivered_position == 0
    assert b"".join(bytes(c) for c in stream).startswith(first)
    stream.close()


def test_chunks_are_the_providers_own() -> None:
    """Each chunk is one the provider yielded, whole and not copied; after a resume the
    replayed bytes are dropped and the rest still comes in the provider's chunks."""
    yielded: list[bytes] = []

    class Recording(_ChunkProvider):
        def create_iter(self, offset: int = 0, bounds: StreamBounds | None = None):  # type: ignore[no-untyped-def]
            for chunk in super().create_iter(offset, bounds):
                yielded.append(chunk)
                yield chunk

    chunks = list(ResumableStream(Recording(breaks=0), max_resume=0))
    assert [c.obj for c in chunks] == yielded and all(
        c.obj is y for c, y in zip(chunks, yielded, strict=True)
    )
    provider = _ChunkProvider(breaks=2)
    stream = ResumableStream(provider, max_resume=2)
    assert b"".join(stream) == DATA
    assert stream.resumes == 2 and len(provider.offsets) == 3
