"""The ETL runtime as a local process: what the `aistorage/runtime_python` image's bootstrap
does in a pod, for a server that starts each transformer as `python -m aistore.etl_runtime`.

It decodes the `ETLServer` subclass the SDK sent (`Etl.init_class`), installs its pip
dependencies into a cached virtual environment, and serves it on the address the server gave,
with the server kind's own web stack: `HTTPMultiThreadedServer` in this process (a thread per
connection; the requests of a class that does not override `start` read and answered by
`aistore._internal.etl_http`, the class's `_answer` called as its own handler calls it),
`FastAPIServer` under uvicorn and `FlaskServer` under gunicorn with `NUM_WORKERS` worker
processes each.

Environment (the interface with the server that starts it; cwd is a per-ETL work directory):
    ETL_CLASS_PAYLOAD   base64 of `cloudpickle.dumps(cls)` (required)
    PACKAGES            comma-separated pip requirements, installed into a virtual environment
                        under AIS_ETL_ENVS_DIR (one per distinct list, built once, reused)
    OS_PACKAGES         comma-separated Debian packages, checked, never installed
    NUM_WORKERS         worker processes of uvicorn and gunicorn (default min(4, CPUs))
    AIS_ETL_HOST        address to listen on (default 127.0.0.1)
    AIS_ETL_PORT        port to listen on (default 8000)
    AIS_ETL_RUNTIME     the Python `major.minor` the class was serialized with (may be empty)
    AIS_ETL_ENVS_DIR    where dependency environments are kept (empty: PACKAGES is refused)
    and what the class itself reads: AIS_TARGET_URL, ETL_DIRECT_FQN, ... (`ETLServer`).

Exit status 1, the last line on stderr `ERROR: ...`, when it cannot start serving (a failing
constructor's traceback comes before it); 0 after SIGTERM.
The process and its workers die with their parent (Linux: `PR_SET_PDEATHSIG`).

Example:
    $ AIS_ETL_PORT=8123 AIS_TARGET_URL=http://127.0.0.1:8080/v1/etl/_object/x/s \\
      ETL_CLASS_PAYLOAD=$(python make_payload.py) python -m aistore.etl_runtime
"""

from __future__ import annotations

import base64
import collections
import ctypes
import fcntl
import functools
import hashlib
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from aistore._internal import etl_http
from aistore._internal.venvs import link_site_packages
from aistore.sdk.etl.webserver.base_etl_server import ETLServer
from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer
from aistore.sdk.etl.webserver.flask_server import FlaskServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer

__all__ = ["main"]

_ENV_PAYLOAD = "ETL_CLASS_PAYLOAD"
_ENV_PACKAGES = "PACKAGES"
_ENV_OS_PACKAGES = "OS_PACKAGES"
_ENV_NUM_WORKERS = "NUM_WORKERS"
_ENV_HOST = "AIS_ETL_HOST"
_ENV_PORT = "AIS_ETL_PORT"
_ENV_RUNTIME = "AIS_ETL_RUNTIME"
_ENV_ENVS_DIR = "AIS_ETL_ENVS_DIR"
# Set by this runtime for the processes it becomes or starts: the dependency environment it
# re-executed itself in (so the child does not build it again), and the pid whose children the
# web stack's workers are (so a worker can tell it was orphaned before it could ask to die).
_ENV_IN_DEPENDENCY_ENV = "_AIS_ETL_DEPENDENCY_ENV"
_ENV_SUPERVISOR_PID = "_AIS_ETL_SUPERVISOR_PID"

