"""Persistent state of the AuthN service: one SQLite file (`authn.db` in the config directory).

Tables hold JSON documents by key, as AIS AuthN's key-value store does, plus the revoked tokens
and the public half of every signing key still verifying tokens:

    users(id, doc)          doc = {"id", "pass": <scrypt hash>, "roles": [role names]}
    roles(name, doc)        doc = a `wire.Role`
    clusters(id, doc)       doc = a `wire.CluACL` with alias and URLs
    revoked(token, exp)     tokens revoked before their expiry (exp: seconds since the epoch)
    signing_keys(kid, public_pem, last_exp)
                            every RSA key that signed tokens; `last_exp` is the latest expiry
                            of a token it signed, so a retired key is served until then

Files: `authn.db` is created (or, made by an older version, narrowed) with mode 0600 before
SQLite opens it; SQLite creates `authn.db-wal` and `authn.db-shm` with the database's mode, so
none of the three ever exists readable by others (they hold password hashes and tokens).

Concurrency: one connection, used under `Store.lock` only. `transaction()` holds the lock for a
read-check-write sequence and commits it at once (or rolls it back on an exception), so two
requests never interleave inside one operation. Every commit is durable (`synchronous=FULL`).

Example:
    >>> store = Store(Path(tmp) / "authn.db")  # doctest: +SKIP
    >>> with store.transaction() as tx:  # doctest: +SKIP
    ...     tx.put("users", "alice", {"id": "alice"})
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["Store", "Tx"]

_MODE = 0o600  # password hashes and revoked tokens: owner only
_SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's, named after the database
_COLLECTIONS = ("users", "roles", "clusters")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roles (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clusters (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS revoked (token TEXT PRIMARY KEY, exp INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS signing_keys (
    kid TEXT PRIMARY KEY, public_pem TEXT NOT NULL, last_exp INTEGER NOT NULL
);
"""


def _restrict(path: Path) -> None:
    """Create the database file with `_MODE` (O_CREAT applies the mode at creation, never
    wider), or narrow an existing one and its side files before SQLite reuses them."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, _MODE)
    try:
        os.fchmod(fd, _MODE)  # an existing file keeps its old mode through O_CREAT
    finally:
        os.close(fd)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.chmod(_MODE)


class Tx:
    """Reads and writes inside one transaction; valid only within `Store.transaction()`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    @staticmethod
    def _table(collection: str) -> str:
        if collection not in _COLLECTIONS:  # table names cannot be bound parameters
            raise ValueError(f"unknown collection {collection!r}")
        return collection

    def get(self, collection: str, key: str) -> dict[str, Any] | None:
        """The document stored under `key`, or None."""
        row = self._conn.execute(
            f"SELECT doc FROM {self._table(collection)} WHERE id = ?", (key,)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def all(self, collection: str) -> dict[str, dict[str, Any]]:
        """Every document of the collection by key, in key order."""
        rows = self._conn.execute(f"SELECT id, doc FROM {self._table(collection)} ORDER BY id")
        return {key: dict(json.loads(doc)) for key, doc in rows}

    def put(self, collection: str, key: str, doc: dict[str, Any]) -> None:
        """Store (insert or replace) a document."""
        self._conn.execute(
            f"INSERT OR REPLACE INTO {self._table(collection)} (id, doc) VALUES (?, ?)",
            (key, json.dumps(doc, separators=(",", ":"))),
        )

    def delete(self, collection: str, key: str) -> bool:
        """Remove a document; whether it existed."""
        cur = self._conn.execute(f"DELETE FROM {self._table(collection)} WHERE id = ?", (key,))
        return cur.rowcount > 0

    def is_empty(self, collection: str) -> bool:
        """Whether the collection holds no document."""
        table = self._table(collection)
        return self._conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None

    # Revoked tokens

    def revoke(self, token: str, exp: int) -> None:
        """Add a token to the revoked set (kept until `exp`)."""
        self._conn.execute("INSERT OR REPLACE INTO revoked VALUES (?, ?)", (token, exp))

    def is_revoked(self, token: str) -> bool:
        """Whether the token was revoked."""
        row = self._conn.execute("SELECT 1 FROM revoked WHERE token = ?", (token,)).fetchone()
        return row is not None

    def revoked(self, now: int) -> list[str]:
        """The revoked tokens that have not expired yet; expired ones are dropped."""
        self._conn.execute("DELETE FROM revoked WHERE exp <= ?", (now,))
        return [row[0] for row in self._conn.execute("SELECT token FROM revoked ORDER BY exp")]

    # Signing keys (public halves)

    def add_key(self, kid: str, public_pem: str) -> None:
        """Record a signing key (no-op when known)."""
        self._conn.execute("INSERT OR IGNORE INTO signing_keys VALUES (?, ?, 0)", (kid, public_pem))

    def signed_until(self, kid: str, exp: int) -> bool:
        """Note that the key signed a token expiring at `exp`; False when the key is unknown."""
        cur = self._conn.execute(
            "UPDATE signing_keys SET last_exp = MAX(last_exp, ?) WHERE kid = ?", (exp, kid)
        )
        return cur.rowcount == 1

    def keys(self) -> list[tuple[str, str, int]]:
        """Every recorded key as (kid, public PEM, latest expiry of a token it signed)."""
        rows = self._conn.execute("SELECT kid, public_pem, last_exp FROM signing_keys")
        return [(kid, pem, int(last_exp)) for kid, pem, last_exp in rows]

    def drop_keys_expired(self, now: int, keep: str) -> None:
        """Forget every key but `keep` whose tokens have all expired."""
        self._conn.execute("DELETE FROM signing_keys WHERE kid != ? AND last_exp <= ?", (keep, now))


class Store:
    """The SQLite database; see the module docstring for the tables and the locking rule."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()  # guards _conn: every use goes through transaction()
        _restrict(path)
        # isolation_level=None: transactions are begun and ended explicitly in transaction().
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.executescript(_SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """Run a sequence of reads and writes atomically, serialized with all others."""
        with self.lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        with self.lock:
            self._conn.close()
