"""Token signing keys: an RSA keyring with rotation (RS256, the default) or an HMAC secret (HS256).

RSA invariants:
- The private key lives in one PEM file (PKCS#8), encrypted with the passphrase
  (`BestAvailableEncryption`), written with mode 0600 by an atomic rename: a crash leaves the
  old file or the new one, never a torn one.
- Every key that ever signed is recorded, public half only, in the store with the latest expiry
  of a token it signed (`signed_until` runs before the token is handed out). After a rotation
  the old key stays in the JWKS, and keeps verifying its tokens, until that expiry; then it is
  dropped. The `kid` is the key's RFC 7638 thumbprint, so it names the key on every restart.
- `_state` is replaced whole (never mutated), so readers take one consistent snapshot without a
  lock; `_rotate_lock` serializes rotations, and recording a token's expiry with them.

Example:
    >>> ring = RSAKeyring.open(store, Path("authn_key.pem"), b"passphrase", 2048)  # doctest: +SKIP
    >>> token = ring.sign({"sub": "alice", "exp": 1790000000})  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from aistore.authn_service.store import Store

__all__ = ["HMACSigner", "KeyFileError", "RSAKeyring", "Signer", "thumbprint"]

# Claims every token AuthN accepts for its own API must carry (the AIS parser requires exp, sub).
_REQUIRED = ["exp", "iat", "sub"]


class KeyFileError(RuntimeError):
    """The private key file cannot be used (wrong or missing passphrase, not a key)."""


class Signer(Protocol):
    """What the service needs from a signing method."""

    alg: str

    def sign(self, claims: dict[str, Any]) -> str:
        """A signed token carrying `claims` (which must hold `exp`)."""
        ...

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of a token this service signed; raises `jwt.InvalidTokenError`."""
        ...

    def jwks(self) -> dict[str, Any] | None:
        """The public keys that verify live tokens (None: not an asymmetric method)."""
        ...

    def public_pem(self) -> str | None:
        """The current public key in PEM (None: not an asymmetric method)."""
        ...

    def rotate(self) -> str:
        """Sign with a new key from now on; its kid. Raises `ValueError` when unsupported."""
        ...

    def validation_conf(self) -> dict[str, Any]:
        """What a cluster checks at registration (`authn.ServerConf` as AIS sends it)."""
        ...


def _decode(token: str, key: Any, alg: str) -> dict[str, Any]:
    claims = jwt.decode(
        token,
        key,
        algorithms=[alg],
        # AuthN checks its own tokens whatever their audience (the clusters check `aud`).
        options={"require": _REQUIRED, "verify_aud": False},
    )
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise jwt.InvalidTokenError("missing 'sub' claim")
    return dict(claims)


class HMACSigner:
    """HS256 with a shared secret (`AIS_AUTHN_SECRET_KEY`); clusters verify with the same one."""

    alg = "HS256"

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self._secret, algorithm=self.alg)

    def verify(self, token: str) -> dict[str, Any]:
        return _decode(token, self._secret, self.alg)

    def jwks(self) -> dict[str, Any] | None:
        return None

    def public_pem(self) -> str | None:
        return None

    def rotate(self) -> str:
        raise ValueError("rotation not supported for current signing method (HS256)")

    def validation_conf(self) -> dict[str, Any]:
        digest = hashlib.sha256(self._secret).hexdigest()
        return {"secret": digest, "expiration_time": "0s", "public_key": None, "rsa_key_bits": 0}


