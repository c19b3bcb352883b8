"""The AuthN REST documents, decoded with type checks and encoded as AIS AuthN encodes them.

Every request body is decoded by `decode` into one of these structs: a wrong type or a malformed
document is a `WireError` naming the field, which the server answers with 400. Permission bits
travel as decimal strings (Go's `json:"perm,string"`), checked here to fit in 64 bits.

Example:
    >>> decode(b'{"password": "pw", "expires_in": null}', LoginMsg).password
    'pw'
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

__all__ = [
    "ACCESS_ALL",
    "ACCESS_RO",
    "ACCESS_RW",
    "BckACL",
    "Bucket",
    "CluACL",
    "ConfigToUpdate",
    "LoginMsg",
    "Namespace",
    "Role",
    "TokenMsg",
    "User",
    "WireError",
    "decode",
    "encode",
    "parse_duration",
    "parse_perm",
]

# `apc.AccessAttrs` combinations the built-in roles grant (the bits are spec §6).
ACCESS_RO = 771  # GET, HEAD-OBJECT, HEAD-BUCKET, LIST-OBJECTS
ACCESS_RW = 831  # ro + PUT, APPEND, DELETE-OBJECT, MOVE-OBJECT
ACCESS_ALL = (1 << 64) - 1  # `apc.AccessAll`: every bit of the uint64

T = TypeVar("T")


class WireError(ValueError):
    """A request body that does not decode into the expected document (a 400)."""


class Namespace(msgspec.Struct, omit_defaults=False):
    """A bucket namespace: the UUID of the cluster that owns the bucket, and a name."""

    uuid: str = ""
    name: str = ""


class Bucket(msgspec.Struct):
    """A bucket as ACLs name it (`cmn.Bck` without its properties)."""

    name: str
    provider: str = "ais"
    namespace: Namespace | None = None


class BckACL(msgspec.Struct):
    """Permissions on one bucket; `perm` is the bits as a decimal string."""

    bck: Bucket
    perm: str = "0"


class CluACL(msgspec.Struct, omit_defaults=True):
    """A cluster: in a role, the permissions on it; registered, its alias and URLs."""

    id: str = ""
    alias: str = ""
    perm: str = ""
    urls: list[str] = []


class Role(msgspec.Struct):
    """A role: named permissions on clusters and buckets; `admin` only for the built-in Admin."""

    name: str = ""
    desc: str = ""
    clusters: list[CluACL] | None = None
    buckets: list[BckACL] | None = None
    admin: bool = False


class User(msgspec.Struct):
    """A user as clients send it: id, clear password (`pass`) and roles (by name or in full)."""

    id: str = ""
    password: str = msgspec.field(default="", name="pass")
    roles: list[Role] | None = None


class LoginMsg(msgspec.Struct):
    """A login: the password and the token lifetime in nanoseconds (None: the default)."""

    password: str = ""
    expires_in: int | None = None
    cluster_id: str = ""


class TokenMsg(msgspec.Struct):
    """One token, as login returns it and `DELETE /v1/tokens` takes it."""

    token: str = ""


class ServerConfToSet(msgspec.Struct):
    """The settable part of the `auth` config section."""

    secret: str | None = None
    expiration_time: str | None = None


class ConfigToUpdate(msgspec.Struct):
    """`PUT /v1/daemon`: the config sections to change."""

    auth: ServerConfToSet | None = None


def decode(body: bytes, kind: type[T]) -> T:
    """Decode a JSON request body into `kind`, checking every field's type.

    Raises:
        WireError: malformed JSON or a field of the wrong type (the message names it).
    """
    if not body:
        raise WireError("empty request body (a JSON document is required)")
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as e:
        raise WireError(f"invalid {kind.__name__} document: {e}") from None
    except msgspec.DecodeError as e:
        raise WireError(f"malformed JSON: {e}") from None


def encode(value: Any) -> bytes:
    """JSON bytes of a document (structs, dicts, lists)."""
    return msgspec.json.encode(value)


def parse_perm(perm: str, where: str) -> int:
    """The permission bits a decimal string names.

    Raises:
        WireError: not a decimal number of at most 64 bits.
    """
    if not perm:
        return 0
    if not perm.isascii() or not perm.isdigit() or len(perm) > 20 or int(perm) > ACCESS_ALL:
        raise WireError(f"{where}: permissions must be a decimal uint64 string, got {perm!r}")
    return int(perm)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string ("24h", "1h30m", "90s", "0").

    Example:
        >>> parse_duration("1h30m")
        5400.0

    Raises:
        ValueError: not a non-negative Go duration.
    """
    text = text.strip()
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if match is None:
            raise ValueError(f"invalid duration {text!r} (expected e.g. 24h, 30m, 1h30m)")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos == 0:
        raise ValueError(f"invalid duration {text!r} (expected e.g. 24h, 30m, 1h30m)")
    return total


def format_duration(seconds: float) -> str:
    """A Go-style duration string of whole seconds ("24h0m0s").

    Example:
        >>> format_duration(5400)
        '1h30m0s'
    """
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return (
        f"{hours}h{minutes}m{secs}s" if hours else f"{minutes}m{secs}s" if minutes else f"{secs}s"
    )
