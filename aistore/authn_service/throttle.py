"""Failed-login throttling, per user name and per client address, in bounded memory.

Every failed login counts against its user name and against its client address. A name with
`LOGIN_FAILURES_PER_USER` failures, or an address with `LOGIN_FAILURES_PER_ADDRESS`, is locked
for the lockout (`LOGIN_LOCKOUT_S` unless configured): its logins are refused (`Throttled`, a 429
with `Retry-After`) without a password check, the right password too. Each failure after the
lockout doubles it, at most `LOGIN_LOCKOUT_DOUBLINGS` times. Refused attempts count for nothing
and extend nothing.

A success clears its name's count. An address's count is not cleared by a success (an attacker
holding one account could otherwise clear its address between guesses at others); it is
forgotten, as a name's is, after twice the longest lockout passes without a failure.

Attempts in progress count against the allowance until they end, so concurrent guesses cannot
overshoot it: an attempt beyond it waits (at most `ADMIT_WAIT_S`, then `Throttled` with
`locked=False`, a 503) for those in progress to succeed or fail. Legitimate bursts (many workers
logging in as one account) just queue, as they would for the hashing slots anyway.

Unknown names are tracked exactly as existing ones, so a 429 tells nothing about which names
exist. Memory: at most `LOGIN_TRACKED` names and as many addresses (names cut to
`_MAX_KEY` characters); the least recently used entry is forgotten first.

Trade-offs: locking a name also refuses its owner for the lockout (the price of refusing a
guesser who spreads over many addresses); behind a reverse proxy every client has the proxy's
address, so the address limit becomes one limit for all of them.

Example:
    >>> throttle = LoginThrottle(lockout=60)
    >>> throttle.begin("alice", "10.0.0.7")  # raises Throttled while locked
    >>> throttle.end("alice", "10.0.0.7", ok=False)
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "LOGIN_FAILURES_PER_ADDRESS",
    "LOGIN_FAILURES_PER_USER",
    "LOGIN_LOCKOUT_DOUBLINGS",
    "LOGIN_LOCKOUT_S",
    "LOGIN_TRACKED",
    "ADMIT_WAIT_S",
    "LoginThrottle",
    "Throttled",
]

LOGIN_FAILURES_PER_USER = 5
LOGIN_FAILURES_PER_ADDRESS = 50  # a NAT or a proxy puts many users behind one address
LOGIN_LOCKOUT_S = 60.0
LOGIN_LOCKOUT_DOUBLINGS = 4  # the longest lockout: 16 x the first
LOGIN_TRACKED = 10_000  # entries per table (~200 bytes each)
ADMIT_WAIT_S = 5.0  # how long an attempt beyond the allowance waits for those in progress
_MAX_KEY = 129  # user names have at most 128 characters: a longer one exists nowhere


class Throttled(Exception):
    """A login refused: `locked` for its name's or address's failures, else because the
    attempts in progress did not end in time; retry after `retry_after` seconds."""

    def __init__(self, retry_after: int, locked: bool = True) -> None:
        if locked:
            message = f"too many failed logins: retry in {retry_after}s"
        else:
            message = "too many logins in progress for this user or address: retry later"
        super().__init__(message)
        self.retry_after = retry_after
        self.locked = locked

    def __reduce__(self) -> tuple[type[Throttled], tuple[int, bool]]:
        return Throttled, (self.retry_after, self.locked)


@dataclass
class _Entry:
    failures: int = 0
    in_flight: int = 0  # attempts admitted by begin() and not ended yet
    last_failure: float = 0.0
    locked_until: float = 0.0


class _Table:
    """One LRU-capped map of key → entry, with its failure limit. Guarded by the throttle's
    lock."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.entries: OrderedDict[str, _Entry] = OrderedDict()

    def get(self, key: str, now: float, forget_after: float) -> _Entry | None:
        entry = self.entries.get(key)
        if entry is not None and entry.in_flight == 0 and now - entry.last_failure > forget_after:
            del self.entries[key]  # quiet for long: starts over
            return None
        return entry

    def add(self, key: str) -> _Entry:
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= LOGIN_TRACKED:
                self.entries.popitem(last=False)
            entry = self.entries[key] = _Entry()
        self.entries.move_to_end(key)
        return entry


class LoginThrottle:
    """See the module docstring. Thread-safe; `begin` and `end` pair up around one attempt.

    Args:
        lockout: the first lockout, seconds.
        clock: monotonic seconds (a test may pass its own).
    """

    def __init__(
        self,
        lockout: float = LOGIN_LOCKOUT_S,
        clock: Callable[[], float] = time.monotonic,
        admit_wait: float = ADMIT_WAIT_S,
    ) -> None:
        self.lockout = lockout
        self._clock = clock
        self._admit_wait = admit_wait
        self._cond = threading.Condition()  # guards both tables; notified when an attempt ends
        self._users = _Table(LOGIN_FAILURES_PER_USER)
        self._addresses = _Table(LOGIN_FAILURES_PER_ADDRESS)

    def _keys(self, user: str, address: str) -> list[tuple[_Table, str]]:
        keys = [(self._users, user[:_MAX_KEY])]
        if address:
            keys.append((self._addresses, address))
        return keys

    def tracked(self) -> tuple[int, int]:
        """How many names and addresses are tracked now (each at most `LOGIN_TRACKED`)."""
        with self._cond:
            return len(self._users.entries), len(self._addresses.entries)

    def begin(self, user: str, address: str) -> None:
        """Admit one login attempt; `end` must follow it (try/finally).

        Raises:
            Throttled: the name or the address is locked (`locked`), or the attempts in
                progress left no room within `ADMIT_WAIT_S`.
        """
        forget_after = 2 * self.lockout * 2**LOGIN_LOCKOUT_DOUBLINGS  # then a lockout is over
        keys = self._keys(user, address)
        with self._cond:
            give_up = self._clock() + self._admit_wait
            while True:
                now = self._clock()
                locked = 0.0
                full = False
                for table, key in keys:
                    entry = table.get(key, now, forget_after)
                    if entry is None:
                        continue
                    locked = max(locked, entry.locked_until - now)
                    # As many attempts in flight as failures still allowed (one, past a
                    # lockout): whatever they turn out to be, the limit holds.
                    full = full or entry.in_flight >= max(table.limit - entry.failures, 1)
                if locked > 0:
                    raise Throttled(math.ceil(locked))
                if not full:
                    break
                if now >= give_up:
                    raise Throttled(1, locked=False)
                self._cond.wait(give_up - now)
            for table, key in keys:
                table.add(key).in_flight += 1

    def end(self, user: str, address: str, ok: bool | None) -> None:
        """End an attempt `begin` admitted: True a success, False a failure, None neither
        (it was refused for another reason, e.g. the server was busy)."""
        with self._cond:
            self._cond.notify_all()
            now = self._clock()
            for table, key in self._keys(user, address):
                entry = table.entries.get(key)
                if entry is None:  # forgotten meanwhile (the table was full)
                    continue
                entry.in_flight -= 1
                if ok is False:
                    entry.failures += 1
                    entry.last_failure = now
                    over = entry.failures - table.limit
                    if over >= 0:
                        doubling = min(over, LOGIN_LOCKOUT_DOUBLINGS)
                        entry.locked_until = now + self.lockout * 2**doubling
                elif ok and table is self._users:
                    entry.failures, entry.locked_until = 0, 0.0
                if entry.in_flight == 0 and entry.failures == 0:
                    del table.entries[key]
