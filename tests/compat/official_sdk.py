"""The official AIStore Python SDK (PyPI ``aistore``) in its own virtualenv, for compatibility
tests and benchmarks.

Both packages import as ``aistore``, so the official one never shares an interpreter with ours:
``ensure_venv()`` creates (once, then reuses) ``build/official-sdk-venv/<version>`` with the
official release installed, and ``run_script()`` runs a Python script in it against an endpoint.

``with_torch=True`` selects a second venv, ``<version>-torch``, for the official
``aistore.pytorch``: it is created with ``--system-site-packages`` (and, when the interpreter
running this module is a venv's, a link to its site-packages) so that it uses that
interpreter's torch (no second multi-GiB download), and gets the official
package plus ``alive-progress`` (imported by the official iterable datasets) of its own. Its own
``aistore`` comes first on ``sys.path`` and shadows any ``aistore`` installed system-wide (ours);
that is checked (``aistore.__file__`` inside the venv, the right ``__version__``) the first time
a process uses the venv, and a venv that fails the check is rebuilt, then a ``VenvError``.

A script receives the endpoint as ``sys.argv[1]`` (and ``$AIS_ENDPOINT``), followed by any
extra arguments, and reports back by printing one JSON document as the last line of its stdout;
``run_script()`` returns it parsed.

Example:
    >>> src = "import aistore, json; print(json.dumps(aistore.__version__))"
    >>> run_script(src, endpoint)  # doctest: +SKIP
    '2.0.0'

Errors:
    ``PyPIUnreachable`` — the official package could not be downloaded because the index is
    unreachable (tests skip on it); any other failure to build the venv is a ``VenvError``.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aistore._internal.venvs import link_site_packages

__all__ = [
    "OFFICIAL_SDK_VERSION",
    "PyPIUnreachable",
    "ScriptError",
    "VenvError",
    "ensure_venv",
    "run_script",
]

OFFICIAL_SDK_VERSION = "2.0.0"
REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_ROOT = REPO_ROOT / "build" / "official-sdk-venv"

_READY_MARKER = ".ready"  # written last: its presence means the venv is complete
_checked: set[Path] = set()  # venvs found complete and importing the right aistore, this process
_PIP_TIMEOUT_S = 600  # a whole `pip install`

# pip's messages when it cannot talk to the index at all (as opposed to a missing version,
# a build failure or a broken interpreter, which must fail loudly instead of skipping).
_NETWORK_FAILURE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable|No route to host|"
    r"Connection refused|ConnectTimeoutError|ReadTimeoutError|Read timed out|ProxyError|"
    r"Max retries exceeded|SSLError|CERTIFICATE_VERIFY_FAILED|ConnectionResetError",
)


class VenvError(RuntimeError):
    """The official SDK's virtualenv could not be built (not a network problem)."""


class PyPIUnreachable(VenvError):
    """pip could not reach the package index to download the official SDK."""


