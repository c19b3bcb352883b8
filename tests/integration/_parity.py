"""Helpers of the SDK-parity integration tests (test_parity_*.py): bulk PUTs, raw AIS actions
and error documents."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

_local = threading.local()


def _session() -> requests.Session:
    if not hasattr(_local, "s"):
        _local.s = requests.Session()
    return _local.s  # type: ignore[no-any-return]


def put_many(
    endpoint: str,
    bucket: str,
    names: Iterable[str],
    data: Callable[[str], bytes] = lambda n: n.encode(),
    workers: int = 8,
) -> None:
    """PUT every name (content `data(name)`) with a few parallel sessions."""

    def put(name: str) -> None:
        r = _session().put(
            f"{endpoint}/v1/objects/{bucket}/{requests.utils.quote(name, safe='/')}",
            data=data(name),
            params={"provider": "ais"},
            timeout=30,
        )
        assert r.status_code == 200, r.text

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(put, names))


def act(
    endpoint: str,
    method: str,
    path: str,
    action: str,
    value: Any = None,
    name: str = "",
    params: dict[str, str] | None = None,
) -> requests.Response:
    """An AIS action message sent as the SDK sends it."""
    return requests.request(
        method,
        f"{endpoint}/v1/{path}",
        json={"action": action, "name": name, "value": value},
        params={"provider": "ais", **(params or {})},
        timeout=30,
    )


def err(resp: requests.Response, status: int) -> str:
    """The message of an AIS error reply (body, or Hdr-Error for HEAD) with that status."""
    assert resp.status_code == status, (resp.status_code, resp.text)
    text = resp.headers.get("Hdr-Error") if resp.request.method == "HEAD" else resp.text
    assert text, resp.headers
    if resp.request.method != "HEAD":
        assert resp.headers["Content-Type"].startswith("application/json")
    doc = json.loads(text)
    assert doc["status"] == status
    message: str = doc["message"]
    return message
