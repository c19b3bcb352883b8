"""The one error path of the server (issue 17): handlers return a Status, the router replies with
it. These pin what that reply carries for the errors whose path moved: headers staged by the
handler (Content-Range of a 416), the AIS error code carried by the Status (ErrBckNotFound in
"tcode", never inferred from the message text), HEAD errors in Hdr-Error, and errors that come
after the request body was read."""

from __future__ import annotations

import json
import uuid

from _util import create_bucket, destroy_bucket, error_doc, obj_path, raw_request

from aistore.server import LocalServer


def _bucket(ep: str) -> str:
    name = "errpath-" + uuid.uuid4().hex[:8]
    create_bucket(ep, name)
    return name


def test_unsatisfiable_range_is_416_with_content_range(ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        assert raw_request(ep, "PUT", obj_path(b, "five"), body=b"12345").status == 200
        r = raw_request(ep, "GET", obj_path(b, "five"), headers={"Range": "bytes=10-20"})
        assert r.status == 416
        assert r.header("Content-Range") == "bytes */5"
        assert r.header("X-Content-Type-Options") == "nosniff"
        error_doc(r.status, r.headers, r.body, "GET")
        # Malformed (not "bytes="): no size is named.
        r = raw_request(ep, "GET", obj_path(b, "five"), headers={"Range": "pages=1-2"})
        assert r.status == 416 and r.header("Content-Range") is None
        # The staged header belongs to that one exchange: a later error on a kept-alive
        # connection does not carry it (each request gets a fresh Exchange).
        r = raw_request(ep, "GET", obj_path(b, "absent"))
        assert r.status == 404 and r.header("Content-Range") is None
    finally:
        destroy_bucket(ep, b)


def test_bucket_not_found_carries_its_code(ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    missing = "nobucket-" + uuid.uuid4().hex[:8]
    for method in ("GET", "HEAD", "DELETE"):
        r = raw_request(ep, method, obj_path(missing, "o"))
        assert r.status == 404, (method, r.status)
        doc = error_doc(r.status, r.headers, r.body, method)
        assert doc.get("tcode") == "ErrBckNotFound", doc
        assert doc["message"] == f'bucket "ais://{missing}" does not exist'
    r = raw_request(ep, "PUT", obj_path(missing, "o"), body=b"x" * 1000)
    assert (
        r.status == 404
        and error_doc(r.status, r.headers, r.body, "PUT").get("tcode") == "ErrBckNotFound"
    )


def test_object_not_found_has_no_bucket_code(ais_server: LocalServer) -> None:
    """An object whose name reads like the bucket message is still an object 404: the code travels
    on the Status, the text decides nothing."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        for method in ("GET", "HEAD"):
            r = raw_request(ep, method, obj_path(b, 'bucket "x" does not exist'))
            assert r.status == 404
            doc = error_doc(r.status, r.headers, r.body, method)
            assert "tcode" not in doc, doc
    finally:
        destroy_bucket(ep, b)


def test_error_after_body_read(ais_server: LocalServer) -> None:
    """A PUT whose checksum does not match fails after its body was read: a 400 on the same path,
    and the connection stays usable."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        r = raw_request(
            ep,
            "PUT",
            obj_path(b, "bad"),
            body=b"hello",
            headers={"Ais-Checksum-Type": "md5", "Ais-Checksum-Value": "0" * 32},
        )
        assert r.status == 400
        assert error_doc(r.status, r.headers, r.body, "PUT")["message"].startswith(
            "BAD DATA CHECKSUM"
        )
        assert raw_request(ep, "HEAD", obj_path(b, "bad")).status == 404
    finally:
        destroy_bucket(ep, b)


def test_getbatch_error_before_the_first_byte(ais_server: LocalServer) -> None:
    """A streamed GetBatch that fails before anything was sent is a normal error reply."""
    ep = ais_server.endpoint
    b = _bucket(ep)
    try:
        body = json.dumps(
            {"mime": ".tar", "strm": True, "in": [{"objname": "absent", "bucket": b}]}
        ).encode()
        r = raw_request(
            ep, "GET", f"/v1/ml/moss/{b}", body=body, headers={"Content-Type": "application/json"}
        )
        assert r.status == 404, r.body
        error_doc(r.status, r.headers, r.body, "GET")
        missing = "nobucket-" + uuid.uuid4().hex[:8]
        body = json.dumps(
            {"mime": ".tar", "strm": True, "in": [{"objname": "o", "bucket": missing}]}
        ).encode()
        r = raw_request(
            ep, "GET", f"/v1/ml/moss/{b}", body=body, headers={"Content-Type": "application/json"}
        )
        assert r.status == 404
        assert error_doc(r.status, r.headers, r.body, "GET").get("tcode") == "ErrBckNotFound"
    finally:
        destroy_bucket(ep, b)
