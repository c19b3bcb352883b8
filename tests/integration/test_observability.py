"""Observability beyond /metrics: the structured access log (--access-log) and the server log's
level (--log-level, set-config log.level), on a real server."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from aistore.sdk.errors import ErrObjNotFound
from aistore.server import LocalServer, find_server_binary


@pytest.fixture(scope="module")
def access_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("obs") / "access.log"


@pytest.fixture(scope="module")
def server(access_log: Path) -> Iterator[LocalServer]:
    args = ["--access-log", str(access_log), "--log-level", "warning"]
    with LocalServer(num_mountpaths=1, args=args) as srv:
        yield srv


def log_lines(path: Path, marker: str, want: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The access log's entries whose path contains `marker`, once there are `want` of them
    (the writer thread flushes within a second)."""
    deadline = time.monotonic() + timeout
    while True:
        entries = [json.loads(line) for line in path.read_text().splitlines()]
        mine = [e for e in entries if marker in e["path"]]
        if len(mine) >= want or time.monotonic() > deadline:
            return mine
        time.sleep(0.05)


def scrape(endpoint: str) -> dict[str, float]:
    """The node-wide samples by name: {"ais_target_get_count": v}."""
    out: dict[str, float] = {}
    text = requests.get(endpoint + "/metrics", timeout=10).text
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            name = s.name
            if fam.type == "counter" and f"\n{name}{{" not in text and f"\n{name} " not in text:
                name = name.removesuffix("_total")
            # AIS's families carry bucket="" and xkind="" (no per-bucket figures): the node's.
            labels = {k: v for k, v in s.labels.items() if k != "node_id" and v != ""}
            if not labels:
                out[name] = s.value
    return out


# ---- access log --------------------------------------------------------------------------------


def test_access_log_has_one_line_per_request(server: LocalServer, access_log: Path) -> None:
    client = server.client()
    b = client.bucket("alog").create()
    b.object("alog-obj").get_writer().put_content(b"x" * 10240)
    assert len(b.object("alog-obj").get_reader().read_all()) == 10240
    b.object("alog-obj").head()
    with pytest.raises(ErrObjNotFound):
        b.object("alog-missing").get_reader().read_all()
    requests.get(
        server.endpoint + "/s3/alog/alog-obj?x-id=GetObject", timeout=10
    )  # S3 front end too
    mine = log_lines(access_log, "/alog/alog-", 5)
    got = [(e["method"], e["path"], e["status"]) for e in mine]
    assert got == [
        ("PUT", "/v1/objects/alog/alog-obj", 200),
        ("GET", "/v1/objects/alog/alog-obj", 200),
        ("HEAD", "/v1/objects/alog/alog-obj", 200),
        ("GET", "/v1/objects/alog/alog-missing", 404),
        ("GET", "/s3/alog/alog-obj", 200),
    ]
    get = mine[1]
    assert get["bytes"] == 10240
    assert isinstance(get["duration_us"], int) and 0 <= get["duration_us"] < 30_000_000
    assert get["remote"].startswith("127.0.0.1:")
    assert get["time"].endswith("Z") and get["time"][:4].isdigit()
    assert "?" not in mine[4]["path"]  # no query: a presigned URL's would carry a token


def test_access_log_counts_in_metrics(server: LocalServer, access_log: Path) -> None:
    for _ in range(5):
        requests.get(server.endpoint + "/v1/health?alog-health", timeout=10)
    log_lines(access_log, "/v1/health", 5)
    time.sleep(1.2)  # the writer counts a batch once it is written
    m = scrape(server.endpoint)
    lines = sum(1 for _ in access_log.read_text().splitlines())
    assert m["ais_target_access_log_lines_count"] >= 5
    assert m["ais_target_access_log_lines_count"] <= lines
    assert m["ais_target_access_log_dropped_count"] == 0


def test_access_log_bad_path_refuses_to_start(tmp_path: Path) -> None:
    r = subprocess.run(
        [str(find_server_binary()), "--mountpath", str(tmp_path), "--port", "0",
         "--access-log", str(tmp_path / "no-such-dir" / "a.log")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert r.returncode == 2 and "access log" in r.stderr


# ---- log level ---------------------------------------------------------------------------------


def node_log(server: LocalServer) -> str:
    r = requests.get(server.endpoint + "/v1/daemon?what=log", timeout=10)
    r.raise_for_status()
    return r.text


def log_level(server: LocalServer) -> str:
    cfg = requests.get(server.endpoint + "/v1/cluster?what=cluster_config", timeout=10).json()
    return str(cfg["log"]["level"])


def set_features(server: LocalServer, value: str) -> None:
    """A call that writes an INFO line ("set-config: features=...")."""
    r = requests.put(f"{server.endpoint}/v1/cluster/setconfig?features={value}", timeout=10)
    assert r.status_code == 200, r.text


def test_log_level_from_the_flag_and_at_run_time(server: LocalServer) -> None:
    # --log-level warning: the startup INFO line ("listening on") was not kept.
    assert log_level(server) == "warning"
    assert "listening on" not in node_log(server)
    set_features(server, "0")
    assert "set-config: features=" not in node_log(server)

    r = requests.put(server.endpoint + "/v1/cluster/setconfig?log.level=info", timeout=10)
    assert r.status_code == 200, r.text
    assert log_level(server) == "3"  # AIS's default verbosity: every line kept
    set_features(server, "0")
    assert "I " in node_log(server) and "set-config: features=0" in node_log(server)

    # The action form, as the SDK's and CLI's set-config send it.
    msg = {"action": "set-config", "value": {"log": {"level": "error"}}}
    r = requests.put(server.endpoint + "/v1/cluster", json=msg, timeout=10)
    assert r.status_code == 200, r.text
    assert log_level(server) == "error"
    before = node_log(server).count("set-config: features=")
    set_features(server, "0")
    assert node_log(server).count("set-config: features=") == before

    # A bad level is refused and changes nothing (nor do the request's other keys).
    r = requests.put(
        server.endpoint + "/v1/cluster/setconfig?log.level=loud&features=0", timeout=10
    )
    assert r.status_code == 400 and "log.level" in r.json()["message"]
    assert log_level(server) == "error"

    r = requests.put(server.endpoint + "/v1/cluster/setconfig?log.level=warning", timeout=10)
    assert r.status_code == 200
    assert log_level(server) == "warning"


def test_bad_log_level_flag_refuses_to_start(tmp_path: Path) -> None:
    r = subprocess.run(
        [str(find_server_binary()), "--mountpath", str(tmp_path), "--log-level", "verbose"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert r.returncode == 2 and "--log-level" in r.stderr
