"""The native transport (`NativeTransport` over `_native.HttpClient`): what it sends, the
replies it reads, and the transport faults it must survive."""

from __future__ import annotations

import gc
import gzip
import os
import signal
import socket
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from _fakes import FakeServer, Reply, Req, fast_retry_config

from aistore import Client, _native
from aistore._internal.body import NativeReply
from aistore._internal.body import Reply as AnyReply
from aistore._internal.transport import NativeTransport, select_transport
from aistore.sdk.errors import AISError, ErrBckNotFound, ErrObjNotFound

PAYLOAD = bytes(range(256)) * 400  # 100 KiB


def _native_get(server: FakeServer, target: str = "/o") -> tuple[int, bytes | None, object]:
    host, port = server.url.removeprefix("http://").split(":")
    return _native.HttpClient().get(host, int(port), target, [], 2.0, 2.0)


def test_body_of_2xx_without_fields(server: FakeServer) -> None:
    server.route = lambda req: Reply(206, PAYLOAD)
    assert _native_get(server) == (206, PAYLOAD, None)


def test_error_reply_gives_fields_and_small_body(server: FakeServer) -> None:
    server.route = lambda req: Reply(404, b"gone", {"X-Why": "test"})
    status, body, fields = _native_get(server)
    assert (status, body) == (404, b"gone")
    assert ("X-Why", "test") in fields  # type: ignore[operator]


def test_large_error_body_comes_as_a_stream(server: FakeServer) -> None:
    server.route = lambda req: Reply(500, PAYLOAD)
    status, body, fields = _native_get(server)
    assert status == 500 and isinstance(body, _native.HttpResponse) and fields
    body.close()


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, b"5\r\nhello\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked"}),
        Reply(200, gzip.compress(PAYLOAD), {"Content-Encoding": "gzip"}),
    ],
    ids=["chunked", "gzip"],
)
def test_bodies_without_length_or_with_coding_are_streamed(
    server: FakeServer, client: Client, reply: Reply
) -> None:
    server.route = lambda req: reply
    status, body, fields = _native_get(server)
    assert status == 200 and isinstance(body, _native.HttpResponse) and fields is None
    body.close()
    expected = b"hello" if "Transfer-Encoding" in reply.headers else PAYLOAD
    server.requests.clear()
    assert client.bucket("b").object("o").get_reader().read_all() == expected
    assert len(server.requests) == 1  # read by the native client, never sent again


def test_sends_sdk_headers_and_reuses_one_connection(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD)
    client = Client(server.url, token="tok", retry_config=fast_retry_config())
    obj = client.bucket("b").object("o")
    assert [obj.get_reader().read_all() for _ in range(3)] == [PAYLOAD] * 3
    first = server.requests[0]
    assert first.path == "/v1/objects/b/o" and first.query == {"provider": "ais"}
    assert first.headers["Authorization"] == "Bearer tok"
    assert first.headers["User-Agent"].startswith("ais/python/")
    assert "Accept-Encoding" not in first.headers
    assert len({req.peer_port for req in server.requests}) == 1


def test_connection_closed_by_server_while_idle(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, PAYLOAD, close_after=True)
    obj = client.bucket("b").object("o")
    for _ in range(3):
        assert obj.get_reader().read_all() == PAYLOAD
    assert len(server.requests) == 3  # a stale connection is replaced, nothing sent twice
    assert len({req.peer_port for req in server.requests}) == 3


def test_body_cut_short_is_sent_again(server: FakeServer, client: Client) -> None:
    """A broken connection is a network error: the retry policy sends the GET again."""
    replies = iter([Reply(200, PAYLOAD, cut_after=1000)])
    server.route = lambda req: next(replies, Reply(200, PAYLOAD))
    assert client.bucket("b").object("o").get_reader().read_all() == PAYLOAD
    assert len(server.requests) == 2


