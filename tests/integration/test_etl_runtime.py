"""`python -m aistore.etl_runtime` as the server starts it: real processes, each kind of ETL
server on an ephemeral port, a fake target for hpull, wheels built here for PACKAGES (no
network), and the ways it refuses to start."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

import cloudpickle
import pytest
import requests

from aistore._internal.venvs import link_site_packages
from aistore.sdk.etl.webserver.base_etl_server import ETLServer
from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer
from aistore.sdk.etl.webserver.flask_server import FlaskServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer
from aistore.sdk.etl.webserver.utils import serialize_class

_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0
_PULLED = b"pulled bytes"
_TARGET_PATH = "/v1/etl/_object/etl-name/secret"
_UNAME = "ais%2F@%23%2Fbck%2Fobj"  # `ais/@#/bck/obj`, escaped as a target sends it


def _upper(base: type[ETLServer], streaming: bool = False) -> type[ETLServer]:
    """A `base` subclass that upper-cases objects (local: cloudpickle pickles it by value)."""
    if streaming:

        class UpperStream(base):  # type: ignore[valid-type,misc]
            def transform_stream(
                self, reader: BinaryIO, path: str, etl_args: str
            ) -> Iterator[bytes]:
                while chunk := reader.read(4):
                    yield chunk.upper()

        return UpperStream

    class Upper(base):  # type: ignore[valid-type,misc]
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return data.upper()

    return Upper


@dataclass
class _Target:
    """A stand-in for the target's `/v1/etl/_object` endpoint: GET answers `_PULLED`."""

    url: str
    paths: list[str] = field(default_factory=list)


