"""Run the embedded C++ storage server from Python.

``LocalServer`` starts ``aistore-server`` on an ephemeral port with temporary mountpaths (or the
ones you give), waits until it answers, and stops it on exit.

Example:
    >>> from aistore.server import LocalServer
    >>> with LocalServer() as srv:
    ...     client = srv.client()
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistore.authn_service.local import LocalAuthN
    from aistore.sdk.client import Client

__all__ = ["LocalServer", "ServerStartError", "find_server_binary", "main"]

_BINARY_NAME = "aistore-server"
_LISTEN_RE = re.compile(r"listening on (https?://\S+)")
_PR_SET_PDEATHSIG = 1


class ServerStartError(RuntimeError):
    """The server binary is missing or did not come up; the message carries its output."""


def find_server_binary() -> Path:
    """Locate the server executable: ``$AISTORE_SERVER_BIN``, else the packaged one."""
    env = os.environ.get("AISTORE_SERVER_BIN")
    if env:
        path = Path(env)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ServerStartError(f"AISTORE_SERVER_BIN={env} is not an executable file")
        return path
    path = Path(__file__).resolve().parent / "_bin" / _BINARY_NAME
    if path.is_file():
        return path
    raise ServerStartError(
        f"{_BINARY_NAME} binary not found at {path}; install the package with `pip install .` "
        "(it builds the server) or set AISTORE_SERVER_BIN"
    )


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if the Python process dies, so does the server.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


class LocalServer:
    """A local ``aistore-server`` process.

    Args:
        mountpaths: data directories to use; default: ``num_mountpaths`` fresh temporary ones,
            removed on ``stop()``.
        num_mountpaths: how many temporary mountpaths to create when ``mountpaths`` is not given.
        port: TCP port; 0 (default) lets the OS pick a free one.
        host: address to bind.
        threads: server I/O threads (default: two per CPU, at least 4).
        fsync: sync data and directories before each commit (durability over speed).
        promote_root: the directory tree ``Object.promote`` may read (default: none, promote
            is off; AIS uses /var/lib/ais/promote). Symlinks in it are never followed.
        startup_timeout: seconds to wait for the server to listen.
        binary: path of the executable (default: ``find_server_binary()``).
        args: more command-line flags for the server, e.g. its limits
            (``["--max-connections", "2000", "--getbatch-max-items", "1000000"]``; see
            ``aistore-server --help``).
        env: environment variables for the server process, over this process's own; e.g. where
            remote ``s3://`` buckets live and as whom (``{"S3_ENDPOINT": "http://127.0.0.1:9000",
            "AWS_ACCESS_KEY_ID": ..., "AWS_SECRET_ACCESS_KEY": ...}``).
        authn: a running `LocalAuthN`: the server then requires tokens (``--auth-required``)
            and verifies them with that service's key (its HS256 secret or RSA public key).
            For an issuer's keys discovered over HTTPS instead, pass ``--auth-oidc-issuer`` in
            `args`.
        tls: serve HTTPS with a certificate for ``localhost``/127.0.0.1 signed by a CA made for
            this server in its temporary directory (``ca_cert``); ``client()`` trusts that CA.
        mtls: as ``tls``, and clients must present a certificate that CA signed;
            ``client_cert`` is one, and ``client()`` presents it.
        tls_cert, tls_key: serve HTTPS with this PEM certificate chain and key instead
            (``--tls-cert``/``--tls-key``); give ``ca_cert`` for ``client()`` to verify them.
        tls_client_ca: with ``tls_cert``: require client certificates signed by these CAs
            (``--tls-client-ca``).
        ca_cert: the CA bundle ``client()`` verifies the server with (given files only).
        etl_python: the Python that runs ETL transformers (``--etl-python``); by default this
            interpreter, so ETL classes unpickle with the packages and version they were made with.
        download_allow_loopback: download jobs may fetch from loopback addresses
            (``--download-allow-loopback``; off by default, as the server's egress guard refuses
            them): for tests and single-user laptops only (docs/downloads.md).

    Example:
        >>> with LocalServer(num_mountpaths=4) as srv:
        ...     srv.client().bucket("data").create()
    """

    def __init__(
        self,
        mountpaths: Sequence[str | os.PathLike[str]] | None = None,
        *,
        num_mountpaths: int = 4,
        port: int = 0,
        host: str = "127.0.0.1",
        threads: int | None = None,
        fsync: bool = False,
        promote_root: str | os.PathLike[str] | None = None,
        startup_timeout: float = 15.0,
        binary: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        authn: LocalAuthN | None = None,
        tls: bool = False,
        mtls: bool = False,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
        tls_client_ca: str | os.PathLike[str] | None = None,
        ca_cert: str | os.PathLike[str] | None = None,
        etl_python: str | os.PathLike[str] | None = None,
        download_allow_loopback: bool = False,
    ) -> None:
        if mountpaths is None and num_mountpaths < 1:
            raise ValueError("num_mountpaths must be at least 1")
        self._given_mountpaths = [Path(p).resolve() for p in mountpaths] if mountpaths else None
        self._num_mountpaths = num_mountpaths
        self._port = port
        self._host = host
        self._threads = threads
        self._fsync = fsync
        self._promote_root = Path(promote_root).resolve() if promote_root is not None else None
        self._startup_timeout = startup_timeout
        self._binary = Path(binary) if binary else None
        self._args = [str(a) for a in args]
        self._etl_python = str(etl_python) if etl_python is not None else sys.executable
        self._download_allow_loopback = download_allow_loopback
        self._env = dict(env) if env else None
        self._authn = authn
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if tls_cert is not None and (tls or mtls):
            raise ValueError(
                "tls/mtls make their own certificates: give them or tls_cert, not both"
            )
        if tls_client_ca is not None and tls_cert is None:
            raise ValueError("tls_client_ca needs tls_cert and tls_key")
        self._make_tls = tls or mtls
        self._mtls = mtls
        self._tls_cert = Path(tls_cert).resolve() if tls_cert is not None else None
        self._tls_key = Path(tls_key).resolve() if tls_key is not None else None
        self._tls_client_ca = Path(tls_client_ca).resolve() if tls_client_ca is not None else None
        self._ca_cert = Path(ca_cert).resolve() if ca_cert is not None else None
        self._client_cert: tuple[str, str] | None = None
        self._tmpdir: Path | None = None
        self._mountpaths: list[Path] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._endpoint: str | None = None
        self._log: list[str] = []
        self._pump: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> LocalServer:
        """Start the server and wait until it accepts requests. Returns ``self``."""
        if self._proc is not None:
            raise RuntimeError("server already running")
        binary = self._binary or find_server_binary()
        if not self._mountpaths:
            if self._given_mountpaths:
                self._mountpaths = list(self._given_mountpaths)
            else:
                self._tmpdir = Path(tempfile.mkdtemp(prefix="aistore-"))
                self._mountpaths = [self._tmpdir / f"mp{i}" for i in range(self._num_mountpaths)]
            for mp in self._mountpaths:
                mp.mkdir(parents=True, exist_ok=True)
        if self._make_tls and self._tls_cert is None:
            self._make_certificates()
        cmd = [str(binary), "--host", self._host, "--port", str(self._port)]
        if self._tls_cert is not None and self._tls_key is not None:
            cmd += ["--tls-cert", str(self._tls_cert), "--tls-key", str(self._tls_key)]
            if self._tls_client_ca is not None:
                cmd += ["--tls-client-ca", str(self._tls_client_ca)]
        for mp in self._mountpaths:
            cmd += ["--mountpath", str(mp)]
        if self._threads:
            cmd += ["--threads", str(self._threads)]
        if self._fsync:
            cmd.append("--fsync")
        if self._promote_root is not None:
            cmd += ["--promote-root", str(self._promote_root)]
        if self._etl_python and "--etl-python" not in self._args:
            cmd += ["--etl-python", self._etl_python]
        if self._download_allow_loopback and "--download-allow-loopback" not in self._args:
            cmd.append("--download-allow-loopback")
        cmd += self._args
        env = dict(self._env) if self._env else {}
        if self._authn is not None:  # tokens required, verified with the service's key
            cmd.append("--auth-required")
            env.update(self._authn.cluster_env())
        self._log = []
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env} if env else None,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self._endpoint = self._await_listen_line()
        if self._port == 0:  # restarts reuse the port so endpoints stay valid
            self._port = int(self._endpoint.rsplit(":", 1)[1])
        return self

    def _make_certificates(self) -> None:
        """A CA, and the server and client certificates it signs, in a directory of ours."""
        from aistore._internal.tls_files import make_tls_files

        if self._tmpdir is None:
            self._tmpdir = Path(tempfile.mkdtemp(prefix="aistore-"))
        files = make_tls_files(self._tmpdir / "tls")
        self._tls_cert, self._tls_key = files.server_cert, files.server_key
        self._ca_cert = files.ca_cert
        if self._mtls:
            self._tls_client_ca = files.ca_cert
            self._client_cert = (str(files.client_cert), str(files.client_key))

    def _await_listen_line(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        found: list[str] = []
        stdout = self._proc.stdout

        def pump() -> None:
            for raw in stdout:
                line = raw.decode(errors="replace").rstrip()
                self._log.append(line)
                if not found and (m := _LISTEN_RE.search(line)):
                    found.append(m.group(1))

        self._pump = threading.Thread(target=pump, name="aistore-server-log", daemon=True)
        self._pump.start()
        deadline = time.monotonic() + self._startup_timeout
        while time.monotonic() < deadline:
            if found:
                return found[0]
            if self._proc.poll() is not None:
                break
            time.sleep(0.005)
        output = "\n".join(self._log[-50:])
        self._terminate(kill=True)
        raise ServerStartError(
            f"aistore-server did not start (exit code {self._exit_code()}):\n{output}"
        )

    def _exit_code(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def _terminate(self, *, kill: bool, timeout: float = 10.0) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # The log thread reads stdout until EOF, which follows the exit; closing the pipe under
        # a reader that is still in read() makes that read fail with an odd ValueError.
        pump, self._pump = self._pump, None
        if pump is not None:
            pump.join(timeout=5.0)
        if proc.stdout and (pump is None or not pump.is_alive()):
            proc.stdout.close()
        self._proc = None

    def stop(self, *, keep_data: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and remove temporary mountpaths."""
        self._terminate(kill=False)
        if self._tmpdir is not None and not keep_data:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
            self._mountpaths = []
            if self._make_tls:  # they lived in the temporary directory
                self._tls_cert = self._tls_key = self._tls_client_ca = self._ca_cert = None
                self._client_cert = None

    def kill(self) -> None:
        """Crash the server with SIGKILL, keeping its data (for recovery tests)."""
        self._terminate(kill=True)

    def restart(self) -> LocalServer:
        """Start again on the same mountpaths and port, e.g. after ``kill()``."""
        self._terminate(kill=False)
        return self.start()

    # -- accessors --------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123`` (``https://`` with TLS)."""
        if self._endpoint is None:
            raise RuntimeError("server not started")
        return self._endpoint

    @property
    def ca_cert(self) -> str | None:
        """The CA bundle that verifies this server's certificate (``tls=True``: the one made for
        it), for ``Client(ca_cert=...)``, ``AIS_CLIENT_CA`` or ``curl --cacert``; else None."""
        return str(self._ca_cert) if self._ca_cert is not None else None

    @property
    def client_cert(self) -> tuple[str, str] | None:
        """``mtls=True``: (certificate, key) files of a client certificate the server accepts,
        for ``Client(client_cert=...)``; else None."""
        return self._client_cert

    @property
    def mountpaths(self) -> list[Path]:
        return list(self._mountpaths)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def output(self) -> str:
        """What the server printed so far."""
        return "\n".join(self._log)

    def client(self, **kwargs: object) -> Client:
        """A ``Client`` for this server (keyword arguments go to ``Client``). Over TLS it trusts
        ``ca_cert`` and presents ``client_cert`` unless told otherwise."""
        from aistore.sdk.client import Client

        if self.endpoint.startswith("https://"):
            if self._ca_cert is not None and "skip_verify" not in kwargs:
                kwargs.setdefault("ca_cert", str(self._ca_cert))
            if self._client_cert is not None:
                kwargs.setdefault("client_cert", self._client_cert)
        return Client(self.endpoint, **kwargs)  # type: ignore[arg-type]

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __del__(self) -> None:
        if getattr(self, "_proc", None) is not None:
            self.stop()


def main() -> None:
    """Console entry point ``aistore-server``: exec the installed binary with the same arguments."""
    try:
        binary = find_server_binary()
    except ServerStartError as e:
        sys.stderr.write(f"{e}\n")
        raise SystemExit(2) from e
    os.execv(binary, [str(binary), *sys.argv[1:]])
