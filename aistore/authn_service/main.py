"""`aistore-authn`: flags and environment, startup, shutdown; wiring only.

Every setting comes from, in order: a flag, the AIS environment variable, `authn.json` in the
config directory (AIS AuthN's file: `net.http.{port,use_https,server_crt,server_key}`,
`net.external_url`, `auth.{secret,expiration_time,rsa_key_bits}`), the default. `--help` lists
them all. Secrets are read from the environment or from files, never from flags (a flag shows in
`ps`).

Every file the service creates is owner-only: the process umask is 077 from the start.

Example:
    $ AIS_AUTHN_SU_PASS=admin-pass AIS_AUTHN_PRIVATE_KEY_PASS=key-passphrase aistore-authn \\
        --config /tmp/authn --host 127.0.0.1
"""

from __future__ import annotations

import argparse
import ctypes
import ipaddress
import json
import logging
import os
import signal
import sqlite3
import ssl
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aistore._internal.extras import require_extra

require_extra("authn", "cheroot", "cryptography", "jwt", what="aistore-authn")

from aistore.authn_service.clusters import ClusterClient  # noqa: E402
from aistore.authn_service.keys import HMACSigner, KeyFileError, RSAKeyring, Signer  # noqa: E402
from aistore.authn_service.listener import READ_TIMEOUT_S, AuthNServer  # noqa: E402
from aistore.authn_service.service import AuthNService, ServiceError, ServiceSettings  # noqa: E402
from aistore.authn_service.store import Store  # noqa: E402
from aistore.authn_service.throttle import LOGIN_LOCKOUT_S  # noqa: E402
from aistore.authn_service.wire import format_duration, parse_duration  # noqa: E402
from aistore.version import __version__  # noqa: E402

__all__ = ["main"]

logger = logging.getLogger("aistore.authn")

DEFAULT_PORT = 52001
DEFAULT_TTL = "24h"
DEFAULT_MAX_TOKEN_AGE = "2160h"  # 90 days: the longest lifetime a login may ask for
DEFAULT_READ_TIMEOUT = format_duration(READ_TIMEOUT_S)
DEFAULT_LOGIN_LOCKOUT = format_duration(LOGIN_LOCKOUT_S)
MIN_PASSPHRASE = 8  # as AIS (`signing.MinPassphraseLength`)
KEY_FILE = "authn_key.pem"
DB_FILE = "authn.db"
CONF_FILE = "authn.json"

_ENV_HELP = """environment (a flag wins over its variable; secrets only come from here or files):
  AIS_AUTHN_CONF_DIR          config directory (--config)
  AIS_AUTHN_PORT              port (--port)
  AIS_AUTHN_EXTERNAL_URL      external URL (--external-url)
  AIS_AUTHN_USE_HTTPS         true: serve HTTPS (--https)
  AIS_SERVER_CRT, AIS_SERVER_KEY   TLS certificate and key (--cert, --key)
  AIS_AUTHN_TTL               default token lifetime (--ttl)
  AIS_AUTHN_SU_NAME           the first admin's name (default: admin)
  AIS_AUTHN_SU_PASS           the first admin's password (required on first start)
  AIS_AUTHN_SECRET_KEY        HMAC secret: sign HS256 instead of RSA
  AIS_AUTHN_PRIVATE_KEY_FILE  RSA private key file (--private-key-file)
  AIS_AUTHN_PRIVATE_KEY_PASS  passphrase encrypting that file (required for RSA signing)
  AIS_AUTHN_LOG_LEVEL         log level (--log-level)
"""


_M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
_OWN_MAPPING_FROM = 1 << 20