_DEFAULT_HOST = "127.0.0.1"
_DEFAULT_PORT = 8000
_MAX_DEFAULT_WORKERS = 4
_MODULE = "aistore.etl_runtime"  # this module's name, also when it runs as __main__
_APP = f"{_MODULE}:app"  # the import string of the workers' app (`__getattr__`)
_UVICORN_WORKER = "EtlUvicornWorker"  # gunicorn's worker class for FastAPI apps (`__getattr__`)
_SERVER_COMM = "aistore-server"  # the server's process name (/proc/<pid>/comm)
_PR_SET_PDEATHSIG = 1
# A stopping web stack waits this long for requests in flight, then closes them.
_GRACEFUL_STOP_S = 5
_LISTEN_BACKLOG = 128
# uvicorn's options, as the runtime image runs it (WebSocket frames up to 16 GiB, no pings:
# a transform may take long), plus the bounded stop. Keyword arguments of `uvicorn.run`;
# `_cli_flags` spells them for its command line.
_UVICORN_OPTIONS: dict[str, Any] = {
    "ws_max_size": 16 * 1024**3,
    "ws_ping_interval": 0.0,
    "ws_ping_timeout": 86400.0,
    "access_log": False,
    "timeout_graceful_shutdown": _GRACEFUL_STOP_S,
    "log_level": "info",
}
# A dependency environment is complete when this file exists; it is written last.
_ENV_COMPLETE = "aistore-etl-env.json"
_OUTPUT_TAIL_LINES = 30  # of a failed venv or pip run, printed


class _Failure(Exception):
    """The runtime cannot serve; the message is the one line printed after `ERROR: `."""


def _die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the parent exits (Linux), and exit if it already has.

    Runs when the module is imported in a runtime process (one whose environment names an
    `AIS_ETL_PORT`): the runtime itself, and each worker process uvicorn or gunicorn starts,
    which imports this module for `app`. Elsewhere (docs, tests importing it) it does nothing.
    """
    if not sys.platform.startswith("linux") or _ENV_PORT not in os.environ:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if _orphaned():
        print(f"{_MODULE}: the parent process is gone; exiting", file=sys.stderr, flush=True)
        os._exit(1)


def _orphaned() -> bool:
    """Whether this process's parent exited before `_die_with_parent` asked to follow it.

    A worker knows its parent's pid (`_ENV_SUPERVISOR_PID`); the runtime itself does not, and
    is orphaned when init adopted it, unless PID 1 is the server (a container's entry point).
    """
    supervisor = os.environ.get(_ENV_SUPERVISOR_PID, "")
    if supervisor.isdigit() and int(supervisor) != os.getpid():
        return os.getppid() != int(supervisor)
    if os.getppid() != 1:
        return False
    try:
        return Path("/proc/1/comm").read_text().strip() != _SERVER_COMM
    except OSError:
        return True


_die_with_parent()


def main() -> int:
    """Serve the ETL class of `ETL_CLASS_PAYLOAD` until SIGTERM; the process's exit status."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return _run(os.environ)
    except _Failure as err:
        print(f"ERROR: {err}", file=sys.stderr, flush=True)
        return 1


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> NoReturn:
    raise SystemExit(0)


def _run(env: Mapping[str, str]) -> int:
    _check_python(env.get(_ENV_RUNTIME, "").strip())
    payload = env.get(_ENV_PAYLOAD, "").strip()
    if not payload:
        raise _Failure(f"{_ENV_PAYLOAD} is not set")
    host, port, workers = _address(env)
    if not _in_dependency_env(env):
        _check_os_packages(_split(env.get(_ENV_OS_PACKAGES, "")))
        packages = sorted(set(_split(env.get(_ENV_PACKAGES, ""))))
        if packages:
            _exec_in(_dependency_env(packages, env.get(_ENV_ENVS_DIR, "").strip()))
    try:
        cls = _load_class(payload)
    except Exception as err:  # noqa: BLE001 - whatever unpickling raised is the reason
        raise _Failure(f"Failed to decode ETL class payload: {type(err).__name__}: {err}") from err
    try:
        server = cls()
    except Exception as err:  # noqa: BLE001 - the user's constructor: any error
        traceback.print_exc()
        raise _Failure(f"could not create {cls.__qualname__}: {err}") from err
    return _serve(server, host, port, workers)


def _check_python(wanted: str) -> None:
    """REQUIRES: `wanted` is the Python version the class was pickled with, or empty.

    Raises:
        _Failure: it is not this interpreter's: a pickled class's code does not load across
            Python versions.
    """
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    if wanted and wanted != ours:
        raise _Failure(
            f"the ETL class was serialized for Python {wanted}, but this server runs ETLs with "
            f"Python {ours} at {sys.executable} (the server's --etl-python flag picks another)"
        )


def _address(env: Mapping[str, str]) -> tuple[str, int, int]:
    """(host, port, worker processes) from the environment."""
    host = env.get(_ENV_HOST, "").strip() or _DEFAULT_HOST
    port = _positive_int(env, _ENV_PORT, _DEFAULT_PORT)
    if port > 65535:
        raise _Failure(f"{_ENV_PORT}={port} is not a TCP port")
    workers = _positive_int(env, _ENV_NUM_WORKERS, min(_MAX_DEFAULT_WORKERS, os.cpu_count() or 1))
    return host, port, workers


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) == 0:
        raise _Failure(f"{name}={text!r} is not a positive integer")
    return int(text)


