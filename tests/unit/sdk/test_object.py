"""Object requests on the wire: URLs, HEAD, reader options, writers, multipart, copy."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from _fakes import FakeServer, Reply, Req

from aistore import Client
from aistore.sdk import ArchiveConfig, BlobDownloadConfig, Namespace
from aistore.sdk.archive_config import ArchiveMode
from aistore.sdk.obj.object import parse_byte_range

DATA = bytes(range(256)) * 1000


def _serve(data: bytes):  # type: ignore[no-untyped-def]
    """GET with optional single range, HEAD with present, like the real server."""

    def route(req: Req) -> Reply:
        if req.method == "HEAD":
            return Reply(200, b"", {"Content-Length": str(len(data)), "Ais-Present": "true"})
        rng = req.headers.get("Range")
        if rng is None:
            return Reply(200, data, {"Ais-Checksum-Type": "xxhash", "Ais-Version": "1"})
        first, last = parse_byte_range(rng)
        if first is None:
            start, end = max(len(data) - (last or 0), 0), len(data) - 1
        else:
            start, end = first, min(last if last is not None else len(data) - 1, len(data) - 1)
        body = data[start : end + 1]
        return Reply(206, body, {"Content-Range": f"bytes {start}-{end}/{len(data)}"})

    return route


def test_urls_names_and_uname(server: FakeServer, client: Client) -> None:
    obj = client.bucket("b").object("dir/a b#?.txt")
    assert obj.uname == "ais/@#/b/dir/a b#?.txt"
    assert obj.get_semantic_url() == "ais://b/dir/a b#?.txt"
    assert obj.get_url() == f"{server.url}/v1/objects/b/dir/a%20b%23%3F.txt?provider=ais"
    assert obj.get_url(archpath="x/y.jpg").endswith("?provider=ais&archpath=x%2Fy.jpg")
    remote = client.bucket("rb", provider="gs", namespace=Namespace(uuid="u", name="n")).object("o")
    assert remote.uname == "gcp/@u#n/rb/o"
    assert remote.get_semantic_url() == "gcp://rb/o"
    assert remote.query_params == {"provider": "gcp", "namespace": "@u#n"}


def test_head_props_and_cache(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"", {"Content-Length": "42", "Ais-Present": "true"})
    obj = client.bucket("b").object("o")
    assert obj.props_cached is None
    props = obj.head()
    assert server.requests[0].query == {"provider": "ais", "props": "name,size"}
    assert (props.size, props.present, props.name, props.bucket_name) == (42, True, "o", "b")
    assert props.bucket_provider == "ais"
    assert obj.props_cached is props
    obj.props  # noqa: B018 - a property with a request behind it
    assert server.requests[1].query["props"] == "checksum,atime,version,copies,custom,location"
    obj.head("chunked")
    assert server.requests[2].query["props"] == "chunked"


def test_read_all_iter_and_raw(server: FakeServer, client: Client) -> None:
    server.route = _serve(DATA)
    obj = client.bucket("b").object("o")
    assert obj.get_reader().read_all() == DATA
    chunks = list(obj.get_reader(chunk_size=10000))
    assert b"".join(chunks) == DATA
    assert max(len(c) for c in chunks) == 10000
    assert max(len(c) for c in obj.get_reader()) == 32 * 1024
    reader = obj.get_reader()
    assert reader.raw().read() == DATA
    assert reader.attributes.checksum_type == "xxhash"
    assert all(r.method == "GET" for r in server.requests)


@pytest.mark.parametrize(
    ("byte_range", "expected"),
    [
        ("bytes=0-9", DATA[:10]),
        ("bytes=100-", DATA[100:]),
        ("bytes=-500", DATA[-500:]),
        ("bytes=5-5", DATA[5:6]),
    ],
)
def test_byte_range(server: FakeServer, client: Client, byte_range: str, expected: bytes) -> None:
    server.route = _serve(DATA)
    reader = client.bucket("b").object("o").get_reader(byte_range=byte_range)
    assert reader.read_all() == expected
    assert server.requests[-1].headers["Range"] == byte_range
    assert b"".join(reader) == expected
    with reader.as_file() as f:
        assert f.read() == expected


def test_reader_options_on_the_wire(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"x")
    obj = client.bucket("b").object("o")
    obj.get_reader(archive_config=ArchiveConfig(archpath="a/b.txt"), latest=True).read_all()
    obj.get_reader(archive_config=ArchiveConfig(regex="jpg", mode=ArchiveMode.SUFFIX)).read_all()
    obj.get_reader(blob_download_config=BlobDownloadConfig("4MiB", "3")).read_all()
    a, b, c = server.requests
    assert a.query == {
        "provider": "ais",
        "archpath": "a/b.txt",
        "archregx": "",
        "latest-ver": "true",
    }
    assert b.query == {"provider": "ais", "archmode": "suffix", "archpath": "", "archregx": "jpg"}
    assert c.headers["Ais-Blob-Download"] == "true"
    assert (c.headers["Ais-Blob-Chunk"], c.headers["Ais-Blob-Workers"]) == ("4MiB", "3")


def test_reader_writes_to_writer(server: FakeServer, client: Client) -> None:
    server.route = _serve(DATA)
    sink = io.BytesIO()
    client.bucket("b").object("o").get_reader(writer=sink)  # type: ignore[arg-type]
    assert sink.getvalue() == DATA


class _Etl:
    def update_qparams(self, params: dict[str, str]) -> None:
        params["etl_name"] = "x"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_workers": 1}, "at least 2"),
        ({"num_workers": 4, "byte_range": "bytes=0-1"}, "byte_range"),
        ({"num_workers": 4, "blob_download_config": BlobDownloadConfig()}, "blob_download_config"),
        ({"num_workers": 4, "etl": _Etl()}, "etl"),
        ({"byte_range": "bytes=0-1", "blob_download_config": BlobDownloadConfig()}, "byte_range"),
    ],
)
def test_reader_option_conflicts(client: Client, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        client.bucket("b").object("o").get_reader(**kwargs)


def test_parallel_reader_sizes_the_object_at_once(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"", {"Content-Length": "0"})
    with pytest.raises(ValueError, match="non-empty"):
        client.bucket("b").object("o").get_reader(num_workers=4)
    assert [(r.method, r.query.get("props")) for r in server.requests] == [("HEAD", "chunked")]


def test_archive_config_validation() -> None:
    with pytest.raises(ValueError):
        ArchiveConfig(mode=ArchiveMode.PREFIX)
    with pytest.raises(ValueError):
        ArchiveConfig(regex="x")
    with pytest.raises(ValueError):
        ArchiveConfig(archpath="a", regex="x", mode=ArchiveMode.REGEXP)


def test_writer_wire(server: FakeServer, client: Client, tmp_path: Path) -> None:
    handles = iter(["h1", "h2", ""])

    def route(req: Req) -> Reply:
        if "append_type" not in req.query:
            return Reply(200)
        return Reply(200, b"", {"Ais-Append-Handle": next(handles)})

    server.route = route
    writer = client.bucket("b").object("dir/o").get_writer()
    writer.put_content(b"hello")
    path = tmp_path / "f.bin"
    path.write_bytes(DATA)
    writer.put_file(path)
    with pytest.raises(ValueError):
        writer.put_file(tmp_path)
    with pytest.raises(ValueError):
        writer.put_file(tmp_path / "missing")
    assert writer.append_content(b"a") == "h1"
    assert writer.append_content(b"b", handle="h1") == "h2"
    assert writer.append_content(b"", handle="h2", flush=True) == ""
    writer.set_custom_props({"k": "v"}, replace_existing=True)
    put, put_file, app1, app2, flush, patch = server.requests
    assert (put.method, put.path, put.body) == ("PUT", "/v1/objects/b/dir/o", b"hello")
    assert put_file.body == DATA and put_file.headers["Content-Length"] == str(len(DATA))
    assert app1.query == {"provider": "ais", "append_type": "append", "append_handle": ""}
    assert app2.query["append_handle"] == "h1"
    assert flush.query["append_type"] == "flush"
    assert patch.method == "PATCH" and patch.query["set-new-custom"] == "true"
    assert json.loads(patch.body) == {"action": "", "name": "", "value": {"k": "v"}}


def test_file_writer_modes(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"", {"Ais-Append-Handle": "h"})
    writer = client.bucket("b").object("o").get_writer()
    with pytest.raises(ValueError):
        writer.as_file("r")
    with writer.as_file("w") as f:
        assert f.write(b"abc") == 3
        f.write(memoryview(b"de"))
    assert f.closed
    with pytest.raises(ValueError):
        f.write(b"x")
    kinds = [(r.query.get("append_type"), r.body) for r in server.requests]
    # "w" empties the object at creation and again when entering the block.
    assert kinds == [
        (None, b""),
        (None, b""),
        ("append", b"abc"),
        ("append", b"de"),
        ("flush", b""),
    ]
    server.requests.clear()
    with writer.as_file() as f:
        f.flush()  # nothing appended: nothing to flush
    assert server.requests == []


def test_multipart_wire(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"upload-7" if req.method == "POST" else b"")
    mpu = client.bucket("b").object("big").multipart_upload()
    with pytest.raises(ValueError):
        mpu.add_part(1)
    assert mpu.create() is mpu and mpu.upload_id == "upload-7"
    with pytest.raises(ValueError):
        mpu.add_part(0)
    mpu.add_part(2).put_content(b"second")
    mpu.add_part(1).put_content(b"first")
    mpu.complete()
    mpu.abort()
    create, part2, part1, complete, abort = server.requests
    assert json.loads(create.body)["action"] == "mpt-upload"
    assert part2.query == {"provider": "ais", "uploadId": "upload-7", "partNumber": "2"}
    assert part1.body == b"first"
    assert complete.query == {"provider": "ais", "uploadId": "upload-7"}
    assert json.loads(complete.body)["value"] == [
        {"part-number": 2, "etag": ""},
        {"part-number": 1, "etag": ""},
    ]
    assert abort.method == "DELETE" and json.loads(abort.body)["action"] == "mpt-abort"


def test_copy_and_delete(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200)
    src = client.bucket("src").object("a/b")
    src.copy(client.bucket("dst").object("c/d"), latest=True)
    src.delete()
    copy, delete = server.requests
    assert copy.method == "PUT" and copy.body == b""
    assert copy.query == {
        "provider": "ais",
        "object_to": "ais/@#/dst/c/d",
        "latest-ver": "true",
        "synchronize": "false",
    }
    assert (delete.method, delete.path) == ("DELETE", "/v1/objects/src/a/b")


def test_direct_read_goes_to_owning_target(server: FakeServer) -> None:
    target = FakeServer()
    try:
        target.route = _serve(DATA)
        smap = {
            "tmap": {
                "t1": {
                    "daemon_id": "t1",
                    "daemon_type": "target",
                    "public_net": {"direct_url": target.url},
                }
            },
            "pmap": {},
            "proxy_si": {
                "daemon_id": "p1",
                "daemon_type": "proxy",
                "public_net": {"direct_url": server.url},
            },
        }
        server.route = lambda req: Reply(200, json.dumps(smap).encode())
        client = Client(server.url)
        assert client.bucket("b").object("o").get_reader(direct=True).read_all() == DATA
        assert [r.path for r in server.requests] == ["/v1/daemon"]
        assert [r.path for r in target.requests] == ["/v1/objects/b/o"]
    finally:
        target.close()
