"""Password hashes: scrypt (RFC 7914) with a per-user salt, checked in constant time.

A stored hash is one self-describing string, `scrypt$<n>$<r>$<p>$<salt>$<digest>` (base64url),
so the cost can be raised later without invalidating the hashes already stored.

Memory is bounded: each scrypt call holds 128 * n * r bytes (16 MiB at the cost below), and at
most `MAX_HASHING` calls run at once, process-wide. A call that finds every slot taken waits up
to `HASH_WAIT_S`, then raises `HashingBusy` (the server answers 503): a burst of logins queues
briefly instead of costing 16 MiB each. (That the freed buffers go back to the OS, rather than
stay in the allocator's per-thread arenas, is `main`'s allocator setting.)

Example:
    >>> stored = hash_password("s3cret")
    >>> verify_password("s3cret", stored), verify_password("guess", stored)
    (True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading

__all__ = [
    "HASH_WAIT_S",
    "MAX_HASHING",
    "HashingBusy",
    "hash_password",
    "verify_password",
    "waste_time",
]

# Interactive-login cost (scrypt paper, 2^14): ~16 MiB and tens of milliseconds per check.
_N, _R, _P = 1 << 14, 8, 1
_SALT_BYTES = 16
_DIGEST_BYTES = 32
_MAXMEM = 64 * 1024 * 1024  # above 128 * n * r * p so OpenSSL accepts the cost

MAX_HASHING = 4  # scrypt calls at once: 4 x 16 MiB; enough to keep 4 cores busy
HASH_WAIT_S = 5.0  # how long a call waits for a slot before HashingBusy
_slots = threading.BoundedSemaphore(MAX_HASHING)


class HashingBusy(RuntimeError):
    """Every hashing slot stayed taken for `HASH_WAIT_S`: the caller should retry later."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    """The digest; every scrypt call of this module goes through here (and its slots).

    Raises:
        HashingBusy: no slot freed up within `HASH_WAIT_S`.
    """
    if not _slots.acquire(timeout=HASH_WAIT_S):
        raise HashingBusy(f"{MAX_HASHING} password checks in progress for {HASH_WAIT_S:.0f}s")
    try:
        return hashlib.scrypt(
            password.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM, dklen=_DIGEST_BYTES
        )
    finally:
        _slots.release()


def hash_password(password: str) -> str:
    """A new salted scrypt hash of `password`, in the stored format.

    Raises:
        HashingBusy: see the module docstring.
    """
    salt = secrets.token_bytes(_SALT_BYTES)
    digest = _scrypt(password, salt, _N, _R, _P)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches the stored hash (False for a malformed hash).

    Raises:
        HashingBusy: see the module docstring.
    """
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = _unb64(digest)
        actual = _scrypt(password, _unb64(salt), int(n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


_DUMMY = hash_password(secrets.token_urlsafe(16))


def waste_time(password: str) -> None:
    """Spend what a check costs, so a login for an unknown user takes as long as a wrong
    password and the answer time does not tell which user names exist."""
    verify_password(password, _DUMMY)
