"""`LocalAuthN`: the AuthN service in a subprocess on a free loopback port, for tests, notebooks
and local clusters (what `LocalServer` is for the storage server).

It runs the installed service (`python -m aistore.authn_service.main`, the same code as the
`aistore-authn` script) with its own config directory (a temporary one, removed at `stop()`,
unless one is given), and takes the URL from the service's startup log line, so no port is
guessed. Secrets not given are generated. The service's log is kept, the last `LOG_LINES` lines.

Example:
    >>> with LocalAuthN() as authn:  # doctest: +SKIP
    ...     token = AuthNClient(authn.url).login(authn.su_name, authn.su_pass)
"""

from __future__ import annotations

import collections
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["LocalAuthN"]

LOG_LINES = 10_000
_READY = re.compile(r"aistore-authn serving (https?)://[^ ]*?:(\d+):")


class LocalAuthN:
    """A running `aistore-authn`; see the module docstring.

    Args:
        conf_dir: config directory (kept); None: a temporary one, removed at `stop()`.
        su_name: the first admin's name.
        su_pass: its password (generated when None; read it back from `su_pass`).
        key_passphrase: passphrase of the RSA key (generated when None).
        secret_key: an HMAC secret: sign HS256 instead of RSA.
        args: more `aistore-authn` flags (e.g. `["--https", "--cert", c, "--key", k]`).
        startup_timeout: seconds to wait for the service to serve.
    """

    def __init__(
        self,
        conf_dir: str | Path | None = None,
        su_name: str = "admin",
        su_pass: str | None = None,
        key_passphrase: str | None = None,
        secret_key: str | None = None,
        args: Sequence[str] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.su_name = su_name
        self.su_pass = su_pass or secrets.token_urlsafe(16)
        self._key_passphrase = key_passphrase or secrets.token_urlsafe(24)
        self._secret_key = secret_key
        self._conf_dir = Path(conf_dir) if conf_dir is not None else None
        self._own_dir: Path | None = None
        self._args = list(args)
        self._timeout = startup_timeout
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._log: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.url = ""

    @property
    def conf_dir(self) -> Path:
        """The config directory in use (valid once started)."""
        directory = self._conf_dir or self._own_dir
        assert directory is not None, "not started"
        return directory

    @property
    def pid(self) -> int | None:
        """The service's process id while it runs (None otherwise)."""
        return None if self._proc is None else self._proc.pid

    @property
    def log(self) -> str:
        """The service's log so far (the last `LOG_LINES` lines)."""
        return "".join(self._log)

    def command(self) -> list[str]:
        """The command line `start()` runs."""
        return [
            sys.executable,
            "-m",
            "aistore.authn_service.main",
            "--config",
            str(self.conf_dir),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            *self._args,
        ]

    def environment(self) -> dict[str, str]:
        """The environment `start()` gives the service: this one, with the secrets set and any
        other AuthN setting of this process's environment left out."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIS_AUTHN_")}
        env["AIS_AUTHN_SU_NAME"] = self.su_name
        env["AIS_AUTHN_SU_PASS"] = self.su_pass
        env["AIS_AUTHN_PRIVATE_KEY_PASS"] = self._key_passphrase
        if self._secret_key:
            env["AIS_AUTHN_SECRET_KEY"] = self._secret_key
        return env

    def cluster_env(self) -> dict[str, str]:
        """What a storage server needs in its environment to verify this service's tokens:
        `AIS_AUTHN_SECRET_KEY` (HS256) or `AIS_AUTHN_PUBLIC_KEY` (RSA, the current signing key,
        read from the running service). `LocalServer(authn=...)` uses it."""
        if self._secret_key:
            return {"AIS_AUTHN_SECRET_KEY": self._secret_key}
        if not self.url:
            raise RuntimeError("the service is not running")
        import requests  # noqa: PLC0415 (only for a running service)

        verify: bool | str = True
        if "--cert" in self._args:  # our own HTTPS: trust its certificate
            verify = self._args[self._args.index("--cert") + 1]
        r = requests.get(f"{self.url}/v1/public-key", timeout=10, verify=verify)
        r.raise_for_status()
        return {"AIS_AUTHN_PUBLIC_KEY": r.json()["public_key"]}

    def start(self) -> LocalAuthN:
        """Start the service and wait until it serves.

        Raises:
            RuntimeError: it exited or did not serve in time (the message carries its log).
        """
        if self._proc is not None:
            return self
        if self._conf_dir is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="aistore-authn-"))
        self._log.clear()
        self.url = ""
        proc = subprocess.Popen(
            self.command(),
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._proc = proc
        ready = threading.Event()
        found: list[str] = []

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                self._log.append(line)
                match = _READY.search(line)
                if match and not found:
                    found.append(f"{match.group(1)}://127.0.0.1:{match.group(2)}")
                    ready.set()
            ready.set()  # the service exited

        self._reader = threading.Thread(target=read, name="authn-log", daemon=True)
        self._reader.start()
        ready.wait(self._timeout)
        if not found:
            self.stop()
            raise RuntimeError(f"aistore-authn did not start:\n{self.log[-8000:]}")
        self.url = found[0]
        return self

    def stop(self) -> int | None:
        """Stop the service (SIGTERM, then SIGKILL after 20 s); its exit status."""
        proc, self._proc = self._proc, None
        code = None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            code = proc.returncode
        if self._reader is not None:
            self._reader.join(5)
            self._reader = None
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None
        return code

    def __enter__(self) -> LocalAuthN:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