def _return_large_frees() -> None:
    """Have glibc serve every allocation of `_OWN_MAPPING_FROM` bytes or more from a mapping of
    its own, unmapped when freed: scrypt's 16 MiB buffer (`passwords`) is then resident only
    while its hash runs. By default glibc raises that threshold after the first such free and
    keeps later buffers in per-thread arenas, so the resident size creeps up to one buffer per
    arena a hashing thread ever used. A no-op without glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, _OWN_MAPPING_FROM)


class StartupError(RuntimeError):
    """A setting that makes starting impossible; the message says which and why."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aistore-authn",
        description="AuthN service for AIStore: users, roles, clusters and JWT tokens "
        "(wire-compatible with AIS AuthN).",
        epilog=_ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        "-config",  # AIS AuthN's spelling (Go flags), so its command lines work unchanged
        metavar="DIR",
        help="config directory holding authn.json, authn.db and the key "
        "(a path to authn.json is accepted; default: ~/.config/ais/authn)",
    )
    p.add_argument("--host", default="0.0.0.0", help="address to bind (default: all, as AIS)")
    p.add_argument("--port", type=int, help=f"port; 0 picks a free one (default: {DEFAULT_PORT})")
    p.add_argument(
        "--external-url",
        metavar="URL",
        help="URL clusters and clients reach this service at: the tokens' `iss` and the base of "
        "/.well-known/openid-configuration (default: http[s]://localhost:PORT)",
    )
    p.add_argument("--https", action="store_true", default=None, help="serve HTTPS")
    p.add_argument("--cert", metavar="FILE", help="TLS certificate (PEM) for --https")
    p.add_argument("--key", metavar="FILE", help="TLS private key (PEM) for --https")
    p.add_argument(
        "--ttl", metavar="DURATION", help=f"default token lifetime (default: {DEFAULT_TTL})"
    )
    p.add_argument(
        "--max-token-age",
        metavar="DURATION",
        default=DEFAULT_MAX_TOKEN_AGE,
        help="longest lifetime a login may request; also what expires_in=0 gets "
        f"(default: {DEFAULT_MAX_TOKEN_AGE})",
    )
    p.add_argument(
        "--private-key-file", metavar="FILE", help=f"RSA private key (default: CONFIG/{KEY_FILE})"
    )
    p.add_argument(
        "--private-key-pass-file",
        metavar="FILE",
        help="file holding the private key's passphrase (instead of AIS_AUTHN_PRIVATE_KEY_PASS)",
    )
    p.add_argument("--rsa-key-bits", type=int, help="size of generated RSA keys (default: 2048)")
    p.add_argument(
        "--secret-key-file",
        metavar="FILE",
        help="file holding an HMAC secret: sign HS256 (instead of AIS_AUTHN_SECRET_KEY)",
    )
    p.add_argument(
        "--cluster-ca", metavar="FILE", help="CA bundle for HTTPS calls to registered clusters"
    )
    p.add_argument(
        "--cluster-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="bound of each call to a cluster (default: 5)",
    )
    p.add_argument(
        "--read-timeout",
        metavar="DURATION",
        default=DEFAULT_READ_TIMEOUT,
        help="a request (TLS handshake, head and body) must arrive within this, however slowly "
        f"it trickles, or its connection is dropped (default: {DEFAULT_READ_TIMEOUT})",
    )
    p.add_argument(
        "--login-lockout",
        metavar="DURATION",
        default=DEFAULT_LOGIN_LOCKOUT,
        help="how long a user name or client address is refused logins after too many failed "
        f"ones; doubles with each further failure (default: {DEFAULT_LOGIN_LOCKOUT})",
    )
    p.add_argument("--version", action="version", version=f"aistore-authn {__version__}")
    p.add_argument(
        "--log-level",
        help="debug, info, warning or error; AIS numbers 3-5 mean info/debug (default: info)",
    )
    return p


def _read_secret(path: str, what: str) -> str:
    try:
        return Path(path).read_text().strip("\r\n")
    except OSError as e:
        raise StartupError(f"cannot read {what} from {path}: {e.strerror}") from None


def _conf_dir(arg: str | None) -> Path:
    raw = arg or os.environ.get("AIS_AUTHN_CONF_DIR") or "~/.config/ais/authn"
    path = Path(raw).expanduser()
    if path.name == CONF_FILE or path.is_file():
        path = path.parent
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _conf_file(conf_dir: Path) -> dict[str, Any]:
    path = conf_dir / CONF_FILE
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise StartupError(f"cannot read {path}: {e}") from None
    if not isinstance(doc, dict):
        raise StartupError(f"{path}: expected a JSON object")
    return doc


def _dig(doc: dict[str, Any], *keys: str) -> Any:
    """The value at `keys` in authn.json (None when absent)."""
    value: Any = doc
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _dig_str(doc: dict[str, Any], *keys: str) -> str | None:
    """A string setting of authn.json; another type there is a startup error."""
    value = _dig(doc, *keys)
    if value is not None and not isinstance(value, str):
        raise StartupError(f"{CONF_FILE}: {'.'.join(keys)} must be a string, not {value!r}")
    return value


def _first(*values: Any) -> Any:
    return next((v for v in values if v not in (None, "")), None)