def _split(csv: str) -> list[str]:
    return [item.strip() for item in csv.split(",") if item.strip()]


def _check_os_packages(names: Sequence[str]) -> None:
    """Raises `_Failure` naming the Debian packages of `names` that are not installed: this
    runtime runs as the server's user on the server's machine and installs none."""
    missing = [name for name in names if not _dpkg_installed(name)]
    if missing:
        raise _Failure(
            f"OS_PACKAGES not installed on this machine: {', '.join(missing)}; this ETL "
            "runtime does not install OS packages: install them on the machine "
            f"(e.g. apt-get install {' '.join(missing)}) and start the ETL again"
        )


def _dpkg_installed(name: str) -> bool:
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, check=False
        )
    except OSError:  # no dpkg-query: not a Debian system, nothing can be confirmed
        return False
    return done.returncode == 0 and done.stdout.strip().endswith(" installed")


def _in_dependency_env(env: Mapping[str, str]) -> bool:
    """Whether this process is the runtime re-executed in its dependency environment."""
    marked = env.get(_ENV_IN_DEPENDENCY_ENV, "")
    return bool(marked) and os.path.realpath(marked) == os.path.realpath(sys.prefix)


def _dependency_env(packages: list[str], envs_dir: str) -> Path:
    """The virtual environment with `packages` installed, built now if no complete one exists.

    One environment per (interpreter, sorted package list), `<envs_dir>/<sha256 prefix>`, made
    with `--system-site-packages` (and, in a virtual environment, a path to its site-packages)
    so that what this interpreter imports stays importable. Built under an exclusive lock on
    `<dir>.lock`, so concurrent runtimes build it once; complete only when `_ENV_COMPLETE`
    exists (written last), so a half-built one (a crash, a failed pip) is removed and rebuilt.

    Raises:
        _Failure: no `envs_dir`, or the environment could not be built (pip's exit status and
            the tail of its output are printed).
    """
    if not envs_dir:
        raise _Failure(
            f"cannot install PACKAGES ({', '.join(packages)}): this server keeps no dependency "
            f"environments for ETLs ({_ENV_ENVS_DIR} is not set)"
        )
    ours = f"{sys.prefix}\n{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256("\n".join([ours, *packages]).encode()).hexdigest()[:16]
    root = Path(envs_dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / key
    with open(root / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the process dies)
        if (path / _ENV_COMPLETE).is_file():
            return path
        if path.exists():
            print(f"removing the incomplete dependency environment {path}", flush=True)
            shutil.rmtree(path)
        try:
            _build_env(path, packages)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
    return path


def _build_env(path: Path, packages: list[str]) -> None:
    started = time.monotonic()
    print(f"installing PACKAGES {', '.join(packages)} into {path}", flush=True)
    # Without pip of its own: the system site-packages' pip installs into it.
    venv = [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)]
    _run_or_fail(venv, f"could not create a virtual environment at {path}")
    link_site_packages(path)
    python = str(path / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
           "--progress-bar", "off", *packages]  # fmt: skip
    _run_or_fail(pip, f"pip install of PACKAGES {', '.join(packages)} failed")
    record = {"packages": packages, "python": sys.executable, "built": time.time()}
    partial = path / f"{_ENV_COMPLETE}.partial"
    partial.write_text(json.dumps(record) + "\n")
    os.replace(partial, path / _ENV_COMPLETE)  # the commit point
    print(f"PACKAGES installed in {time.monotonic() - started:.1f}s", flush=True)