def test_error_status_maps_to_sdk_error_once(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(404, b'{"message":"bucket \\"ais://b\\" does not exist"}')
    with pytest.raises(ErrBckNotFound) as info:
        client.bucket("b").object("o").get_reader().read_all()
    assert info.value.status_code == 404
    assert len(server.requests) == 1
    server.route = lambda req: Reply(403, b"denied")
    with pytest.raises(AISError) as err:
        client.bucket("b").object("o").get_reader().read_all()
    assert err.value.status_code == 403 and "denied" in str(err.value)


def test_redirect_to_target_is_followed(server: FakeServer, client: Client) -> None:
    target = FakeServer()
    try:
        target.route = lambda req: Reply(200, PAYLOAD)
        server.route = lambda req: Reply(307, b"", {"Location": f"{target.url}{req.path}?x=1"})
        assert client.bucket("b").object("o").get_reader().read_all() == PAYLOAD
        assert len(server.requests) == len(target.requests) == 1
        assert target.requests[0].query == {"x": "1"}
    finally:
        target.close()


def test_missing_object_after_redirect(server: FakeServer, client: Client) -> None:
    target = FakeServer()
    try:
        target.route = lambda req: Reply(404, b"t[x]: ais://b/o does not exist")
        server.route = lambda req: Reply(307, b"", {"Location": f"{target.url}{req.path}"})
        with pytest.raises(ErrObjNotFound):
            client.bucket("b").object("o").get_reader().read_all()
        assert len(target.requests) == 1
    finally:
        target.close()


def test_read_timeout_raises_requests_timeout(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD, delay=1.0)
    client = Client(server.url, retry_config=fast_retry_config(), timeout=(2, 0.2))
    start = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.bucket("b").object("o").get_reader().read_all()
    assert time.monotonic() - start < 2.5  # three attempts of 0.2 s, nothing waited twice
    assert len(server.requests) == 3


def test_a_pause_mid_body_is_waited_out_asleep(server: FakeServer) -> None:
    # A reader whose reply stops coming retries for a few microseconds (the next bytes of a
    # flowing reply are that close), then sleeps: a long pause must cost next to no CPU.
    server.route = lambda req: Reply(200, PAYLOAD, cut_after=50_000, stall=0.5, resume=True)
    cpu = time.thread_time()
    assert _native_get(server) == (200, PAYLOAD, None)
    assert time.thread_time() - cpu < 0.1


def test_ctrl_c_stops_a_wait_without_timeout(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD, delay=5.0)
    client = Client(server.url, retry_config=fast_retry_config(), timeout=0)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.bucket("b").object("o").get_reader().read_all()
    finally:
        timer.cancel()
    assert time.monotonic() - start < 2.0


def test_threads_share_the_client(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, req.path.encode() * 1000)
    bucket = client.bucket("b")

    def read(i: int) -> bool:
        expected = f"/v1/objects/b/o{i}".encode() * 1000
        return bucket.object(f"o{i}").get_reader().read_all() == expected

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(read, range(400)))


def test_more_threads_than_the_pool_size_reuse_their_connections(server: FakeServer) -> None:
    # A pool sized below the threads sharing the client must not cost a new connection per
    # request: the native pool keeps as many idle connections as were in use at once.
    server.route = lambda req: Reply(200, PAYLOAD)
    client = Client(server.url, max_pool_size=2, retry_config=fast_retry_config())
    bucket = client.bucket("b")
    threads, per_thread = 16, 25
    start = threading.Barrier(threads)

    def read(_: int) -> bool:
        start.wait()
        return all(bucket.object("o").get_reader().read_all() == PAYLOAD for _ in range(per_thread))

    with ThreadPoolExecutor(threads) as pool:
        assert all(pool.map(read, range(threads)))
    assert len(server.requests) == threads * per_thread
    # At most one connection per thread ever opened (a fixed pool of 2 opens one for most
    # of the 400 requests).
    assert len({req.peer_port for req in server.requests}) <= threads


def test_growing_the_pool_keeps_the_native_connections(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD)
    client = Client(server.url, max_pool_size=2, retry_config=fast_retry_config())
    obj = client.bucket("b").object("o")
    assert obj.get_reader().read_all() == PAYLOAD
    manager = client._request_client.session_manager
    manager.ensure_pool_size(32)
    assert manager.max_pool_size == 32
    assert obj.get_reader().read_all() == PAYLOAD
    first, second = (req.peer_port for req in server.requests)
    assert first == second


def test_forked_child_opens_its_own_connection(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, PAYLOAD)
    obj = client.bucket("b").object("o")
    assert obj.get_reader().read_all() == PAYLOAD
    pid = os.fork()
    if pid == 0:  # the child: exit status tells the parent
        ok = obj.get_reader().read_all() == PAYLOAD
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert obj.get_reader().read_all() == PAYLOAD
    parent, child, parent_again = (req.peer_port for req in server.requests)
    assert parent == parent_again != child