@pytest.fixture
def target() -> Iterator[_Target]:
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - stdlib's name
            paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(_PULLED)))
            self.end_headers()
            self.wfile.write(_PULLED)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield _Target(f"http://127.0.0.1:{server.server_address[1]}{_TARGET_PATH}", paths)
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(payload: str, target_url: str = "http://127.0.0.1:9", **extra: str) -> dict[str, str]:
    """The environment the server gives a runtime (this one's, for PYTHONPATH, plus ours)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUM_WORKERS", "PACKAGES")}
    env.update(
        ETL_CLASS_PAYLOAD=payload,
        AIS_TARGET_URL=target_url,
        direct_put="false",
        PYTHONUNBUFFERED="1",
        AIS_ETL_HOST="127.0.0.1",
        AIS_ETL_PORT=str(_free_port()),
        AIS_ETL_RUNTIME=f"{sys.version_info.major}.{sys.version_info.minor}",
        AIS_ETL_ENVS_DIR="",
        PIP_NO_INDEX="1",  # PACKAGES come from local wheels: never the network
    )
    env.update(extra)
    return env


@dataclass
class _Runtime:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"runtime exited {self.proc.returncode}:\n{self.output()}")
            try:  # (gunicorn listens before its workers boot: a read may time out)
                if requests.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except (requests.ConnectionError, requests.Timeout):
                pass
            time.sleep(0.05)
        pytest.fail(f"runtime not ready in {_START_TIMEOUT_S}s:\n{self.output()}")

    def stop(self) -> int:
        """SIGTERM; its exit status, after its workers are gone too."""
        workers = _descendants(self.proc.pid)
        self.proc.send_signal(signal.SIGTERM)
        status = self.proc.wait(timeout=_STOP_TIMEOUT_S)
        _wait_gone(workers)
        return status


def _start(env: dict[str, str], tmp_path: Path, python: str = sys.executable) -> _Runtime:
    log = tmp_path / f"runtime-{env['AIS_ETL_PORT']}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [python, "-m", "aistore.etl_runtime"], env=env, cwd=tmp_path, stdout=out, stderr=out
        )
    return _Runtime(proc, int(env["AIS_ETL_PORT"]), log)


@pytest.fixture
def runtimes() -> Iterator[list[_Runtime]]:
    """Runtimes a test starts, killed (with their workers) if still running at its end."""
    started: list[_Runtime] = []
    yield started
    for rt in started:
        if rt.proc.poll() is None:
            for pid in [rt.proc.pid, *_descendants(rt.proc.pid)]:
                _kill(pid)
            rt.proc.wait()


def _run_to_exit(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aistore.etl_runtime"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: list[int], timeout: float = _STOP_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids):
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if _alive(p)]}"
        time.sleep(0.05)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on `port` (/proc/net/tcp{,6}, hex)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


# How each kind of server is run: (base class, NUM_WORKERS, hide gunicorn, startup line part).
_KINDS = {
    "http": (HTTPMultiThreadedServer, "2", False, "HTTPMultiThreadedServer, a thread per"),
    "fastapi-1": (FastAPIServer, "1", False, "uvicorn in this process"),
    "fastapi-2": (FastAPIServer, "2", False, "gunicorn with 2 uvicorn workers"),
    "flask-gunicorn": (FlaskServer, "2", False, "gunicorn with 2 worker processes"),
    "flask-dev": (FlaskServer, "2", True, "Flask's threaded server in this process"),
}


def _kind_env(kind: str, payload: str, target_url: str, tmp_path: Path) -> dict[str, str]:
    _, workers, hide_gunicorn, _ = _KINDS[kind]
    env = _env(payload, target_url, NUM_WORKERS=workers)
    if hide_gunicorn:
        hidden = tmp_path / "no-gunicorn" / "gunicorn"
        hidden.mkdir(parents=True)
        (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
        env["PYTHONPATH"] = os.pathsep.join([str(hidden.parent), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.parametrize("streaming", [False, True], ids=["transform", "transform_stream"])
@pytest.mark.parametrize("kind", list(_KINDS))
def test_serves_each_kind(
    kind: str, streaming: bool, target: _Target, tmp_path: Path, runtimes: list[_Runtime]
) -> None:
    base, _, hide_gunicorn, how = _KINDS[kind]
    payload = serialize_class(_upper(base, streaming))
    rt = _start(_kind_env(kind, payload, target.url, tmp_path), tmp_path)
    runtimes.append(rt)
    rt.wait_ready()

    health = requests.get(f"{rt.url}/health", timeout=5)
    assert (health.status_code, health.text) == (200, "Running")
    # hpush: the object is the body
    pushed = requests.put(f"{rt.url}/bck/obj", data=b"hello etl", timeout=5)
    assert (pushed.status_code, pushed.content) == (200, b"HELLO ETL")
    # hpull without an FQN: fetched from AIS_TARGET_URL, the uname escaped as it came
    pulled = requests.get(f"{rt.url}/{_UNAME}", timeout=5)
    assert (pulled.status_code, pulled.content) == (200, _PULLED.upper())
    assert target.paths == [f"{_TARGET_PATH}/{_UNAME}"]
    # an FQN without ETL_DIRECT_FQN: the runtime reads the file
    fqn = tmp_path / "mp" / "bck" / "obj"
    fqn.parent.mkdir(parents=True)
    fqn.write_bytes(b"from disk")
    from_disk = requests.put(
        f"{rt.url}/bck/obj", params={"etl_fqn": quote(str(fqn))}, data=b"", timeout=5
    )
    assert (from_disk.status_code, from_disk.content) == (200, b"FROM DISK")

    # the given address only, not every interface
    assert _listening_addresses(rt.port) == {"0100007F"}  # 127.0.0.1
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", rt.port), timeout=5).close()

    output = rt.output()
    assert f"aistore.etl_runtime: serving Upper{'Stream' if streaming else ''} (" in output
    assert how in output and f"on 127.0.0.1:{rt.port}" in output
    assert ("WARNING: gunicorn is not installed" in output) == hide_gunicorn
    assert rt.stop() == 0, rt.output()


def _own_start() -> type[ETLServer]:
    class OwnStart(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return data[::-1]

        def start(self) -> None:
            print("OwnStart.start runs", flush=True)
            super().start()

    return OwnStart


def test_a_class_with_its_own_start_serves_itself(tmp_path: Path, runtimes: list[_Runtime]) -> None:
    """The runtime answers an `HTTPMultiThreadedServer`'s requests itself only when the class
    leaves serving to its base: one that overrides `start` (or `bind`) runs its own."""
    rt = _start(_env(serialize_class(_own_start())), tmp_path)
    runtimes.append(rt)
    rt.wait_ready()
    pushed = requests.put(f"{rt.url}/bck/obj", data=b"abc", timeout=5)
    assert (pushed.status_code, pushed.content) == (200, b"cba")
    output = rt.output()
    assert "OwnStart.start runs" in output and "(its own start()) on 127.0.0.1" in output
    assert rt.stop() == 0, rt.output()


@pytest.mark.parametrize(
    ("kind", "victim"),
    [
        ("http", "server"),
        ("fastapi-2", "server"),
        ("flask-gunicorn", "server"),
        ("fastapi-2", "runtime"),  # the workers' own parent, gunicorn's master
        ("flask-gunicorn", "runtime"),  # gunicorn's arbiter
    ],
)
def test_dies_with_its_parent(kind: str, victim: str, target: _Target, tmp_path: Path) -> None:
    """SIGKILL of the server (a stand-in that started the runtime) or of the runtime: what
    was below it exits within seconds."""
    base, workers, _, _ = _KINDS[kind]
    env = _kind_env(kind, serialize_class(_upper(base)), target.url, tmp_path)
    log = tmp_path / "runtime.log"
    # (cwd: not the checkout, whose aistore/ would shadow the installed package in the runtime
    # and in gunicorn's workers, which put the working directory first on sys.path)
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(log)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert server.stdout is not None
    pid = int(server.stdout.readline())
    tree: list[int] = []
    try:
        rt = _Runtime(_Orphan(pid), int(env["AIS_ETL_PORT"]), log)  # type: ignore[arg-type]
        rt.wait_ready()
        deadline = time.monotonic() + _START_TIMEOUT_S
        expected = 0 if kind == "http" else int(workers)
        while len(tree := _descendants(pid)) < expected:
            assert time.monotonic() < deadline, rt.output()
            time.sleep(0.05)
        _kill(server.pid if victim == "server" else pid)
        _wait_gone([pid, *tree])
    finally:
        for p in [server.pid, pid, *tree]:
            _kill(p)
        server.wait()


# The server stand-in: starts the runtime, prints its pid, waits (to be SIGKILLed).
_SERVER = """
import subprocess, sys
with open(sys.argv[1], "wb") as log:
    rt = subprocess.Popen([sys.executable, "-m", "aistore.etl_runtime"], stdout=log, stderr=log)
