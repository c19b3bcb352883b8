"""Observability beyond /metrics: the structured access log (--access-log), the server log's
level (--log-level, set-config log.level), `Cluster.get_performance()` against /metrics, and the
client's progress bars (tqdm), on a real server."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from _util import wait_until
from prometheus_client.parser import text_string_to_metric_families

from aistore.sdk.dataset.data_attribute import DataAttribute
from aistore.sdk.dataset.dataset_config import DatasetConfig
from aistore.sdk.dataset.label_attribute import LabelAttribute
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


def complete_lines(path: Path) -> list[str]:
    """The lines of the file that end in a newline (the writer may be amid the last one)."""
    text = path.read_text()
    return text[: text.rfind("\n") + 1].splitlines()


def log_lines(path: Path, marker: str, want: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The access log's entries whose path contains `marker`, once there are `want` of them
    (the writer thread flushes within a second)."""
    deadline = time.monotonic() + timeout
    while True:
        entries = [json.loads(line) for line in complete_lines(path)]
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
    # A line is written when its reply is sent: requests on different connections (the S3 one)
    # may be logged in either order, so the lines are compared as a set.
    got = sorted((e["method"], e["path"], e["status"]) for e in mine)
    assert got == sorted(
        [
            ("PUT", "/v1/objects/alog/alog-obj", 200),
            ("GET", "/v1/objects/alog/alog-obj", 200),
            ("HEAD", "/v1/objects/alog/alog-obj", 200),
            ("GET", "/v1/objects/alog/alog-missing", 404),
            ("GET", "/s3/alog/alog-obj", 200),
        ]
    )
    by_path = {(e["method"], e["path"]): e for e in mine}
    get = by_path[("GET", "/v1/objects/alog/alog-obj")]
    assert get["bytes"] == 10240
    assert isinstance(get["duration_us"], int) and 0 <= get["duration_us"] < 30_000_000
    assert get["remote"].startswith("127.0.0.1:")
    assert get["time"].endswith("Z") and get["time"][:4].isdigit()
    assert "?" not in by_path[("GET", "/s3/alog/alog-obj")]["path"]  # a query could carry a token


def test_access_log_counts_in_metrics(server: LocalServer, access_log: Path) -> None:
    for _ in range(5):
        requests.get(server.endpoint + "/v1/health?alog-health", timeout=10)
    assert len(log_lines(access_log, "/v1/health", 5)) >= 5
    logged = len(complete_lines(access_log))
    # The writer counts a batch once it is written: the count catches up with the file.

    def caught_up() -> dict[str, float] | None:
        m = scrape(server.endpoint)
        return m if m["ais_target_access_log_lines_count"] >= logged else None

    m = wait_until(caught_up, 10, f"ais_target_access_log_lines_count >= {logged}", 0.05)
    lines = len(complete_lines(access_log))
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


# ---- get_performance == /metrics ---------------------------------------------------------------

# (AIS tracker name in node_status, the /metrics family it must equal)
SAME_FIGURES = [
    ("get.n", "ais_target_get_count"),
    ("get.size", "ais_target_get_bytes"),
    ("put.n", "ais_target_put_count"),
    ("put.size", "ais_target_put_bytes"),
    ("head.n", "ais_target_head_count"),
    ("del.n", "ais_target_del_count"),
    ("lst.n", "ais_target_lst_count"),
    ("err.get.n", "ais_target_err_get_count"),
    ("get.ns.total", "ais_target_get_ns_total"),
]


def test_get_performance_has_the_figures_of_metrics(server: LocalServer) -> None:
    client = server.client()
    b = client.bucket("perf").create()
    for i in range(7):
        b.object(f"p{i}").get_writer().put_content(b"y" * 500)
    for i in range(3):
        b.object(f"p{i}").get_reader().read_all()
        b.object(f"p{i}").head()
    b.object("p6").delete()
    b.list_objects()
    with pytest.raises(ErrObjNotFound):
        b.object("nope").get_reader().read_all()
    # A request is counted once its reply is out, so the client may be a moment ahead: read
    # both until the last request has been counted (nothing else runs against this server).
    deadline = time.monotonic() + 5
    while True:
        perf = client.cluster().get_performance()
        metrics = scrape(server.endpoint)
        ((tid, status),) = perf.items()
        tracker = status["tracker"]
        pairs = [(tracker.get(a, 0), metrics.get(f, 0), a, f) for a, f in SAME_FIGURES]
        if all(t == m for t, m, _, _ in pairs) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for t, m, ais_name, family in pairs:
        assert t == m, (ais_name, family)
    assert tracker["put.n"] >= 7 and tracker["get.size"] >= 1500
    assert status["snode"]["daemon_id"] == tid


# ---- progress bars -----------------------------------------------------------------------------


def test_put_files_progress(
    server: LocalServer, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    b = server.client().bucket("progress").create(exist_ok=True)
    for i in range(3):
        (tmp_path / f"f{i}.bin").write_bytes(b"z" * 100)
    b.put_files(tmp_path, show_progress=True, verbose=False)
    err = capfd.readouterr().err
    assert "put ais://progress" in err and "3/3" in err and "file" in err
    b.put_files(tmp_path, verbose=False)  # default: off, stderr is not a terminal here
    b.put_files(tmp_path, show_progress=False, verbose=False)
    assert capfd.readouterr().err == ""


def test_download_progress(
    server: LocalServer, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    b = server.client().bucket("progress").create(exist_ok=True)
    b.object("big").get_writer().put_content(b"q" * (3 << 20))
    out = tmp_path / "big.bin"
    assert b.object("big").get_reader().download_to(out, show_progress=True) == 3 << 20
    err = capfd.readouterr().err
    assert "big.bin" in err and "3.15MB" in err  # tqdm's SI scaling of 3 MiB
    b.object("big").get_reader().download_to(out)
    assert capfd.readouterr().err == ""
    assert out.read_bytes() == b"q" * (3 << 20)


def test_job_wait_progress(server: LocalServer, capfd: pytest.CaptureFixture[str]) -> None:
    client = server.client()
    src = client.bucket("progress-src").create(exist_ok=True)
    for i in range(20):
        src.object(f"c{i}").get_writer().put_content(b"c")
    job_id = src.copy(client.bucket("progress-dst").create(exist_ok=True))
    client.job(job_id).wait(timeout=60, progress=True)
    err = capfd.readouterr().err
    assert f"[{job_id}]" in err and "obj" in err
    job_id = src.copy(client.bucket("progress-dst2").create(exist_ok=True))
    client.job(job_id).wait(timeout=60)
    assert f"[{job_id}]" not in capfd.readouterr().err


def test_write_dataset_progress(
    server: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    images = tmp_path / "images"
    images.mkdir()
    for i in range(5):
        (images / f"cat_{i}.jpg").write_bytes(b"jpg%d" % i)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    b = server.client().bucket("progress-ds").create(exist_ok=True)
    config = DatasetConfig(
        DataAttribute(images, "image", "jpg"), [LabelAttribute("cls", lambda n: n.split("_")[0])]
    )
    b.write_dataset(config, pattern="ds", maxcount=2, show_progress=True)
    err = capfd.readouterr().err
    assert "write_dataset ais://progress-ds" in err and "3shard" in err.replace(" ", "")
    assert len(b.list_all_objects()) == 3
