"""The Batch API against a scripted server: the request on the wire, validation, and how
replies (streamed tar/zip, multipart, errors, cut-short archives) become `(MossOut, bytes)`."""

from __future__ import annotations

import base64
import io
import json
import tarfile
import zipfile

import pytest
from _fakes import FakeServer, Reply
from pydantic import ValidationError

from aistore import Client
from aistore.sdk import Batch
from aistore.sdk.batch.errors import MultipartDecodeError
from aistore.sdk.batch.types import MossIn, MossOut, MossReq, MossResp, encode_request, trusted
from aistore.sdk.enums import Colocation
from aistore.sdk.errors import ErrBckNotFound, ErrObjNotFound


def tar_of(entries: list[tuple[str, bytes]], end: bool = True, mode: str = "w") -> bytes:
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode=mode) as t:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        members_end = t.offset
    # Without `end`: cut before the end-of-archive blocks, as a server that stopped early.
    return bio.getvalue() if end else bio.getvalue()[:members_end]


def zip_of(entries: list[tuple[str, bytes]]) -> bytes:
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return bio.getvalue()


def multipart(meta: dict[str, object], archive: bytes, boundary: str = "b" * 60) -> Reply:
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n'.encode()
        + json.dumps(meta).encode()
        + b"\n\r\n--"
        + boundary.encode()
        + b'\r\nContent-Disposition: form-data; name="archive"; filename="get-batch[x]"\r\n'
        + b"Content-Type: application/octet-stream\r\n\r\n"
        + archive
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return Reply(200, body, {"Content-Type": f"multipart/mixed; boundary={boundary}"})


