"""Shared fixtures: the real C++ server on an ephemeral port with four temporary mountpaths.

Every `LocalServer` a test starts is watched (`_watch_servers`): when it stops, its output (stdout
and stderr, merged by LocalServer) must hold no AddressSanitizer, LeakSanitizer or UBSan report,
and a server stopped with SIGTERM must exit 0. scripts/test.sh runs the integration tests against
the ASan/UBSan build (`AISTORE_SERVER_BIN`), where this turns every memory error or undefined
behaviour a request reaches into a failed test, even when the request itself "succeeded".
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer, find_server_binary

# The first line of each kind of report the sanitizer runtimes print.
SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",  # UBSan: "<file>:<line>:<col>: runtime error: ..."
    "UndefinedBehaviorSanitizer",
    "AddressSanitizer:DEADLYSIGNAL",
)


def sanitizer_report(output: str) -> str | None:
    """The sanitizer report(s) in a server's output, from the first report line on; else None."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if any(m in line for m in SANITIZER_MARKERS):
            return "\n".join(lines[max(0, i - 2) : i + 400])
    return None


@functools.cache
def server_is_sanitized() -> bool:
    """Whether the server binary tests run is an ASan/UBSan build (scripts/test.sh's second run)."""
    try:
        binary = find_server_binary()
    except Exception:
        return False
    if not shutil.which("ldd"):
        return False
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    return "libasan" in out or "libubsan" in out


@dataclass
class ServerProblem:
    what: str  # one line: which server, how it ended
    report: str  # the sanitizer report or the tail of the output


_problems: list[ServerProblem] = []
_reported = 0  # _problems[:_reported] already failed a test


def _check_stopped_server(srv: LocalServer, proc: Any, was_running: bool, kill: bool) -> None:
    """After LocalServer._terminate: record a sanitizer report, or a server that did not exit 0.

    A server found dead by SIGKILL before the stop was killed by its test on purpose; one that
    died otherwise (a sanitizer's halt_on_error, abort, a crash) or that LocalServer had to
    SIGKILL because it ignored SIGTERM for 10 s is a problem."""
    if proc is None:
        return
    code = proc.returncode
    output = srv.output
    report = sanitizer_report(output)
    cmd = f"{proc.args[0]} (pid {proc.pid})"
    if report is not None:
        _problems.append(ServerProblem(f"{cmd} exited {code}: sanitizer report", report))
        return
    tail = "\n".join(output.splitlines()[-60:])
    if was_running and not kill and code != 0:
        why = "did not stop within 10 s of SIGTERM" if code == -9 else f"exited {code} on SIGTERM"
        _problems.append(ServerProblem(f"{cmd} {why}", tail))
    elif not was_running and code not in (0, -9):
        _problems.append(ServerProblem(f"{cmd} died on its own, exit {code}", tail))


@pytest.fixture(scope="session", autouse=True)
def _watch_servers() -> Iterator[None]:
    """Wraps LocalServer._terminate (every stop, kill and restart goes through it)."""
    original: Callable[..., None] = LocalServer._terminate

    def terminate(self: LocalServer, *args: Any, **kwargs: Any) -> None:
        proc = self._proc
        was_running = proc is not None and proc.poll() is None
        original(self, *args, **kwargs)
        _check_stopped_server(self, proc, was_running, bool(kwargs.get("kill")))

    LocalServer._terminate = terminate  # type: ignore[method-assign]
    try:
        yield
    finally:
        LocalServer._terminate = original  # type: ignore[method-assign]


def _fail_on_new_problems() -> None:
    global _reported
    new = _problems[_reported:]
    _reported = len(_problems)
    if new:
        pytest.fail(_format_problems(new), pytrace=False)


@pytest.fixture(autouse=True)
def _no_server_problems() -> Iterator[None]:
    """Fails the test during which a watched server stopped with a sanitizer report or badly."""
    global _reported
    _reported = len(_problems)  # earlier ones belong to a module or session teardown
    yield
    _fail_on_new_problems()


@pytest.fixture(autouse=True)
def _sigint_handler_kept() -> Iterator[None]:
    """Fails the test that leaves a SIGINT handler of its own behind (a third-party library may
    install one: litdata's ends the process with exit code 0, so a later Ctrl-C test would end
    the whole run as if it had passed, the rest unrun)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left SIGINT handled by {after!r} (was {before!r})", pytrace=False)


def _format_problems(problems: list[ServerProblem]) -> str:
    return "\n\n".join(f"{p.what}:\n{p.report}" for p in problems)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _problems:
        terminalreporter.section("aistore-server: sanitizer reports / bad exits", red=True)
        terminalreporter.write_line(_format_problems(_problems))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # After the runner's final teardown: a server of a module fixture, stopped after the last
    # function-level check, still fails the run.
    if _problems and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def ais_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One server for the whole session (tests use their own buckets).

    At teardown it is stopped with SIGTERM and must exit 0 with no sanitizer report (checked by
    `_watch_servers`; a failure fails the run and is printed in the terminal summary)."""
    root = tmp_path_factory.mktemp("ais")
    srv = LocalServer(mountpaths=[root / f"mp{i}" for i in range(4)]).start()
    yield srv
    srv.stop()
    _fail_on_new_problems()


@pytest.fixture
def client(ais_server: LocalServer) -> Client:
    return ais_server.client()


@pytest.fixture
def bucket(client: Client) -> Iterator[Bucket]:
    """A fresh bucket per test, destroyed afterwards."""
    bck = client.bucket(f"test-{uuid.uuid4().hex[:12]}").create()
    yield bck
    bck.delete(missing_ok=True)


@pytest.fixture
def spawnable_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets spawned processes import test modules by name (`tests.unit...`): scripts/test.sh runs
    pytest with PYTHONSAFEPATH=1, so the repository root is not on sys.path. Appended, not
    prepended: the source tree's aistore/ must not shadow the installed package."""
    monkeypatch.setattr(sys, "path", [*sys.path, str(Path(__file__).resolve().parents[1])])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "no_sanitizer: skipped against an ASan/UBSan server (e.g. memory bounds: ASan's shadow "
        "memory and quarantine inflate the resident set)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("no_sanitizer") for item in items):
        return
    if server_is_sanitized():
        skip = pytest.mark.skip(reason="server built with ASan/UBSan (AISTORE_SERVER_BIN)")
        for item in items:
            if item.get_closest_marker("no_sanitizer"):
                item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str | None:
    if os.environ.get("AISTORE_SERVER_BIN"):
        kind = "ASan/UBSan build" if server_is_sanitized() else "plain build"
        return f"aistore-server: {os.environ['AISTORE_SERVER_BIN']} ({kind})"
    return None