def _run_or_fail(argv: list[str], failure: str) -> None:
    """Run `argv` (dying with this process), its output merged and only its tail kept.

    Raises:
        _Failure: `failure` and the exit status, when it is not 0; the tail is printed first.
    """
    tail: collections.deque[str] = collections.deque(maxlen=_OUTPUT_TAIL_LINES)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        preexec_fn=_die_with_parent_now,  # no threads run yet in this process
    )
    try:
        assert proc.stdout is not None
        tail.extend(proc.stdout)
        status = proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if status != 0:
        print("".join(tail), end="", file=sys.stderr, flush=True)
        raise _Failure(f"{failure} (exit status {status})")


def _die_with_parent_now() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _exec_in(env_path: Path) -> NoReturn:
    """Replace this process by the runtime in the dependency environment `env_path`."""
    python = str(env_path / "bin" / "python")
    os.environ[_ENV_IN_DEPENDENCY_ENV] = str(env_path)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(python, [python, "-m", _MODULE])


def _load_class(payload: str) -> type[ETLServer]:
    """The `ETLServer` subclass that `serialize_class` encoded as `payload`.

    Raises:
        binascii.Error, pickle.UnpicklingError, ImportError, ...: it does not decode.
        TypeError: it decodes to something else.
    """
    # The payload is code by design (the SDK pickles the user's class by value); the server
    # admits only callers allowed to create ETLs, and runs it as its own user.
    cls = pickle.loads(base64.b64decode(payload, validate=True))  # noqa: S301
    if not isinstance(cls, type) or not issubclass(cls, ETLServer):
        raise TypeError(f"{cls!r} is not a subclass of ETLServer")
    return cls


@functools.cache
def _worker_app() -> Any:
    """The web app of a worker process: its own instance of the payload's class.

    Raises:
        TypeError: the class is no FastAPIServer or FlaskServer (the kinds served by workers).
    """
    # A worker forked after its supervisor imported this module (gunicorn loading our uvicorn
    # worker class) did not run the import-time request: the death signal is not inherited.
    _die_with_parent()
    server = _load_class(os.environ.get(_ENV_PAYLOAD, ""))()
    if not isinstance(server, (FastAPIServer, FlaskServer)):
        raise TypeError(f"{type(server).__qualname__} has no app for uvicorn or gunicorn")
    return server.app