def thumbprint(public_key: rsa.RSAPublicKey) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url): the key's `kid`."""
    jwk = RSAAlgorithm.to_jwk(public_key, as_dict=True)
    canonical = json.dumps(
        {"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}, separators=(",", ":"), sort_keys=True
    )
    digest = hashlib.sha256(canonical.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _public_pem(public_key: rsa.RSAPublicKey) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


@dataclass(frozen=True)
class _KeyState:
    """One consistent view: the signing key and the retired keys still verifying tokens."""

    private: rsa.RSAPrivateKey
    kid: str
    pem: str
    retired: dict[str, tuple[rsa.RSAPublicKey, int]] = field(default_factory=dict)


class RSAKeyring:
    """RS256 signing with a rotating RSA key; see the module docstring for the invariants."""

    alg = "RS256"

    def __init__(self, store: Store, path: Path, passphrase: bytes, bits: int) -> None:
        self._store = store
        self._path = path
        self._passphrase = passphrase
        self._bits = bits
        self._rotate_lock = threading.Lock()
        self._state = self._load_or_create()

    @classmethod
    def open(cls, store: Store, path: Path, passphrase: bytes, bits: int) -> RSAKeyring:
        """Load the key file (or create it on first start) and the retired keys.

        Raises:
            KeyFileError: the file exists but the passphrase does not open it.
        """
        return cls(store, path, passphrase, bits)

    @property
    def path(self) -> Path:
        """The encrypted private key file."""
        return self._path

    @property
    def bits(self) -> int:
        """The size of generated keys."""
        return self._bits

    @property
    def kid(self) -> str:
        """The kid of the key signing new tokens."""
        return self._state.kid

    def _load_or_create(self) -> _KeyState:
        if self._path.exists():
            private = self._read_key()
        else:
            private = rsa.generate_private_key(public_exponent=65537, key_size=self._bits)
            self._write_key(private)
        return self._record(private)

    def _read_key(self) -> rsa.RSAPrivateKey:
        data = self._path.read_bytes()
        try:
            key = serialization.load_pem_private_key(data, password=self._passphrase)
        except TypeError as e:  # an unencrypted file: refused, the key must be encrypted at rest
            raise KeyFileError(f"private key file {self._path} is not encrypted: {e}") from None
        except ValueError:
            raise KeyFileError(
                f"cannot decrypt private key file {self._path}: wrong passphrase or not a PEM key"
            ) from None
        if not isinstance(key, rsa.RSAPrivateKey):
            raise KeyFileError(f"{self._path} holds a {type(key).__name__}, not an RSA key")
        return key

    def _write_key(self, private: rsa.RSAPrivateKey) -> None:
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(self._passphrase),
        )
        tmp = self._path.with_name(self._path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)  # the commit point
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        dir_fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def _record(self, private: rsa.RSAPrivateKey) -> _KeyState:
        """Record the signing key in the store and load the retired keys still in use."""
        public = private.public_key()
        kid, pem = thumbprint(public), _public_pem(public)
        now = int(time.time())
        with self._store.transaction() as tx:
            tx.add_key(kid, pem)
            tx.drop_keys_expired(now, keep=kid)
            rows = tx.keys()
        retired: dict[str, tuple[rsa.RSAPublicKey, int]] = {}
        for other, other_pem, last_exp in rows:
            if other != kid:
                key = serialization.load_pem_public_key(other_pem.encode())
                assert isinstance(key, rsa.RSAPublicKey)
                retired[other] = (key, last_exp)
        return _KeyState(private, kid, pem, retired)

    def sign(self, claims: dict[str, Any]) -> str:
        # Recorded first: a token must never outlive the record that keeps its key served. Under
        # the rotation lock, so a rotation cannot drop the key's record (its tokens all expired
        # so far) between our reading the key and recording this token's expiry.
        with self._rotate_lock:
            state = self._state
            with self._store.transaction() as tx:
                if not tx.signed_until(state.kid, int(claims["exp"])):
                    raise RuntimeError(f"signing key {state.kid} is not recorded in the store")
        return jwt.encode(claims, state.private, algorithm=self.alg, headers={"kid": state.kid})

    def _public_key(self, kid: str) -> rsa.RSAPublicKey | None:
        state = self._state
        if kid == state.kid:
            return state.private.public_key()
        entry = state.retired.get(kid)
        if entry is None or entry[1] <= time.time():
            return None
        return entry[0]

    def verify(self, token: str) -> dict[str, Any]:
        header = jwt.get_unverified_header(token)
        kid = header.get("kid")
        if not isinstance(kid, str):
            raise jwt.InvalidTokenError("header 'kid' missing")
        key = self._public_key(kid)
        if key is None:
            raise jwt.InvalidTokenError(f"unknown signing key {kid[:64]!r}")
        return _decode(token, key, self.alg)

    def jwks(self) -> dict[str, Any]:
        state, now = self._state, time.time()
        keys = [(state.kid, state.private.public_key())]
        keys += [(kid, key) for kid, (key, last_exp) in state.retired.items() if last_exp > now]
        out = []
        for kid, key in keys:
            jwk = RSAAlgorithm.to_jwk(key, as_dict=True)
            # `use` only: RFC 7517 §4.3 advises against `key_ops` beside it.
            out.append(
                {
                    "kty": "RSA",
                    "n": jwk["n"],
                    "e": jwk["e"],
                    "kid": kid,
                    "alg": self.alg,
                    "use": "sig",
                }
            )
        return {"keys": out}

    def public_pem(self) -> str:
        return self._state.pem

    def rotate(self) -> str:
        with self._rotate_lock:
            private = rsa.generate_private_key(public_exponent=65537, key_size=self._bits)
            self._write_key(private)
            self._state = self._record(private)
            return self._state.kid

    def validation_conf(self) -> dict[str, Any]:
        pem = self._state.pem
        return {"secret": "", "expiration_time": "0s", "public_key": pem, "rsa_key_bits": 0}