def _int(value: Any, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise StartupError(f"{what}: expected an integer, got {value!r}") from None


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "t", "true", "y", "yes", "on")


def _duration(text: Any, what: str) -> float:
    if not isinstance(text, str):
        raise StartupError(f"{what}: expected a duration such as 24h, got {text!r}")
    try:
        return parse_duration(text)
    except ValueError as e:
        raise StartupError(f"{what}: {e}") from None


def _log_level(raw: str | None) -> int:
    levels = {"3": logging.INFO, "4": logging.DEBUG, "5": logging.DEBUG}
    name = (raw or "info").strip()
    level = levels.get(name) or logging.getLevelName(name.upper())
    if not isinstance(level, int):
        raise StartupError(f"invalid log level {name!r}")
    return level


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _signer(args: argparse.Namespace, conf: dict[str, Any], conf_dir: Path, store: Store) -> Signer:
    secret = (
        _read_secret(args.secret_key_file, "the HMAC secret")
        if args.secret_key_file
        else _first(os.environ.get("AIS_AUTHN_SECRET_KEY"), _dig_str(conf, "auth", "secret"))
    )
    if secret:
        if len(secret.encode()) < 32:
            logger.warning(
                "the HMAC secret has %d bytes: RFC 7518 asks for at least 32 for HS256",
                len(secret.encode()),
            )
        return HMACSigner(secret)
    passphrase = (
        _read_secret(args.private_key_pass_file, "the private key passphrase")
        if args.private_key_pass_file
        else os.environ.get("AIS_AUTHN_PRIVATE_KEY_PASS", "")
    )
    if len(passphrase) < MIN_PASSPHRASE:
        raise StartupError(
            "RSA signing keeps its private key encrypted: set AIS_AUTHN_PRIVATE_KEY_PASS or "
            f"--private-key-pass-file to a passphrase of at least {MIN_PASSPHRASE} characters "
            "(or sign HS256 with AIS_AUTHN_SECRET_KEY)"
        )
    key_file = Path(
        _first(args.private_key_file, os.environ.get("AIS_AUTHN_PRIVATE_KEY_FILE"))
        or conf_dir / KEY_FILE
    ).expanduser()
    bits = _int(_first(args.rsa_key_bits, _dig(conf, "auth", "rsa_key_bits"), 2048), "RSA key bits")
    if bits < 2048:
        raise StartupError(f"RSA keys must have at least 2048 bits, not {bits}")
    try:
        return RSAKeyring.open(store, key_file, passphrase.encode(), bits)
    except KeyFileError as e:
        raise StartupError(str(e)) from None