class ScriptError(RuntimeError):
    """A script run in the official venv failed; the message carries its output."""

    def __init__(self, message: str, returncode: int | None, stdout: str, stderr: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


# Inherited, these point venv tools at another interpreter's packages: with PYTHONPATH on the
# system site-packages (as the benchmark smoke tests set it), pip sees the official SDK's
# dependencies as installed and leaves them out of the venv, whose isolated import then fails.
_FOREIGN_ENV = ("PYTHONPATH", "PYTHONHOME")


def _run(
    cmd: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> subprocess.CompletedProcess[str]:
    if env is None:
        env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
    return subprocess.run(
        list(cmd),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _pip_install(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Short socket timeout and few retries: an unreachable index fails in seconds, not minutes.
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    return _run([*cmd, "--timeout", "30", "--retries", "2", *args], _PIP_TIMEOUT_S)


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _installed_version(python: Path, why: list[str] | None = None) -> str | None:
    """The version `python` imports as `aistore`, or None (with the reason appended to `why`)."""
    # -I: isolated mode; neither the cwd nor PYTHONPATH can put our own `aistore` first.
    # The first import in a new venv compiles the whole SDK: allow for a loaded machine.
    try:
        res = _run([str(python), "-I", "-c", "import aistore; print(aistore.__version__)"], 300)
    except (OSError, subprocess.TimeoutExpired) as e:
        if why is not None:
            why.append(repr(e))
        return None
    if res.returncode != 0 and why is not None:
        why.append(res.stderr.strip()[-2000:])
    return res.stdout.strip() if res.returncode == 0 else None


_PROBE = (
    "import json, aistore, sys; "
    "print(json.dumps([aistore.__version__, aistore.__file__, sys.prefix]))"
)


def _shadowing_problem(python: Path, venv: Path, version: str) -> str | None:
    """Why `python` (a venv that also sees the system's site-packages) would not import its own
    official ``aistore==version``; None when it does."""
    try:
        res = _run([str(python), "-I", "-c", _PROBE], 60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run {python}: {e}"
    if res.returncode != 0:
        return f"`import aistore` fails in {venv}:\n{res.stderr.strip()[-2000:]}"
    got_version, file, prefix = json.loads(res.stdout.strip().splitlines()[-1])
    if Path(prefix).resolve() != venv.resolve():
        return f"{python} runs with sys.prefix {prefix}, not {venv}"
    if not Path(file).resolve().is_relative_to(venv.resolve()):
        return f"{venv} imports aistore from {file}, outside the venv (shadowed)"
    if got_version != version:
        return f"{venv} imports aistore {got_version!r}, expected {version!r}"
    return None


def _create_venv(venv: Path, root: Path, system_site_packages: bool = False) -> None:
    """`python3 -m venv`, or `virtualenv` (pip-installed into a private dir) when the stdlib
    venv/ensurepip is missing (e.g. Debian without python3-venv)."""
    site = ["--system-site-packages"] if system_site_packages else []
    res = _run([sys.executable, "-m", "venv", *site, str(venv)], 300)
    if res.returncode == 0 and _venv_python(venv).exists():
        if system_site_packages:
            link_site_packages(venv)  # this interpreter's packages, when it is a venv's
        return
    shutil.rmtree(venv, ignore_errors=True)
    tools = root / "_virtualenv"
    if not (tools / "virtualenv").is_dir():
        pip = _pip_install(Path(sys.executable), "--target", str(tools), "virtualenv")
        if pip.returncode != 0:
            _raise_pip_failure("virtualenv", pip, venv_stderr=res.stderr)
    env = {**os.environ, "PYTHONPATH": str(tools)}
    res2 = _run([sys.executable, "-m", "virtualenv", "-q", *site, str(venv)], 300, env)
    if res2.returncode != 0:
        raise VenvError(
            f"cannot create a virtualenv at {venv}:\nvenv: {res.stderr.strip()}\n"
            f"virtualenv: {res2.stderr.strip()}"
        )
    if system_site_packages:
        link_site_packages(venv)


def _raise_pip_failure(
    what: str, res: subprocess.CompletedProcess[str], venv_stderr: str = ""
) -> None:
    output = f"{res.stdout}\n{res.stderr}".strip()
    tail = "\n".join(output.splitlines()[-15:])
    if _NETWORK_FAILURE.search(output):
        raise PyPIUnreachable(f"PyPI unreachable: `pip install {what}` failed:\n{tail}")
    extra = f"\n(stdlib venv failed first: {venv_stderr.strip()})" if venv_stderr else ""
    raise VenvError(f"`pip install {what}` failed (exit {res.returncode}):\n{tail}{extra}")


def ensure_venv(
    version: str = OFFICIAL_SDK_VERSION, root: Path = VENV_ROOT, *, with_torch: bool = False
) -> Path:
    """The interpreter of a venv holding the official ``aistore==version``; built on first use.

    Cached at ``root/<version>`` (``root/<version>-torch`` with `with_torch`, see the module
    docstring) and reused while it imports the right version. A file lock makes concurrent
    callers (parallel tests, a benchmark) build it once.

    Raises:
        PyPIUnreachable: pip could not reach the index.
        VenvError: any other failure (the message carries pip's or venv's output), including a
            torch venv whose ``aistore`` is not the venv's own official one.
    """
    root.mkdir(parents=True, exist_ok=True)
    name = f"{version}-torch" if with_torch else version
    venv = root / name
    python = _venv_python(venv)
    if venv in _checked:
        return python
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / _READY_MARKER).exists() and (
            _shadowing_problem(python, venv, version) is None
            if with_torch
            else _installed_version(python) == version
        ):
            _checked.add(venv)
            return python
        shutil.rmtree(venv, ignore_errors=True)
        _create_venv(venv, root, system_site_packages=with_torch)
        if with_torch:
            _build_torch_venv(python, venv, version)
        else:
            pip = _pip_install(python, f"aistore=={version}")
            if pip.returncode != 0:
                _raise_pip_failure(f"aistore=={version}", pip)
            why: list[str] = []
            got = _installed_version(python, why)
            if got != version:
                raise VenvError(
                    f"venv {venv} imports aistore {got!r}, expected {version!r}\n" + "\n".join(why)
                )
        (venv / _READY_MARKER).write_text(version + "\n")
        _checked.add(venv)
        return python


def _build_torch_venv(python: Path, venv: Path, version: str) -> None:
    """Install the official SDK and alive-progress into a fresh ``--system-site-packages`` venv
    and check that it imports them and the system's torch, and that its ``aistore`` wins."""
    torch_probe = _run([str(python), "-I", "-c", "import torch"], 300)
    if torch_probe.returncode != 0:
        raise VenvError(
            f"torch is not importable from {sys.executable}, whose site-packages the official "
            f"torch venv shares: install torch there first\n{torch_probe.stderr.strip()[-2000:]}"
        )
    what = (f"aistore=={version}", "alive-progress>=3.1.0")
    pip = _pip_install(python, *what)
    if pip.returncode != 0:
        _raise_pip_failure(" ".join(what), pip)
    problem = _shadowing_problem(python, venv, version)
    if problem is not None:
        raise VenvError(problem)
    deps = _run([str(python), "-I", "-c", "import aistore.pytorch, alive_progress"], 300)
    if deps.returncode != 0:
        raise VenvError(f"`import aistore.pytorch` fails in {venv}:\n{deps.stderr[-2000:]}")


def run_script(
    script: str,
    endpoint: str,
    args: Sequence[str] = (),
    *,
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
    version: str = OFFICIAL_SDK_VERSION,
    with_torch: bool = False,
) -> Any:
    """Run Python source `script` in the official SDK's venv; return its last stdout line as JSON.

    The script sees ``sys.argv = [<path>, endpoint, *args]`` and ``$AIS_ENDPOINT``; it runs in
    isolated mode (``-I``) from a temporary directory, so only the official ``aistore`` is
    importable. `env` adds environment variables. `with_torch` runs it in the torch venv (see
    `ensure_venv`), where the official ``aistore.pytorch`` works.

    Raises:
        ScriptError: the script exited non-zero, timed out, or its last line is not JSON.
        PyPIUnreachable, VenvError: from `ensure_venv`.
    """
    python = ensure_venv(version, with_torch=with_torch)
    with tempfile.TemporaryDirectory(prefix="official-sdk-") as tmp:
        path = Path(tmp) / "script.py"
        path.write_text(script)
        full_env = {**os.environ, **(env or {}), "AIS_ENDPOINT": endpoint}
        cmd = [str(python), "-I", str(path), endpoint, *args]
        try:
            res = _run(cmd, timeout, full_env, cwd=tmp)
        except subprocess.TimeoutExpired as e:
            out, err = _text(e.stdout), _text(e.stderr)
            raise ScriptError(
                f"official-SDK script timed out after {timeout}s\n{err[-4000:]}", None, out, err
            ) from e
    lines = res.stdout.strip().splitlines()
    try:
        if res.returncode == 0 and lines:
            return json.loads(lines[-1])
    except json.JSONDecodeError:
        pass
    why = f"exited with {res.returncode}" if res.returncode else "printed no JSON last line"
    raise ScriptError(
        f"official-SDK script {why}\n--- stdout ---\n{res.stdout[-4000:]}\n"
        f"--- stderr ---\n{res.stderr[-8000:]}",
        res.returncode,
        res.stdout,
        res.stderr,
    )


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
