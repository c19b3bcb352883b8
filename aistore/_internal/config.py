"""Client settings resolved in one place: explicit argument > environment variable > default."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from aistore._internal.const import (
    AIS_AUTHN_TOKEN,
    AIS_AUTHN_TOKEN_FILE,
    AIS_CLIENT_CA,
    AIS_CLIENT_CRT,
    AIS_CLIENT_KEY,
    AIS_CONNECT_TIMEOUT,
    AIS_ENDPOINT,
    AIS_MAX_CONN_POOL,
    AIS_READ_TIMEOUT,
    AIS_SKIP_VERIFY,
    AIS_SKIP_VERIFY_CRT,
)

# (connect, read) seconds; None disables that part.
TimeoutPair = tuple[float | None, float | None]
TimeoutArg = float | TimeoutPair | None
ClientCert = str | tuple[str, str]

DEFAULT_CONNECT_TIMEOUT = 3.0
DEFAULT_READ_TIMEOUT = 20.0
DEFAULT_MAX_POOL_SIZE = 10

_TRUE = frozenset(("1", "t", "true", "y", "yes", "on"))


def parse_bool(value: str | None) -> bool:
    """Go `cos.ParseBool` truthiness: `1, t, true, y, yes, on`, any case; all else is False."""
    if not value:
        return False
    return value.strip().lower() in _TRUE


def resolve_endpoint(endpoint: str | None) -> str:
    """The explicit endpoint, else `AIS_ENDPOINT` (our extension).

    Raises:
        ValueError: neither is set.
    """
    resolved = endpoint or os.environ.get(AIS_ENDPOINT, "").strip()
    if not resolved:
        raise ValueError(
            f"No AIStore endpoint: pass Client(endpoint=...) or set the {AIS_ENDPOINT} "
            "environment variable (e.g. http://localhost:8080)"
        )
    return resolved


def _env_timeout(name: str, default: float) -> float | None:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        warnings.warn(
            f"Invalid value for {name}='{raw}'. Using default timeout of {default} seconds.",
            stacklevel=4,
        )
        return default
    return None if value == 0 else value


def resolve_timeout(timeout: TimeoutArg) -> TimeoutArg:
    """Apply the official rules: 0 disables (all or one part), None reads the environment."""
    if timeout is None:
        connect = _env_timeout(AIS_CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT)
        read = _env_timeout(AIS_READ_TIMEOUT, DEFAULT_READ_TIMEOUT)
    elif isinstance(timeout, tuple):
        connect, read = (None if part == 0 else part for part in timeout)
    else:
        return None if timeout == 0 else timeout
    if connect is None and read is None:
        return None
    return (connect, read)


def resolve_max_pool_size(max_pool_size: int | None) -> int:
    """Connections kept per host: argument, else `AIS_MAX_CONN_POOL`, else 10."""
    if max_pool_size is not None:
        return max_pool_size
    raw = os.environ.get(AIS_MAX_CONN_POOL)
    if raw:
        try:
            return int(raw)
        except ValueError:
            warnings.warn(
                f"Invalid value for {AIS_MAX_CONN_POOL}='{raw}'. "
                f"Using default max_pool_size of {DEFAULT_MAX_POOL_SIZE}.",
                stacklevel=3,
            )
    return DEFAULT_MAX_POOL_SIZE


def default_token_file() -> Path:
    """Where the Go CLI saves its login (`ais auth login`): `<user config dir>/ais/cli/auth.token`,
    the user config dir being `$XDG_CONFIG_HOME`, else `~/.config` (Go's `os.UserConfigDir`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ais" / "cli" / "auth.token"


def _token_from_file(path: Path, must_exist: bool) -> str:
    """The token of a CLI token file; "" (with a warning, unless it is an absent default file)
    when it cannot be read, as the Go API logs and goes on without one."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        if must_exist:
            warnings.warn(f"AuthN token file {path} does not exist", stacklevel=4)
        return ""
    except (OSError, ValueError) as e:
        warnings.warn(f"Failed to load AuthN token from {path}: {e}", stacklevel=4)
        return ""
    token = doc.get("token") if isinstance(doc, dict) else None
    if not isinstance(token, str):
        warnings.warn(f'AuthN token file {path} holds no "token" string', stacklevel=4)
        return ""
    return token


def resolve_token(token: str | None) -> str:
    """Bearer token, in the Go API's order (`api/authn/loadtoken.go`): the argument, else
    `AIS_AUTHN_TOKEN`, else the file `AIS_AUTHN_TOKEN_FILE` names, else the CLI's default token
    file when it exists, else none."""
    if token:
        return token
    env_token = os.environ.get(AIS_AUTHN_TOKEN)
    if env_token:
        return env_token
    named = os.environ.get(AIS_AUTHN_TOKEN_FILE)
    if named:
        return _token_from_file(Path(named).expanduser(), must_exist=True)
    return _token_from_file(default_token_file(), must_exist=False)


def resolve_skip_verify(skip_verify: bool) -> bool:
    """Argument, else `AIS_SKIP_VERIFY_CRT`, else the legacy `AIS_SKIP_VERIFY`."""
    if skip_verify:
        return True
    raw = os.environ.get(AIS_SKIP_VERIFY_CRT)
    if raw is None:
        raw = os.environ.get(AIS_SKIP_VERIFY)
    return parse_bool(raw)


def resolve_client_cert(client_cert: ClientCert | None) -> ClientCert | None:
    """Argument, else (`AIS_CRT`, `AIS_CRT_KEY`) when both are set."""
    if client_cert:
        return client_cert
    cert, key = os.environ.get(AIS_CLIENT_CRT), os.environ.get(AIS_CLIENT_KEY)
    return (cert, key) if cert and key else None


def resolve_verify(skip_verify: bool, ca_cert: str | None) -> bool | str:
    """`requests` verify value: False when skipping, else a CA bundle path, else system CAs."""
    if skip_verify:
        return False
    return ca_cert or os.environ.get(AIS_CLIENT_CA) or True