def _build(args: argparse.Namespace) -> tuple[AuthNServer, AuthNService]:
    conf_dir = _conf_dir(args.config)
    conf = _conf_file(conf_dir)
    port = _int(
        _first(
            args.port,
            os.environ.get("AIS_AUTHN_PORT"),
            _dig(conf, "net", "http", "port"),
            DEFAULT_PORT,
        ),
        "port",
    )
    if not 0 <= port <= 65535:
        raise StartupError(f"port {port} is out of range (0-65535; 0 picks a free one)")
    if not args.cluster_timeout > 0:
        raise StartupError(f"--cluster-timeout must be positive, not {args.cluster_timeout}")
    use_https = _truthy(
        _first(
            args.https,
            os.environ.get("AIS_AUTHN_USE_HTTPS"),
            _dig(conf, "net", "http", "use_https"),
            False,
        )
    )
    cert = _first(
        args.cert, os.environ.get("AIS_SERVER_CRT"), _dig_str(conf, "net", "http", "server_crt")
    )
    key = _first(
        args.key, os.environ.get("AIS_SERVER_KEY"), _dig_str(conf, "net", "http", "server_key")
    )
    tls = None
    if use_https:
        if not cert or not key:
            raise StartupError("--https needs --cert and --key (or AIS_SERVER_CRT, AIS_SERVER_KEY)")
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            tls.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as e:
            raise StartupError(f"cannot load TLS certificate {cert} / key {key}: {e}") from None
    ttl = _duration(
        _first(
            args.ttl,
            os.environ.get("AIS_AUTHN_TTL"),
            _dig(conf, "auth", "expiration_time"),
            DEFAULT_TTL,
        ),
        "token lifetime",
    )
    max_age = _duration(args.max_token_age, "--max-token-age")
    if ttl == 0:
        ttl = max_age  # AIS: a zero default lifetime means "as long as allowed"
    read_timeout = _duration(args.read_timeout, "--read-timeout")
    if not read_timeout > 0:
        raise StartupError(f"--read-timeout must be positive, not {args.read_timeout}")
    lockout = _duration(args.login_lockout, "--login-lockout")
    if not lockout > 0:
        raise StartupError(f"--login-lockout must be positive, not {args.login_lockout}")

    store = Store(conf_dir / DB_FILE)
    signer = _signer(args, conf, conf_dir, store)
    client = ClusterClient(timeout=args.cluster_timeout, verify=args.cluster_ca or True)
    external = _first(
        args.external_url,
        os.environ.get("AIS_AUTHN_EXTERNAL_URL"),
        _dig_str(conf, "net", "external_url"),
    )
    settings = ServiceSettings(
        issuer=external or "",  # set below once the port is bound
        ttl=ttl,
        max_token_age=max_age,
        su_name=os.environ.get("AIS_AUTHN_SU_NAME") or "admin",
        config={},
        login_lockout=lockout,
    )
    service = AuthNService(store, signer, settings, client)
    try:
        if service.init_db(os.environ.get("AIS_AUTHN_SU_PASS")):
            logger.info("new database: created role Admin and user %s", settings.su_name)
    except ServiceError as e:
        raise StartupError(e.message) from None
    # Last of what may refuse to start: the server's worker threads run from here on.
    try:
        server = AuthNServer((args.host, port), service, tls, read_timeout)
    except OSError as e:
        service.pusher.stop()
        raise StartupError(f"cannot listen on {args.host}:{port}: {e.strerror or e}") from None
    bound_port = server.server_address[1]
    scheme = "https" if tls else "http"
    if not external:
        settings.issuer = f"{scheme}://localhost:{bound_port}"
        logger.info(
            "no external URL set: issuing tokens as %s (set --external-url)", settings.issuer
        )
    settings.config = {
        "auth": {
            "secret": "**********" if isinstance(signer, HMACSigner) else "",
            "expiration_time": format_duration(ttl),
            "public_key": signer.public_pem(),
            "rsa_key_bits": signer.bits if isinstance(signer, RSAKeyring) else 0,
        },
        "log": {"dir": "", "level": str(args.log_level or "3"), "flush_interval": "30s"},
        "net": {
            "external_url": settings.issuer,
            "http": {
                "server_crt": cert or "",
                "server_key": key or "",
                "port": bound_port,
                "use_https": bool(tls),
            },
        },
        "timeout": {"default_timeout": format_duration(args.cluster_timeout)},
    }

    where = f"{scheme}://{args.host}:{bound_port}"
    if isinstance(signer, RSAKeyring):
        signing = f"RS256, key {signer.kid} in {signer.path} (encrypted)"
    else:
        signing = "HS256 (AIS_AUTHN_SECRET_KEY)"
    logger.info(
        "aistore-authn serving %s: issuer %s, signing %s, database %s",
        where,
        settings.issuer,
        signing,
        store.path,
    )
    if tls is None and not _is_loopback(args.host):
        logger.warning(
            "plain HTTP on a non-loopback address (%s): passwords and tokens cross the network "
            "in clear; serve --https with --cert/--key, or bind --host 127.0.0.1",
            args.host,
        )
    return server, service


def main(argv: Sequence[str] | None = None) -> None:
    """Run the service until SIGINT or SIGTERM."""
    args = _parser().parse_args(argv)
    os.umask(0o077)  # before any file is made (the database, its WAL, the key, temp files)
    _return_large_frees()
    try:
        level = _log_level(_first(args.log_level, os.environ.get("AIS_AUTHN_LOG_LEVEL")))
    except StartupError as e:
        sys.exit(f"aistore-authn: error: {e}")
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    try:
        server, service = _build(args)
    except (StartupError, OSError) as e:
        sys.exit(f"aistore-authn: error: {e}")
    except sqlite3.Error as e:
        sys.exit(f"aistore-authn: error: cannot use the database in the config directory: {e}")

    def stop(signum: int, _frame: Any) -> None:
        logger.info("%s: shutting down", signal.Signals(signum).name)
        # Not on this (the serving) thread: stop() waits for the accept loop to end.
        threading.Thread(target=server.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    service.push_all_revoked()
    try:
        server.serve()
    finally:
        server.stop()
        service.pusher.stop()
        service.store.close()
        logger.info("stopped")


if __name__ == "__main__":
    main()