print(rt.pid, flush=True)
rt.wait()
"""


class _Orphan:
    """The `poll()` of a process that is not this one's child: None while it runs."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return None if _alive(self.pid) else -1


def _not_an_etl_server() -> type:
    """A class that is no ETLServer (local: pickled by value, as a user's class is; a
    module-level one is pickled by reference to a module the runtime cannot import)."""

    class NotAnEtlServer:
        pass

    return NotAnEtlServer


def _payload_of(obj: object) -> str:
    return base64.b64encode(cloudpickle.dumps(obj)).decode()


def _failing_class() -> type[ETLServer]:
    class Broken(HTTPMultiThreadedServer):
        def __init__(self) -> None:
            raise RuntimeError("the constructor failed on purpose")

        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            return b""

    return Broken


_GOOD = serialize_class(_upper(HTTPMultiThreadedServer))
_OURS = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize(
    ("payload", "extra", "expected"),
    [
        pytest.param(
            _GOOD,
            {"AIS_ETL_RUNTIME": "3.99"},
            [
                f"ETL class was serialized for Python 3.99, but this server runs ETLs with Python "
                f"{_OURS} at {sys.executable}",
                "--etl-python",
            ],
            id="python-version",
        ),
        pytest.param("", {}, ["ERROR: ETL_CLASS_PAYLOAD is not set\n"], id="no-payload"),
        pytest.param(
            "not base64 at all!", {}, ["ERROR: Failed to decode ETL class payload: "], id="garbage"
        ),
        pytest.param(
            base64.b64encode(b"\x80\x05junk").decode(),
            {},
            ["ERROR: Failed to decode ETL class payload: "],
            id="not-a-pickle",
        ),
        pytest.param(
            _payload_of(_not_an_etl_server()),
            {},
            ["ERROR: Failed to decode ETL class payload: ", "is not a subclass of ETLServer"],
            id="not-an-etl-server",
        ),
        pytest.param(
            serialize_class(_failing_class()),
            {},
            ["Traceback", "the constructor failed on purpose", "ERROR: could not create Broken"],
            id="constructor-fails",
        ),
        pytest.param(
            _GOOD,
            {"OS_PACKAGES": "dpkg, no-such-package-xyz"},
            ["ERROR: OS_PACKAGES not installed on this machine: no-such-package-xyz;"],
            id="os-package-missing",
        ),
        pytest.param(
            _GOOD,
            {"OS_PACKAGES": "dpkg", "PATH": "/nonexistent"},  # no dpkg-query to ask
            ["ERROR: OS_PACKAGES not installed on this machine: dpkg;"],
            id="os-packages-unknowable",
        ),
        pytest.param(
            "not base64 at all!",
            {"OS_PACKAGES": "dpkg"},
            ["ERROR: Failed to decode ETL class payload: "],  # past the OS_PACKAGES check
            id="os-package-installed",
        ),
        pytest.param(
            _GOOD,
            {"PACKAGES": "numpy"},
            ["ERROR: cannot install PACKAGES (numpy)", "AIS_ETL_ENVS_DIR is not set"],
            id="packages-without-envs-dir",
        ),
        pytest.param(
            _GOOD, {"NUM_WORKERS": "many"}, ["NUM_WORKERS='many' is not a positive"], id="workers"
        ),
    ],
)
def test_refuses_to_start(
    payload: str, extra: dict[str, str], expected: list[str], tmp_path: Path
) -> None:
    done = _run_to_exit(_env(payload, **extra), tmp_path)
    assert done.returncode == 1, done
    for text in expected:
        assert text in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["http", "fastapi-2", "flask-gunicorn"])
