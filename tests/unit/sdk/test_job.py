"""Job status and the three ways of waiting, against scripted replies."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from _fakes import FakeServer, Reply, Req

from aistore import Client
from aistore._internal.timefmt import parse_go_time
from aistore.sdk import WaitResult
from aistore.sdk.errors import JobInfoNotFound, Timeout
from aistore.sdk.types import JobSnap

END_NS = 1_700_000_000_123_456_789


def _json(doc: object) -> Reply:
    return Reply(200, json.dumps(doc).encode(), {"Content-Type": "application/json"})


def _snap(kind: str, **fields: object) -> dict[str, object]:
    return {"id": "j1", "kind": kind, "end-time": "0001-01-01T00:00:00Z", **fields}


def test_status_wire(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _json({"uuid": "j1", "end_time": 0})
    status = client.job("j1", "copy-bck").status()
    assert status.uuid == "j1" and status.end_time == 0
    (req,) = server.requests
    assert (req.method, req.path, req.query) == ("GET", "/v1/cluster", {"what": "status"})
    assert json.loads(req.body) == {
        "ID": "j1",
        "Kind": "copy-bck",
        "DaemonID": "",
        "Bck": None,
        "Buckets": None,
    }
    with pytest.raises(ValueError):
        client.job().status()


def test_wait_terminal_resolves_kind_then_polls_status(server: FakeServer, client: Client) -> None:
    polls = iter([{"uuid": "j1", "end_time": 0}, {"uuid": "j1", "end_time": END_NS}])

    def route(req: Req) -> Reply:
        if req.query["what"] == "qryxstats":
            return _json({"t1": [_snap("copy-bck")]})
        return _json(next(polls))

    server.route = route
    result = client.job("j1").wait(timeout=1, verbose=False)
    assert result and result.success and result.error is None
    assert result.end_time == datetime.fromtimestamp(END_NS / 1e9, tz=timezone.utc)
    assert [r.query["what"] for r in server.requests] == ["qryxstats", "status", "status"]


def test_wait_reports_abort(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _json({"uuid": "j1", "end_time": END_NS, "aborted": True})
    result = client.job("j1", "rechunk").wait(timeout=1, verbose=False)
    assert not result and result.error == "aborted"


def test_wait_times_out(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _json({"uuid": "j1", "end_time": 0})
    with pytest.raises(Timeout):
        client.job("j1", "copy-bck").wait(timeout=0, verbose=False)


def test_idle_kind_needs_two_idle_polls(server: FakeServer, client: Client) -> None:
    replies = iter(
        [
            {"t1": [_snap("list", is_idle=False)]},
            {"t1": [_snap("list", is_idle=True)]},
            {"t1": [_snap("list", is_idle=True)]},
        ]
    )
    server.route = lambda req: _json(next(replies))
    assert client.job("j1", "list").wait(timeout=2, verbose=False).success
    assert len(server.requests) == 3


def test_single_node_kind_and_unknown_job(server: FakeServer, client: Client) -> None:
    end = "2026-01-02T03:04:05.123456789Z"
    server.route = lambda req: _json({"t1": [_snap("blob-download", **{"end-time": end})]})
    result = client.job("j1", "blob-download").wait(timeout=1, verbose=False)
    assert result.success and result.end_time == parse_go_time(end)
    server.route = lambda req: _json({})
    with pytest.raises(JobInfoNotFound):
        client.job("nope").wait(timeout=1, verbose=False)


def test_wait_result_from_snapshots() -> None:
    done = JobSnap.model_validate({"end-time": "2026-01-02T03:04:05Z"})
    running = JobSnap.model_validate({"end-time": "0001-01-01T00:00:00Z"})
    failed = JobSnap.model_validate({"abort-err": "disk full", "aborted": True})
    assert WaitResult.from_snapshots("j", [done]).end_time == datetime(
        2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc
    )
    assert WaitResult.from_snapshots("j", [done, running]).end_time is None
    bad = WaitResult.from_snapshots("j", [done, failed])
    assert not bad and bad.error == "disk full"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
        ("2026-01-02T03:04:05.5Z", datetime(2026, 1, 2, 3, 4, 5, 500000, tzinfo=timezone.utc)),
        (
            "2026-01-02T05:04:05.123456789+02:00",
            datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc),
        ),
    ],
)
def test_go_time(text: str, expected: datetime) -> None:
    assert parse_go_time(text) == expected


def test_go_time_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        parse_go_time("yesterday")
