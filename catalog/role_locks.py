"""RoleNameLocks: role names a transaction's uncommitted CREATE, ALTER or DROP ROLE holds.

PostgreSQL's CREATE ROLE inserts into pg_authid under a unique index on the name, so a
second transaction creating the same name waits for the first (open or prepared) to end,
then fails with 23505 (the unique index's error) if it committed; ALTER and DROP ROLE wait on the role's row.  nyala
keeps one lock per role name, taken by the statement before it reads the roles, held by
the transaction to its end and across PREPARE TRANSACTION (passed to the prepared
transaction's name) until COMMIT or ROLLBACK PREPARED.  So a conflict surfaces at the
second statement, as there, and COMMIT PREPARED never meets one.  A waiter gives up on
``lock_timeout`` (55P03), on a cancel or ``statement_timeout`` (its ``check`` raises), and
when waiting would close a cycle of waiters (40P01).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from catalog.ddl_locks import LockWait
from storage.errors import DeadlockDetected, LockNotAvailable

_WAIT_SLICE_S = 0.05


class RoleNameLocks:
    """Which transaction (any hashable owner, or a prepared transaction's GID) holds each
    role name."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holders: dict[str, object] = {}
        self._waiting: dict[object, object] = {}

    def holder(self, name: str) -> object | None:
        return self._holders.get(name)

    def is_waiting(self, owner: object) -> bool:
        return owner in self._waiting

    def acquire(self, owner: object, names: Iterable[str], wait: LockWait) -> set[str]:
        """Take each name for ``owner``, waiting while another transaction holds it; the
        names it had to wait for."""
        timeout_ms = wait.timeout_ms()
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        waited: set[str] = set()
        for name in names:
            with self._cond:
                while True:
                    holder = self._holders.get(name)
                    if holder is None or holder == owner:
                        self._holders[name] = owner
                        break
                    waited.add(name)
                    self._check_deadlock(owner, holder, name)
                    self._waiting[owner] = holder
                    try:
                        self._cond.wait(_WAIT_SLICE_S)
                    finally:
                        self._waiting.pop(owner, None)
                    wait.check()
                    if deadline is not None and time.monotonic() >= deadline:
                        raise LockNotAvailable("canceling statement due to lock timeout")
        return waited

    def _check_deadlock(self, owner: object, holder: object, name: str) -> None:
        current: object | None = holder
        seen: set[int] = set()
        while current is not None and id(current) not in seen:
            if current == owner:
                raise DeadlockDetected(
                    "deadlock detected",
                    detail=f'Waiting for role "{name}" would close a cycle of transactions '
                    "waiting for each other's locks.",
                )
            seen.add(id(current))
            current = self._waiting.get(current)

    def transfer(self, owner: object, new_owner: object) -> None:
        """Hand every name ``owner`` holds to ``new_owner`` (PREPARE TRANSACTION)."""
        with self._cond:
            for name, holder in self._holders.items():
                if holder == owner:
                    self._holders[name] = new_owner

    def release(self, owner: object) -> None:
        """Free every name ``owner`` holds (its transaction ended)."""
        with self._cond:
            for name in [n for n, h in self._holders.items() if h == owner]:
                del self._holders[name]
            self._cond.notify_all()


def prepared_owner(gid: str) -> tuple[str, str]:
    """The owner a prepared transaction holds its role names as."""
    return ("prepared", gid)