def __getattr__(name: str) -> Any:
    # `aistore.etl_runtime:app`, the import string uvicorn's and gunicorn's workers load.
    if name == "app":
        return _worker_app()
    if name == _UVICORN_WORKER:
        return _uvicorn_worker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _uvicorn_worker_class() -> type:
    """gunicorn's worker class for a FastAPI app: uvicorn's, with the runtime's options."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # uvicorn.workers moves to a package
        from uvicorn.workers import UvicornWorker

    options = {k: v for k, v in _UVICORN_OPTIONS.items() if k not in ("log_level", "access_log")}
    config = {**UvicornWorker.CONFIG_KWARGS, **options}
    return type(_UVICORN_WORKER, (UvicornWorker,), {"CONFIG_KWARGS": config})


def _serve(server: ETLServer, host: str, port: int, workers: int) -> int:
    """Serve `server` on host:port with its kind's web stack until stopped; an exit status.

    Raises:
        _Failure: host:port cannot be listened on (checked first: the web stacks would exit
            with their own status, or retry for seconds).
    """
    name = type(server).__qualname__
    if isinstance(server, HTTPMultiThreadedServer) and _serves_itself_as_base(server):
        try:
            listener = _listen(host, port)
        except OSError as err:
            raise _Failure(f"cannot listen on {host}:{port}: {err}") from err
        _announce(name, "HTTPMultiThreadedServer, a thread per connection", host, port)
        with listener:
            etl_http.serve_forever(listener, server._answer, server.get_mime_type())
        return 0
    if isinstance(server, HTTPMultiThreadedServer):
        server.host, server.port = host, port
        try:
            server.bind()
        except OSError as err:
            raise _Failure(f"cannot listen on {host}:{port}: {err}") from err
        _announce(name, "its own start()", host, port)
        server.start()
        return 0
    _check_listen(host, port)
    if isinstance(server, FastAPIServer):
        if workers == 1:
            import uvicorn

            _announce(name, "FastAPIServer, uvicorn in this process", host, port)
            uvicorn.run(server.app, host=host, port=port, **_UVICORN_OPTIONS)
            return 0
        # uvicorn's own --workers answers a kept-alive connection ~40 ms late (its replies meet
        # Nagle and the client's delayed ACK): 23 requests/s instead of 1300 under gunicorn.
        _exec_gunicorn(
            f"FastAPIServer, gunicorn with {workers} uvicorn workers",
            name, host, port, workers, ["--worker-class", f"{_MODULE}.{_UVICORN_WORKER}"],
        )  # fmt: skip
        _announce(name, f"FastAPIServer, uvicorn with {workers} worker processes", host, port)
        _exec_module(
            "uvicorn",
            [_APP, "--host", host, "--port", str(port), "--workers", str(workers),
             *_cli_flags(_UVICORN_OPTIONS)],
        )  # fmt: skip
    if isinstance(server, FlaskServer):
        _exec_gunicorn(
            f"FlaskServer, gunicorn with {workers} worker processes", name, host, port, workers, []
        )
        print(
            f"WARNING: gunicorn is not installed: {name} runs on Flask's development server in "
            f"one process, not {workers} workers (pip install gunicorn)",
            flush=True,
        )
        _announce(name, "FlaskServer, Flask's threaded server in this process", host, port)
        server.app.run(host=host, port=port, threaded=True)
        return 0
    for attr, value in (("host", host), ("port", port)):
        if hasattr(server, attr):
            setattr(server, attr, value)
    _announce(name, "its own start()", host, port)
    server.start()
    return 0


def _serves_itself_as_base(server: HTTPMultiThreadedServer) -> bool:
    """Whether the class leaves serving to `HTTPMultiThreadedServer` (neither `start` nor
    `bind` overridden): then the runtime serves its requests itself (`etl_http`), answering
    each as the class's handler would."""
    cls = type(server)
    return cls.start is HTTPMultiThreadedServer.start and cls.bind is HTTPMultiThreadedServer.bind


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, address reuse on (as the stdlib servers bind)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _exec_gunicorn(
    how: str, name: str, host: str, port: int, workers: int, extra: list[str]
) -> None:
    """Replaces this process with gunicorn serving the workers' app; returns only when gunicorn
    is not installed."""
    gunicorn_flags = _gunicorn_flags()
    if gunicorn_flags is None:
        return
    _announce(name, how, host, port)
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    _exec_module(
        "gunicorn",
        [_APP, "--bind", bind, "--workers", str(workers), *extra,
         "--graceful-timeout", str(_GRACEFUL_STOP_S), *gunicorn_flags],
    )  # fmt: skip


def _check_listen(host: str, port: int) -> None:
    """Raises `_Failure` if no socket can listen on host:port now (as the web stacks bind:
    address reuse on)."""
    try:
        _listen(host, port).close()
    except OSError as err:
        raise _Failure(f"cannot listen on {host}:{port}: {err}") from err


def _announce(name: str, how: str, host: str, port: int) -> None:
    print(f"{_MODULE}: serving {name} ({how}) on {host}:{port}", flush=True)


def _gunicorn_flags() -> list[str] | None:
    """Flags for the installed gunicorn beyond the ones every version takes; None: none is
    installed. From 25.1 it opens a control socket in $HOME by default, one path for all ETLs:
    off."""
    try:
        from gunicorn.config import KNOWN_SETTINGS
    except ImportError:
        return None
    names = {setting.name for setting in KNOWN_SETTINGS}
    return ["--no-control-socket"] if "control_socket_disable" in names else []


def _cli_flags(options: Mapping[str, Any]) -> list[str]:
    """Keyword arguments as command-line flags: `a_b=1` is `--a-b 1`, `a=False` is `--no-a`."""
    flags: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else f"--no-{flag[2:]}")
        else:
            flags += [flag, str(value)]
    return flags


def _exec_module(module: str, args: list[str]) -> NoReturn:
    """Replace this process by `python -m module args`, whose workers are its children."""
    os.environ[_ENV_SUPERVISOR_PID] = str(os.getpid())  # the pid survives exec
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


if __name__ == "__main__":
    sys.exit(main())