def test_malformed_reply_is_a_network_error(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, PAYLOAD, {"Content-Length": "many"}, close_after=True)
    with pytest.raises(_native.HttpError):
        _native_get(server)
    server.requests.clear()
    with pytest.raises(requests.ConnectionError):
        client.bucket("b").object("o").get_reader().read_all()
    assert len(server.requests) == 3  # the network policy's attempts, nothing more


def _chunked(pieces: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


CHUNKED = {"Transfer-Encoding": "chunked"}


def _open(reply: AnyReply) -> AnyReply:
    assert isinstance(reply, NativeReply)  # plain HTTP: the native transport serves it
    return reply


def _read_to_end(reader: AnyReply, size: int = 1 << 20) -> list[bytes]:
    buf = bytearray(size)
    pieces = []
    while n := reader.readinto(memoryview(buf)):
        pieces.append(bytes(buf[:n]))
    return pieces


def test_stream_sends_body_and_decodes_chunks(server: FakeServer, client: Client) -> None:
    pieces = [bytes([i]) * 100 for i in range(100)]
    server.route = lambda req: Reply(200, _chunked(pieces), CHUNKED)
    rc = client._request_client
    for _ in range(2):
        reader = rc.send("GET", "ml/moss", _open, body=b'{"in":[]}', params={"x": "1"})
        got = _read_to_end(reader)
        reader.close(1024)
        assert b"".join(got) == b"".join(pieces)
        assert len(got) < len(pieces)  # what has arrived is taken in one call, not per chunk
    first, second = server.requests
    assert (first.method, first.body, first.query) == ("GET", b'{"in":[]}', {"x": "1"})
    assert first.peer_port == second.peer_port  # read to the end: the connection is kept


def test_stream_closed_early_drops_the_connection(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, _chunked([PAYLOAD] * 4), CHUNKED)
    rc = client._request_client
    for _ in range(2):
        reader = rc.send("GET", "ml/moss", _open, body=b"{}")
        assert reader.readinto(memoryview(bytearray(10))) == 10
        reader.close(1024)
        reader.close()  # idempotent
    first, second = server.requests
    assert first.peer_port != second.peer_port


def test_stream_error_status_raises_once(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(400, b'{"message":"bad batch","status":400}')
    with pytest.raises(AISError) as info:
        client._request_client.send("GET", "ml/moss", _open, body=b"{}")
    assert info.value.status_code == 400 and "bad batch" in str(info.value)
    assert len(server.requests) == 1


def test_stream_retried_statuses_follow_the_status_policy(server: FakeServer) -> None:
    server.route = lambda req: Reply(503, b"busy")
    client = Client(server.url, retry_config=fast_retry_config(http_total=2))
    with pytest.raises(requests.exceptions.RetryError):
        client._request_client.send("GET", "ml/moss", _open, body=b"{}")
    assert len(server.requests) == 3  # the first try and two status retries


def test_stream_body_follows_redirect(server: FakeServer, client: Client) -> None:
    target = FakeServer()
    try:
        target.route = lambda req: Reply(200, _chunked([b"archive"]), CHUNKED)
        server.route = lambda req: Reply(307, b"", {"Location": f"{target.url}{req.path}"})
        reader = client._request_client.send("GET", "ml/moss", _open, body=b'{"a":1}')
        assert _read_to_end(reader) == [b"archive"]
        reader.close()
        assert target.requests[0].body == b'{"a":1}'
    finally:
        target.close()


def test_stream_cut_short_raises_chunked_encoding_error(server: FakeServer, client: Client) -> None:
    body = _chunked([PAYLOAD] * 4)
    server.route = lambda req: Reply(200, body, CHUNKED, cut_after=len(body) // 2)
    reader = client._request_client.send("GET", "ml/moss", _open, body=b"{}")
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        _read_to_end(reader, 4096)
    reader.close()


def test_head_returns_headers_and_maps_errors_once(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(
        200, b"", {"Content-Length": "12345", "ais-custom-md": "a=1", "Ais-Custom-Md": "b=2"}
    )
    props = client.bucket("b").object("o").head()
    assert (props.size, props.custom_metadata) == (12345, {"a": "1", "b": "2"})
    server.route = lambda req: Reply(404, b"", {"Hdr-Error": "ais://b/o does not exist"})
    with pytest.raises(AISError) as info:
        client.bucket("b").object("o").head()
    assert info.value.status_code == 404 and "does not exist" in str(info.value)
    assert [req.method for req in server.requests] == ["HEAD", "HEAD"]
    assert len({req.peer_port for req in server.requests}) == 1


def test_stream_keeps_its_client_alive(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD)
    host, port = server.url.removeprefix("http://").split(":")
    http = _native.HttpClient()
    stream = http.open(host, int(port), "GET", "/o", [], b"")
    ref = weakref.ref(http)
    del http
    gc.collect()
    assert ref() is not None  # held by the stream
    assert b"".join(_read_to_end(NativeReply(stream))) == PAYLOAD
    stream.close()  # gives the connection back to the pool of the client it came from
    del stream
    gc.collect()
    assert ref() is None


def _open_native(http: _native.HttpClient, server: FakeServer) -> _native.HttpResponse:
    host, port = server.url.removeprefix("http://").split(":")
    return http.open(host, int(port), "GET", "/o", [], b"", 2.0, 30.0)


def test_abort_wakes_a_read_blocked_in_another_thread(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD, cut_after=1000, stall=10)
    stream = _open_native(_native.HttpClient(), server)
    reader = NativeReply(stream)
    errors: list[BaseException] = []
    first_bytes = threading.Event()

    def read() -> None:
        buf = bytearray(1 << 20)
        got = 0
        try:
            while n := reader.readinto(memoryview(buf)):
                got += n
                if got >= 1000:
                    first_bytes.set()  # the next read waits for the stalled rest
        except BaseException as err:  # noqa: B036 - the test inspects whatever arrives
            errors.append(err)

    thread = threading.Thread(target=read)
    thread.start()
    assert first_bytes.wait(5)  # the first 1000 bytes are read; it waits for the rest
    # A moment to get into that read (an abort just before it ends the read the same way).
    time.sleep(0.05)
    assert thread.is_alive()
    t0 = time.monotonic()
    stream.abort()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - t0 < 1  # not the 10 s stall
    assert len(errors) == 1 and isinstance(errors[0], requests.exceptions.ChunkedEncodingError)
    stream.abort()  # closed by the failed read: a no-op
    reader.close()


def test_an_aborted_reply_never_serves_again(server: FakeServer) -> None:
    server.route = lambda req: Reply(200, PAYLOAD)
    http = _native.HttpClient()
    kept, aborted = _open_native(http, server), _open_native(http, server)  # two connections
    for stream in (kept, aborted):
        assert b"".join(_read_to_end(NativeReply(stream))) == PAYLOAD
    kept.close()  # back in the pool
    aborted.abort()  # read to its end, but shut down: closed, not pooled
    aborted.close()
    kept.abort()  # closed: a no-op that must not reach the pooled connection
    last = _open_native(http, server)
    assert b"".join(_read_to_end(NativeReply(last))) == PAYLOAD
    last.close()
    first, second, third = (req.peer_port for req in server.requests)
    assert first != second and third == first  # the pool held the kept connection alone


def _tar(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class _NoPythonReads(NativeReply):
    def readinto(self, buf: memoryview) -> int:
        raise AssertionError("the archive reader must read the native reply in C++")


def test_archive_reader_reads_a_native_reply_in_cpp(server: FakeServer) -> None:
    from aistore._internal.archive_stream import read_archive

    members = {f"m{i}": bytes([i]) * (i * 1000) for i in range(20)}
    archive = _tar(members)
    server.route = lambda req: Reply(200, _chunked([archive[:7000], archive[7000:]]), CHUNKED)
    reply = _NoPythonReads(_open_native(_native.HttpClient(), server))
    assert {m.name: m.data for m in read_archive(reply)} == members
    reply.close()


def test_archive_reader_on_a_native_reply_cut_short(server: FakeServer, client: Client) -> None:
    archive = _tar({"m0": os.urandom(1000), "m1": os.urandom(400_000)})  # cut inside m1
    server.route = lambda req: Reply(200, archive, cut_after=len(archive) // 2)
    batch = client.batch(["m0", "m1"], bucket=client.bucket("b"))
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        list(batch.get())


# -- request bodies -------------------------------------------------------------------------


def _transport_for(client: Client, body: object) -> type:
    manager = client._request_client.session_manager
    url = f"{client._request_client.base_url}/objects/b/o"
    return type(select_transport("PUT", url, body, manager.session, manager.native_client))


@pytest.mark.parametrize(
    "body",
    [PAYLOAD, bytearray(PAYLOAD), memoryview(b"x" + PAYLOAD + b"y")[1:-1]],
    ids=["bytes", "bytearray", "memoryview-slice"],
)
def test_buffer_bodies_go_native_as_they_are(
    server: FakeServer, client: Client, body: bytes | bytearray | memoryview
) -> None:
    server.route = lambda req: Reply(200, b"", {"Ais-Version": "7"})
    assert _transport_for(client, body) is NativeTransport
    resp = client.bucket("b").object("o").get_writer().put_content(body)  # type: ignore[arg-type]
    assert server.requests[-1].body == PAYLOAD
    assert server.requests[-1].headers["Content-Length"] == str(len(PAYLOAD))
    # The official SDK's return type, built from the native reply.
    assert isinstance(resp, requests.Response)
    assert (resp.status_code, resp.headers["ais-version"], resp.content) == (200, "7", b"")
    assert resp.request is not None and resp.request.method == "PUT"
    assert resp.request.url == resp.url and "/v1/objects/b/o" in resp.url


def test_file_body_is_sent_from_its_position(
    server: FakeServer, client: Client, tmp_path: Path
) -> None:
    server.route = lambda req: Reply(200)
    path = tmp_path / "f.bin"
    path.write_bytes(PAYLOAD)
    with open(path, "rb") as f:
        f.seek(1000)
        assert _transport_for(client, f) is NativeTransport
        client.bucket("b").object("o").get_writer().put_content(f)  # type: ignore[arg-type]
        assert f.tell() == 1000  # the file's position is left alone
    assert server.requests[-1].body == PAYLOAD[1000:]
    client.bucket("b").object("p").get_writer().put_file(path)
    assert server.requests[-1].body == PAYLOAD


def _other_address() -> str | None:
    """An IPv4 address of this machine other than a loopback one, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # a UDP connect sends nothing: it only picks a route
        except OSError:
            return None
        addr: str = s.getsockname()[0]
    return None if addr.startswith("127.") else addr


@pytest.mark.parametrize("peer", ["loopback", "other"])
def test_large_file_body_from_an_offset(tmp_path: Path, peer: str) -> None:
    """To a server on loopback a file body goes through a buffer (256 KiB at a time), to any
    other address with sendfile: either way every byte from the offset, the position kept."""
    host = "127.0.0.1" if peer == "loopback" else _other_address()
    if host is None:
        pytest.skip("this machine has no address but loopback")
    data = os.urandom(3 * 256 * 1024 + 12345)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    server = FakeServer(host=host)
    try:
        server.route = lambda req: Reply(200)
        client = Client(server.url, retry_config=fast_retry_config(), timeout=(2, 5))
        with open(path, "rb") as f:
            f.seek(777)
            assert _transport_for(client, f) is NativeTransport
            client.bucket("b").object("o").get_writer().put_content(f)  # type: ignore[arg-type]
            assert f.tell() == 777
        assert server.requests[-1].body == data[777:]
        client.bucket("b").object("p").get_writer().put_file(path)
        assert server.requests[-1].body == data
    finally:
        server.close()


def test_file_body_follows_a_redirect_and_a_retry_whole(
    server: FakeServer, client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(PAYLOAD)
    target = FakeServer()
    try:
        target.route = lambda req: Reply(200)
        attempts: list[Req] = []

        def route(req: Req) -> Reply:
            attempts.append(req)
            if len(attempts) == 1:
                return Reply(drop=True)  # a network failure: the SDK sends it again
            return Reply(307, b"", {"Location": f"{target.url}{req.path}"})

        server.route = route
        client.bucket("b").object("o").get_writer().put_file(path)
        assert [len(r.body) for r in attempts] == [len(PAYLOAD)] * 2
        assert [r.body for r in target.requests] == [PAYLOAD]
    finally:
        target.close()


@pytest.mark.parametrize("kind", ["bytes", "file"])
def test_reply_sent_before_the_body_was_read_is_the_outcome(
    server: FakeServer, client: Client, tmp_path: Path, kind: str
) -> None:
    # A server that refuses an upload at its head and closes: the send breaks off (the body
    # is far larger than the socket buffers), yet its reply is what the caller sees.
    doc = b'{"message":"bucket \\"ais://b\\" does not exist","status":404}'
    server.early_reply = Reply(404, doc)
    big = os.urandom(64 << 20)
    writer = client.bucket("b").object("o").get_writer()
    with pytest.raises(ErrBckNotFound):
        if kind == "bytes":
            writer.put_content(big)
        else:
            path = tmp_path / "big.bin"
            path.write_bytes(big)
            writer.put_file(path)
    assert len(server.requests) == 1  # an HTTP error: never sent again
