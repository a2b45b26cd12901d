"""PostgreSQL's advisory locks: application-defined locks on numbers, shared by a database's
sessions (migration tools take one before migrating).

A lock is held at session level (reentrant: as many unlocks as locks) or until the
transaction ends (``pg_advisory_xact_lock``).  A waiter sleeps on the database's condition
in short slices, so it holds nothing another session needs, notices a cancel request or
``statement_timeout`` and gives up after ``lock_timeout`` with 55P03.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from storage.errors import LockNotAvailable, QueryCanceled

Key = tuple[int, ...]
"""One bigint, or two ints (a separate key space, as in PostgreSQL)."""

_WAIT_SLICE_S = 0.05


class AdvisoryLocks:
    """The database's advisory locks: each key's holder and how many times it holds it."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._holders: dict[Key, tuple[object, int]] = {}

    def acquire(
        self,
        owner: object,
        key: Key,
        *,
        wait: bool,
        is_cancelled: Callable[[], bool] = lambda: False,
        timeout_ms: int = 0,
    ) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms > 0 else None
        with self._changed:
            while True:
                holder = self._holders.get(key)
                if holder is None or holder[0] is owner:
                    count = holder[1] if holder is not None else 0
                    self._holders[key] = (owner, count + 1)
                    return True
                if not wait:
                    return False
                if is_cancelled():
                    raise QueryCanceled("canceling statement due to user request")
                if deadline is not None and time.monotonic() >= deadline:
                    raise LockNotAvailable("canceling statement due to lock timeout")
                self._changed.wait(_WAIT_SLICE_S)

    def release(self, owner: object, key: Key, times: int = 1) -> bool:
        """Give back ``times`` holds of ``key``; False when ``owner`` holds it fewer times."""
        with self._changed:
            holder = self._holders.get(key)
            if holder is None or holder[0] is not owner or holder[1] < times:
                return False
            if holder[1] == times:
                del self._holders[key]
                self._changed.notify_all()
            else:
                self._holders[key] = (owner, holder[1] - times)
            return True

    def holds(self, owner: object, key: Key) -> int:
        """How many times ``owner`` holds ``key``."""
        with self._changed:
            holder = self._holders.get(key)
        return holder[1] if holder is not None and holder[0] is owner else 0

    def held_by(self, owner: object) -> list[Key]:
        with self._changed:
            return [key for key, (holder, _) in self._holders.items() if holder is owner]


class SessionAdvisoryLocks:
    """One session's advisory locks: those it holds for the session and for its transaction."""

    def __init__(
        self,
        locks: AdvisoryLocks,
        is_cancelled: Callable[[], bool],
        lock_timeout_ms: Callable[[], int],
    ) -> None:
        self._locks = locks
        self._is_cancelled = is_cancelled
        self._lock_timeout_ms = lock_timeout_ms
        self._owner = object()
        self._xact: dict[Key, int] = {}

    def lock(self, key: Key, *, transaction: bool, wait: bool) -> bool:
        got = self._locks.acquire(
            self._owner,
            key,
            wait=wait,
            is_cancelled=self._is_cancelled,
            timeout_ms=self._lock_timeout_ms(),
        )
        if got and transaction:
            self._xact[key] = self._xact.get(key, 0) + 1
        return got

    def unlock(self, key: Key) -> bool:
        """pg_advisory_unlock: one session-level hold (a transaction's holds stay)."""
        if self._session_holds(key) <= 0:
            return False
        return self._locks.release(self._owner, key)

    def _session_holds(self, key: Key) -> int:
        return self._locks.holds(self._owner, key) - self._xact.get(key, 0)

    def unlock_all(self) -> None:
        """pg_advisory_unlock_all (and disconnect): every session-level hold."""
        for key in self._locks.held_by(self._owner):
            holds = self._session_holds(key)
            if holds > 0:
                self._locks.release(self._owner, key, holds)

    def end_transaction(self) -> None:
        """Release what ``pg_advisory_xact_lock`` took in the transaction that ended."""
        if not self._xact:
            return
        xact, self._xact = self._xact, {}
        for key, times in xact.items():
            self._locks.release(self._owner, key, times)

    def close(self) -> None:
        self.end_transaction()
        self.unlock_all()
