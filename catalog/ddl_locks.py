"""DdlLocks: relation names that a transaction's uncommitted DDL holds until it ends.

PostgreSQL's DDL takes an ACCESS EXCLUSIVE lock on the relation, held to the
end of the transaction: a second transaction's DDL on it waits, and so does
any statement that reads or writes it.  nyala keeps one such lock per
relation name.  A waiter gives up on ``lock_timeout`` (55P03), on a cancel or
``statement_timeout`` (its ``check`` raises), and when waiting would close a
cycle of waiters (40P01); waiting holds no lock of the waiter's own beyond
those its transaction already held.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from storage.errors import DeadlockDetected, LockNotAvailable

_WAIT_SLICE_S = 0.05


@dataclass(frozen=True, slots=True)
class LockWait:
    """How a transaction waits: ``check`` raises on cancel; ``timeout_ms`` 0 waits forever."""

    check: Callable[[], None]
    timeout_ms: Callable[[], int]


class DdlLocks:
    """Which transaction (any hashable owner) holds each relation name."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holders: dict[str, object] = {}
        self._waiting: dict[object, object] = {}

    @property
    def held(self) -> bool:
        return bool(self._holders)

    def holder(self, name: str) -> object | None:
        return self._holders.get(name)

    def acquire(self, owner: object, names: Iterable[str], wait: LockWait) -> list[str]:
        """Take every name for ``owner``, waiting for other holders; the names newly taken."""
        taken = []
        for name in names:
            if self._acquire_one(owner, name, wait):
                taken.append(name)
        return taken

    def _acquire_one(self, owner: object, name: str, wait: LockWait) -> bool:
        timeout_ms = wait.timeout_ms()
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        with self._cond:
            while True:
                holder = self._holders.get(name)
                if holder is None:
                    self._holders[name] = owner
                    return True
                if holder is owner:
                    return False
                self._check_deadlock(owner, holder, name)
                self._waiting[owner] = holder
                try:
                    self._cond.wait(_WAIT_SLICE_S)
                finally:
                    self._waiting.pop(owner, None)
                wait.check()
                if deadline is not None and time.monotonic() >= deadline:
                    raise LockNotAvailable("canceling statement due to lock timeout")

    def wait_until_free(self, owner: object, names: Iterable[str], wait: LockWait) -> None:
        """Wait while another transaction holds any of ``names`` (a statement reading them)."""
        for name in names:
            if self._holders.get(name) not in (None, owner):
                self._acquire_one(owner, name, wait)
                self.release(owner, [name])

    def _check_deadlock(self, owner: object, holder: object, name: str) -> None:
        current: object | None = holder
        seen = set()
        while current is not None and id(current) not in seen:
            if current is owner:
                raise DeadlockDetected(
                    "deadlock detected",
                    detail=f'Waiting for relation "{name}" would close a cycle of transactions '
                    "waiting for each other's DDL.",
                )
            seen.add(id(current))
            current = self._waiting.get(current)

    def release(self, owner: object, names: Iterable[str]) -> None:
        with self._cond:
            for name in names:
                if self._holders.get(name) is owner:
                    del self._holders[name]
            self._cond.notify_all()
