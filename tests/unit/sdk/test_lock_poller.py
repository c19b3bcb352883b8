"""`LockPoller`: check-lock polling against a server that holds an object's write lock."""

from __future__ import annotations

import json
import time

import requests
from _fakes import FakeServer, Reply, Req

from aistore import Client
from aistore.sdk.lock_poller import MIN_WAIT_FLOOR, LockPoller
from aistore.sdk.retry_config import ColdGetConf


class LockedFor:
    """Answers check-lock with 423 the first `polls` times, then 200; HEAD gives the size."""

    def __init__(self, polls: int, size: int = 0) -> None:
        self.polls = polls
        self.size = size

    def __call__(self, req: Req) -> Reply:
        if req.method == "HEAD":
            return Reply(200, b"", {"Content-Length": str(self.size)})
        assert req.method == "POST" and json.loads(req.body)["action"] == "check-lock"
        if self.polls > 0:
            self.polls -= 1
            return Reply(423, b'{"message": "locked", "status": 423}')
        return Reply(200)


def _failed_get(client: Client) -> requests.PreparedRequest:
    url = client.bucket("b").object("dir/o 1").get_url()
    return requests.Request("GET", url, params={"latest": "true"}).prepare()


def test_returns_at_once_when_not_locked(server: FakeServer, client: Client) -> None:
    server.route = LockedFor(polls=0)
    pauses: list[float] = []
    LockPoller(client._request_client, ColdGetConf(), sleep=pauses.append).wait_for_unlock(
        _failed_get(client)
    )
    assert pauses == []
    [check] = server.requests
    assert check.method == "POST" and check.path.endswith("/v1/objects/b/dir/o%201")
    assert check.query == {"provider": "ais"}  # only the bucket's parameters are kept


def test_polls_with_growing_pauses_until_unlocked(server: FakeServer, client: Client) -> None:
    size = 100 * 10**9 // 8  # 100 Gbit: 10 s at the default 10 Gbit/s
    server.route = LockedFor(polls=3, size=size)
    pauses: list[float] = []
    LockPoller(client._request_client, ColdGetConf(), sleep=pauses.append).wait_for_unlock(
        _failed_get(client)
    )
    assert [r.method for r in server.requests] == ["POST", "HEAD", "POST", "POST", "POST"]
    assert server.requests[1].query["props"] == "size"
    assert pauses == [2.5, 5.0, 10.0]  # starts at expected / 4, doubles


def test_small_objects_poll_at_the_floor_and_stop_at_max_cold_wait(
    server: FakeServer, client: Client
) -> None:
    server.route = LockedFor(polls=1000, size=1)
    conf = ColdGetConf(max_cold_wait=1)
    LockPoller(client._request_client, conf, sleep=lambda s: time.sleep(0.05)).wait_for_unlock(
        _failed_get(client)
    )
    assert server.requests[-1].method == "POST"
    pauses: list[float] = []
    poller = LockPoller(client._request_client, ColdGetConf(), sleep=pauses.append)
    server.route = LockedFor(polls=1, size=1)
    poller.wait_for_unlock(_failed_get(client))
    assert pauses == [MIN_WAIT_FLOOR]