def test_refuses_a_port_in_use(kind: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        payload = serialize_class(_upper(_KINDS[kind][0]))
        env = _kind_env(kind, payload, "http://127.0.0.1:9", tmp_path)
        done = _run_to_exit({**env, "AIS_ETL_PORT": str(port)}, tmp_path)
    assert done.returncode == 1, done
    assert f"ERROR: cannot listen on 127.0.0.1:{port}: " in done.stderr
    assert "serving" not in done.stdout


def _wheel(directory: Path, name: str, source: str) -> Path:
    """A pure-Python wheel of one module `name`, made by hand."""
    dist = f"{name}-1.0.dist-info"
    files = {
        f"{name}.py": source.encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    wheel = directory / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel


def _prefixing(*modules: str) -> type[ETLServer]:
    """An ETL that puts each module's PREFIX in front of the object (imported when called)."""

    class Prefix(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            import importlib

            assert isinstance(data, bytes)
            return b"".join(importlib.import_module(m).PREFIX for m in modules) + data

    return Prefix


def _serves(rt: _Runtime, expected: bytes) -> None:
    rt.wait_ready()
    reply = requests.put(f"{rt.url}/b/o", data=b"object", timeout=5)
    assert (reply.status_code, reply.content) == (200, expected), rt.output()


def test_packages_build_one_cached_environment(tmp_path: Path, runtimes: list[_Runtime]) -> None:
    wheel = _wheel(tmp_path, "etltiny", "PREFIX = b'tiny:'\n")
    envs = tmp_path / "envs"
    payload = serialize_class(_prefixing("etltiny"))

    def start() -> _Runtime:
        rt = _start(_env(payload, PACKAGES=str(wheel), AIS_ETL_ENVS_DIR=str(envs)), tmp_path)
        runtimes.append(rt)
        return rt

    # two ETLs with the same list at once: one builds, the other waits and uses it
    first, second = start(), start()
    for rt in (first, second):
        _serves(rt, b"tiny:object")
    outputs = first.output() + second.output()
    assert outputs.count("installing PACKAGES") == 1, outputs
    assert first.stop() == 0 and second.stop() == 0
    (env_dir,) = [p for p in envs.iterdir() if p.is_dir()]
    marker = env_dir / "aistore-etl-env.json"
    built = marker.stat().st_mtime_ns

    again = start()  # reused: no pip run
    _serves(again, b"tiny:object")
    assert "installing PACKAGES" not in again.output()
    assert marker.stat().st_mtime_ns == built
    assert again.stop() == 0

    marker.unlink()  # as if the build had stopped halfway
    rebuilt = start()
    _serves(rebuilt, b"tiny:object")
    assert "removing the incomplete dependency environment" in rebuilt.output()
    assert marker.stat().st_mtime_ns != built


def test_failed_pip_install_leaves_no_environment(tmp_path: Path) -> None:
    missing = tmp_path / "nope-1.0-py3-none-any.whl"
    envs = tmp_path / "envs"
    env = _env(_GOOD, PACKAGES=f"{missing}, {tmp_path}/also-nope.whl", AIS_ETL_ENVS_DIR=str(envs))
    done = _run_to_exit(env, tmp_path)
    assert done.returncode == 1, done
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"ERROR: pip install of PACKAGES {tmp_path}/also-nope.whl, {missing}")
    assert re.search(r" failed \(exit status [1-9][0-9]*\)$", line), line
    assert "also-nope" in done.stderr.split(line)[0]  # pip's own words, first
    assert [p for p in envs.iterdir() if p.is_dir()] == []


def test_packages_from_a_virtual_environment_stay_importable(
    tmp_path: Path, runtimes: list[_Runtime]
) -> None:
    # The server's interpreter is a virtual environment with one package of its own; the
    # ETL's environment adds another, and both import.
    outer = tmp_path / "outer"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(outer)],
        check=True,
    )
    link_site_packages(outer)  # this interpreter's packages (aistore, pip), if a venv's
    python = str(outer / "bin" / "python")
    own = _wheel(tmp_path, "etlouter", "PREFIX = b'outer:'\n")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-index", str(own)],
        check=True,
        env=_env(""),
    )
    added = _wheel(tmp_path, "etlinner", "PREFIX = b'inner:'\n")
    payload = serialize_class(_prefixing("etlouter", "etlinner"))
    env = _env(payload, PACKAGES=str(added), AIS_ETL_ENVS_DIR=str(tmp_path / "envs"))
    rt = _start(env, tmp_path, python=python)
    runtimes.append(rt)
    _serves(rt, b"outer:inner:object")
    assert rt.stop() == 0