def test_request_on_the_wire(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b/a", b"A"), ("b/s.tar/x", b"X")]))
    bck = client.bucket("b")
    batch = client.batch(["a"], bucket=bck, colocation=Colocation.TARGET_AWARE)
    batch.add("s.tar", archpath="x", opaque=b"\xfb\xff", start=0, length=-1)
    got = list(batch.get())
    req = server.requests[-1]
    assert req.method == "GET"
    assert req.path == "/v1/ml/moss/b"
    assert req.query == {"provider": "ais", "coloc": "1"}
    assert req.headers["Content-Type"] == "application/json"
    assert json.loads(req.body) == {
        "in": [
            {"objname": "a", "bucket": "b", "provider": "ais"},
            {
                "objname": "s.tar",
                "bucket": "b",
                "provider": "ais",
                "opaque": "+/8=",
                "archpath": "x",
                "length": -1,
            },
        ],
        "mime": ".tar",
        "coer": True,
        "onob": False,
        "strm": True,
        "coloc": 1,
    }
    assert [d for _, d in got] == [b"A", b"X"]
    assert got[1][0].opaque == b"\xfb\xff"
    assert got[1][0].archpath == "x"
    assert got[0][0].archpath == ""
    assert got[0][0].size == 1
    assert len(batch) == 0  # cleared once sent


def test_objects_from_several_buckets_need_no_default(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b1/o", b"1"), ("b2/o", b"2"), ("b3/o", b"3")]))
    batch = client.batch([client.bucket("b1").object("o"), client.bucket("b2").object("o")])
    batch.add("o", bck="b3", provider="ais")
    assert [d for _, d in batch.get()] == [b"1", b"2", b"3"]
    req = server.requests[-1]
    assert req.path == "/v1/ml/moss" and req.query == {}
    assert [i["bucket"] for i in json.loads(req.body)["in"]] == ["b1", "b2", "b3"]


def test_placeholders_get_err_msg_in_streaming_mode(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(
        200,
        tar_of(
            [
                ("__404__/b/gone", b""),
                ("b/empty", b""),
                ("__404__/b/s.tar/x", b""),
                ("__404__/b/t.tar", b""),
            ]
        ),
    )
    batch = client.batch(["gone", "empty"], bucket=client.bucket("b"))
    batch.add("s.tar", archpath="x").add("t.tar", archpath="y")
    outs = [o for o, _ in batch.get()]
    assert [o.err_msg for o in outs] == [
        "Batch entry failed on the server",
        None,
        "Batch entry failed on the server",
        "Batch entry failed on the server",
    ]


@pytest.mark.parametrize("fmt", [".tgz", ".tar.gz", ".zip"])
def test_compressed_and_zip_replies(server: FakeServer, client: Client, fmt: str) -> None:
    entries = [("b/a", b"A" * 1000), ("b/c", b"")]
    body = zip_of(entries) if fmt == ".zip" else tar_of(entries, mode="w:gz")
    server.route = lambda req: Reply(200, body)
    got = list(client.batch(["a", "c"], bucket=client.bucket("b"), output_format=fmt).get())
    assert [d for _, d in got] == [b"A" * 1000, b""]
    assert json.loads(server.requests[-1].body)["mime"] == fmt


@pytest.mark.parametrize("as_stream", [False, True])
def test_multipart_reply(server: FakeServer, client: Client, as_stream: bool) -> None:
    meta = {
        "uuid": "gbt-1",
        "out": [
            {
                "objname": "a",
                "bucket": "b",
                "provider": "ais",
                "size": 2,
                "opaque": base64.b64encode(b"op").decode(),
            },
            {
                "objname": "gone",
                "bucket": "b",
                "provider": "ais",
                "size": 0,
                "err_msg": "t[x]: ais://b/gone does not exist",
            },
        ],
    }
    server.route = lambda req: multipart(meta, tar_of([("b/a", b"AA"), ("__404__/b/gone", b"")]))
    batch = client.batch(["a", "gone"], bucket=client.bucket("b"), streaming_get=False)
    got = list(batch.get(decode_as_stream=as_stream))
    assert got[0] == (MossOut(objname="a", bucket="b", provider="ais", size=2, opaque=b"op"), b"AA")
    assert got[1][0].err_msg == "t[x]: ais://b/gone does not exist"
    assert json.loads(server.requests[-1].body)["strm"] is False


def test_malformed_multipart(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"not multipart", {"Content-Type": "application/x-tar"})
    with pytest.raises(MultipartDecodeError):
        client.batch(["a"], bucket=client.bucket("b"), streaming_get=False).get()


def test_cut_short_archive_raises(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b/a", b"A")], end=False))
    gen = client.batch(["a", "b"], bucket=client.bucket("b")).get()
    assert next(gen)[1] == b"A"
    with pytest.raises(RuntimeError, match="Failed to read tar archive stream"):
        next(gen)


def test_more_members_than_items(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b/a", b"A"), ("b/extra", b"E")]))
    with pytest.raises(RuntimeError, match="missing batch metadata"):
        list(client.batch(["a"], bucket=client.bucket("b")).get())


def test_fewer_members_than_items(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b/a", b"A")]))
    with pytest.raises(RuntimeError, match="holds 1 files for 2"):
        list(client.batch(["a", "c"], bucket=client.bucket("b")).get())


def test_http_errors_raise_at_get(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(
        404, b'{"message":"bucket \\"ais://nob\\" does not exist","status":404}'
    )
    with pytest.raises(ErrBckNotFound):
        client.batch(["a"], bucket=client.bucket("nob")).get()
    server.route = lambda req: Reply(
        404, b'{"message":"t[x]: ais://b/gone does not exist","status":404}'
    )
    with pytest.raises(ErrObjNotFound):
        client.batch(["gone"], bucket=client.bucket("b"), cont_on_err=False).get()


def test_raw_reply(server: FakeServer, client: Client) -> None:
    body = tar_of([("b/a", b"A")])
    server.route = lambda req: Reply(200, body)
    raw = client.batch(["a"], bucket=client.bucket("b")).get(raw=True)
    try:
        assert raw.read() == body
    finally:
        raw.close()


def test_keep_batch_and_reuse(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, tar_of([("b/a", b"A")]))
    batch = client.batch(["a"], bucket=client.bucket("b"))
    assert [d for _, d in batch.get(clear_batch=False)] == [b"A"]
    assert len(batch) == 1
    assert [d for _, d in batch.get()] == [b"A"]
    assert len(batch) == 0


def test_validation(client: Client) -> None:
    rc = client._request_client
    with pytest.raises(ValueError, match="Bucket must be provided"):
        Batch(rc, ["a"])
    with pytest.raises(ValueError, match="Unsupported object type"):
        Batch(rc, [1], bucket=client.bucket("b"))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="Unsupported output format"):
        Batch(rc, output_format=".rar")
    with pytest.raises(NotImplementedError):
        Batch(rc, colocation=Colocation.TARGET_AND_SHARD_AWARE)
    with pytest.raises(ValueError, match="Invalid colocation"):
        Batch(rc, colocation=7)  # type: ignore[arg-type]
    batch = Batch(rc, bucket=client.bucket("b"))
    with pytest.raises(ValueError, match="No objects added"):
        batch.get()
    with pytest.raises(ValueError, match="start=-1 must be >= 0"):
        batch.add("a", start=-1, length=3)
    with pytest.raises(ValueError, match="length=-2"):
        batch.add("a", length=-2)
    with pytest.raises(ValueError, match="requires length"):
        batch.add("a", start=5)
    with pytest.raises(ValueError, match="together"):
        batch.add("a", bck="x")
    with pytest.raises(ValueError, match="cannot be combined"):
        batch.add(client.bucket("b").object("o"), bck="x", provider="ais")
    batch.add("a")
    with pytest.raises(ValueError, match="tar_buffer_size"):
        batch.get(tar_buffer_size=0)
    with pytest.raises(ValueError, match="requires TAR"):
        Batch(rc, ["a"], bucket=client.bucket("b"), output_format=".zip").get(tar_buffer_size=10)
    assert repr(batch) == "Batch(objects=1, format=.tar)"
    assert batch.requests_list == [MossIn(obj_name="a", bck="b", provider="ais")]


def test_wire_types() -> None:
    req = MossReq(output_format=".zip", streaming_get=True).add(MossIn(obj_name="o", start=0))
    assert req.dict() == {"in": [{"objname": "o", "start": 0}], "mime": ".zip", "strm": True}
    assert MossIn(obj_name="o").dict() == {"objname": "o"}
    out = MossOut.model_validate(
        {"objname": "o", "bucket": "b", "provider": "ais", "opaque": "-_8"}
    )
    assert out.opaque == b"\xfb\xff"
    assert MossOut(objname="o", bucket="b", provider="ais", opaque="a").opaque is None
    resp = MossResp.model_validate_json(
        '{"out":[{"objname":"o","bucket":"b","provider":"ais","size":3}],"uuid":"u"}'
    )
    assert resp.out[0].size == 3 and resp.out[0].err_msg is None
    with pytest.raises(ValidationError):
        MossIn(obj_name="o").obj_name = "x"  # type: ignore[misc]  # frozen


def test_fast_paths_match_pydantic() -> None:
    values = {"obj_name": "o", "bck": "b", "provider": "ais", "archpath": "x", "length": -1}
    fast, slow = trusted(MossIn, values), MossIn(**values)
    assert fast == slow and hash(fast) == hash(slow) and fast.dict() == slow.dict()
    out = trusted(MossOut, {"obj_name": "o", "bucket": "b", "provider": "ais", "size": 3})
    assert out == MossOut(objname="o", bucket="b", provider="ais", size=3)
    req = MossReq(output_format=".tgz", cont_on_err=False, streaming_get=True)
    req.add(slow).add(MossIn(obj_name="p", opaque="aGk=", start=0))
    assert json.loads(encode_request(req)) == req.dict()


def test_models_sharing_a_fields_set_stay_independent(server: FakeServer, client: Client) -> None:
    """Items of one batch share one fields set (a fast path); each still reads like a model
    pydantic built, and changing one changes no other."""
    bucket = client.bucket("b")
    batch = client.batch(["a", bucket.object("c")], bucket=bucket)
    ins = batch.requests_list
    assert ins == [MossIn(obj_name=n, bck="b", provider="ais") for n in ("a", "c")]
    assert all(i.model_fields_set == {"obj_name", "bck", "provider"} for i in ins)
    assert ins[0].model_copy(update={"archpath": "x"}).model_fields_set >= {"archpath"}
    assert "archpath" not in ins[1].model_fields_set
    server.route = lambda req: Reply(200, tar_of([("b/a", b"1"), ("b/c", b"22")]))
    outs = [o for o, _ in batch.get(clear_batch=False)]
    outs[0].err_msg = "changed"
    assert outs[1].err_msg is None and "size" in outs[1].model_fields_set
    assert outs[1].model_dump(exclude_unset=True) == MossOut(
        objname="c", archpath="", bucket="b", provider="ais", size=2, opaque=None, err_msg=None
    ).model_dump(exclude_unset=True)


def test_add_checks_types(client: Client) -> None:
    batch = client.batch(bucket=client.bucket("b"))
    with pytest.raises(ValueError, match="Unsupported object type"):
        batch.add(7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="archpath must be a string"):
        batch.add("a", archpath=b"x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length must be an integer"):
        batch.add("a", length="5")  # type: ignore[arg-type]
    assert len(batch) == 0
