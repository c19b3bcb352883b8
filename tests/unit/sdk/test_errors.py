"""Error classification from reply bodies, and exceptions crossing process boundaries."""

from __future__ import annotations

import json
import pickle

import pytest
import requests
from _fakes import FakeServer, Reply

from aistore import Client
from aistore._internal.error_map import classify, extract_and_parse_url
from aistore.sdk import errors
from aistore.sdk.obj.obj_file import errors as file_errors


@pytest.mark.parametrize(
    ("status", "body", "method", "expected"),
    [
        (404, "t[abc]: ais://bck/obj does not exist", "GET", errors.ErrObjNotFound),
        (404, 'bucket "ais://bck" does not exist', "GET", errors.ErrBckNotFound),
        (404, 'bucket "ais://bck" does not exist', "DELETE", errors.ErrBckNotFound),
        (404, 'bucket "s3://bck" does not exist', "GET", errors.ErrRemoteBckNotFound),
        (404, 'bucket "gcp://bck" does not exist', "GET", errors.ErrRemoteBckNotFound),
        (404, 'bucket "ais://@uuid#ns" does not exist', "GET", errors.ErrRemoteBckNotFound),
        (404, "aws://bck/dir/obj not found", "HEAD", errors.ErrObjNotFound),
        (404, 'etl job "x" not found', "GET", errors.ErrETLNotFound),
        (404, "upload id not found", "POST", errors.AISError),
        (404, "", "HEAD", errors.AISError),
        (404, 'no such "foo://bck"', "GET", errors.AISError),
        (409, 'bucket "ais://bck" already exists', "POST", errors.ErrBckAlreadyExists),
        (409, "ais://bck/obj is busy", "GET", errors.ErrGETConflict),
        (409, "anything at all", "GET", errors.ErrGETConflict),
        (409, "ais://bck/obj is busy", "PUT", errors.AISError),
        (409, 'etl job "x" already exists', "PUT", errors.ErrETLAlreadyExists),
        (400, 'bucket "ais://bck" does not exist', "GET", errors.AISError),
        (500, "ais://bck/obj: disk error", "GET", errors.AISError),
    ],
)
def test_classification(status: int, body: str, method: str, expected: type) -> None:
    assert classify(status, body, method) is expected


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        ("x ais://b/o y", ("ais", "b", True)),
        ('"ais://b"', ("ais", "b", False)),
        ("ais://b", ("ais", "b", False)),
        ("gs://b-1.x_y/o", ("gs", "b-1.x_y", True)),
        ("ais://@u#ns/b", ("ais", "@u#ns", True)),
        ("no bucket here", None),
        ("http://host/v1", None),
        ("ais://" + "b" * 133, None),
        ("ais://" + "b" * 132 + "/o", ("ais", "b" * 132, True)),
    ],
)
def test_extract_and_parse_url(msg: str, expected: tuple[str, str, bool] | None) -> None:
    assert extract_and_parse_url(msg) == expected


def _error_json(message: str, status: int) -> bytes:
    return json.dumps({"message": message, "status": status}).encode()


def test_reply_maps_to_class_with_message_url_and_cause(server: FakeServer, client: Client) -> None:
    body = _error_json("t[x]: ais://b/o does not exist", 404)
    server.route = lambda req: Reply(404, body, {"Content-Type": "application/json"})
    with pytest.raises(errors.ErrObjNotFound) as info:
        client.bucket("b").object("o").get_reader().read_all()
    err = info.value
    assert err.status_code == 404
    assert err.message == body.decode()
    assert err.req_url.startswith(f"{server.url}/v1/objects/b/o?")
    assert isinstance(err.__cause__, requests.HTTPError)
    assert str(err) == f"STATUS:404, MESSAGE:{body.decode()}, REQ_URL:{err.req_url}"


def test_failed_head_is_plain_ais_error_with_header_message(
    server: FakeServer, client: Client
) -> None:
    doc = '{"message":"ais://b/o does not exist","status":404}'
    server.route = lambda req: Reply(404, b"", {"Hdr-Error": doc})
    with pytest.raises(errors.AISError) as info:
        client.bucket("b").object("o").head()
    assert type(info.value) is errors.AISError
    assert info.value.status_code == 404
    assert info.value.message == doc


def test_create_exist_ok_and_delete_missing_ok(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(
        409 if req.method == "POST" else 404,
        _error_json('bucket "ais://b" already exists', 409)
        if req.method == "POST"
        else _error_json('bucket "ais://b" does not exist', 404),
    )
    bucket = client.bucket("b")
    assert bucket.create(exist_ok=True) is bucket
    with pytest.raises(errors.ErrBckAlreadyExists):
        bucket.create()
    bucket.delete(missing_ok=True)
    with pytest.raises(errors.ErrBckNotFound):
        bucket.delete()


ROUND_TRIP = [
    errors.APIRequestError(400, "bad", "http://h/v1/x"),
    errors.AISError(500, "boom", "http://h/v1/x", requests.Request("GET", "http://h").prepare()),
    errors.AISRetryableError(503, "later", "u"),
    errors.ErrObjNotFound(404, "ais://b/o", "u"),
    errors.ErrGETConflict(409, "busy", "u"),
    errors.ErrBckNotFound(404, "ais://b", "u"),
    errors.ErrRemoteBckNotFound(404, "s3://b", "u"),
    errors.ErrBckAlreadyExists(409, "ais://b", "u"),
    errors.ErrETLNotFound(404, "etl job", "u"),
    errors.ErrETLAlreadyExists(409, "etl job", "u"),
    errors.InvalidBckProvider("xyz"),
    errors.Timeout("job 'j'", "after 5s"),
    errors.InvalidObjectRangeIndex("min > max"),
    errors.JobInfoNotFound("nothing"),
    errors.UnexpectedHTTPStatusCode([200, 202], 204),
    errors.InvalidURLException("ais://"),
    errors.NoTargetError(3),
    errors.InvalidPipelineError("bad pipeline"),
    file_errors.ObjectFileReaderMaxResumeError(ConnectionResetError("reset"), 5),
    file_errors.ObjectFileReaderUnexpectedEOF(10, 20),
    file_errors.ObjectFileReaderStreamError(requests.ConnectionError("refused")),
]


@pytest.mark.parametrize("err", ROUND_TRIP, ids=lambda e: type(e).__name__)
def test_exceptions_survive_pickling(err: Exception) -> None:
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err)
    assert str(copy) == str(err)
    for attr in ("status_code", "message", "req_url", "provider", "actual", "expected", "url"):
        if hasattr(err, attr):
            assert getattr(copy, attr) == getattr(err, attr)
    if isinstance(err, errors.APIRequestError):
        assert copy.req is None
    if hasattr(err, "original_error"):
        assert type(copy.original_error) is type(err.original_error)


def test_official_messages() -> None:
    assert str(errors.InvalidBckProvider("x")) == "Invalid bucket provider: 'x'"
    assert str(errors.NoTargetError(2)) == (
        "No available targets in the cluster map. Total nodes: 2"
    )
    assert str(errors.UnexpectedHTTPStatusCode([200, 202], 204)) == (
        "Unexpected status code received. Expected one of the following: 200, 202, "
        "but received: 204"
    )
    assert issubclass(errors.InvalidPipelineError, ValueError)
    assert issubclass(errors.ErrObjNotFound, errors.AISRetryableError)
    assert issubclass(errors.ErrBckNotFound, errors.AISError)
    assert not issubclass(errors.ErrBckNotFound, errors.AISRetryableError)
