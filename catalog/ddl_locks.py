"""DdlLocks: relation names that a transaction's uncommitted DDL holds until it ends.

PostgreSQL's DDL takes an ACCESS EXCLUSIVE lock on the relation, held to the
end of the transaction: a second transaction's DDL on it waits, and so does
any statement that reads or writes it.  nyala keeps one such lock per
relation name.  A waiter gives up on ``lock_timeout`` (55P03), on a cancel or
``statement_timeout`` (its ``check`` raises), and when waiting would close a
cycle of waiters (40P01); waiting holds no lock of the waiter's own beyond
those its transaction already held.

CREATE INDEX holds its table in SHARE mode instead: statements that only
read the table go on (they see it as committed, without the new index), and
only writers wait, as behind PostgreSQL's SHARE lock.  Between two DDL
statements every mode conflicts (PostgreSQL lets two CREATE INDEX on one
table run at once; here the second waits for the first).

An index build also waits, holding its lock, for the transactions with
uncommitted writes on the table (``writer_wait``), as PostgreSQL's CREATE INDEX
waits for their ROW EXCLUSIVE locks.  Such a writer already holds its table
lock in PostgreSQL, so its further statements on the table go on
(``wait_until_free`` lets them pass); waiting for another relation the build
holds closes a cycle, found from either end.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from storage.errors import DeadlockDetected, LockNotAvailable

_WAIT_SLICE_S = 0.05


class RelationLock(enum.IntEnum):
    """How strongly DDL holds a relation, weakest first (PostgreSQL's table lock modes)."""

    SHARE_UPDATE_EXCLUSIVE = 0
    """CREATE INDEX CONCURRENTLY: neither readers nor writers wait."""

    SHARE = 1
    """CREATE INDEX: writers wait, readers do not."""
    ACCESS_EXCLUSIVE = 2
    """Every other DDL: readers and writers wait."""


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
        self._modes: dict[str, RelationLock] = {}
        self._waiting: dict[object, tuple[object, str]] = {}
        self._writer_waits: dict[object, tuple[list[object], frozenset[str]]] = {}
        """Index builds waiting for writers: owner -> (writers, names its lock holds)."""

    @property
    def held(self) -> bool:
        return bool(self._holders)

    def holder(self, name: str) -> object | None:
        return self._holders.get(name)

    def acquire(
        self,
        owner: object,
        names: Iterable[str],
        wait: LockWait,
        mode: RelationLock = RelationLock.ACCESS_EXCLUSIVE,
    ) -> list[str]:
        """Take every name for ``owner`` in ``mode`` (or the stronger mode it holds it in),
        waiting for other holders; the names newly taken."""
        taken = []
        for name in names:
            if self._acquire_one(owner, name, wait, mode=mode):
                taken.append(name)
        return taken

    def _acquire_one(
        self,
        owner: object,
        name: str,
        wait: LockWait,
        *,
        reading: bool = False,
        mode: RelationLock = RelationLock.ACCESS_EXCLUSIVE,
    ) -> bool:
        timeout_ms = wait.timeout_ms()
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        with self._cond:
            while True:
                holder = self._holders.get(name)
                if holder is None:
                    self._holders[name] = owner
                    self._modes[name] = mode
                    return True
                if holder is owner:
                    self._modes[name] = max(self._modes[name], mode)
                    return False
                if reading and self._waits_for_writer(holder, owner, name):
                    return False
                self._check_deadlock(owner, holder, name)
                self._waiting[owner] = (holder, name)
                try:
                    self._cond.wait(_WAIT_SLICE_S)
                finally:
                    self._waiting.pop(owner, None)
                wait.check()
                if deadline is not None and time.monotonic() >= deadline:
                    raise LockNotAvailable("canceling statement due to lock timeout")

    def wait_until_free(
        self,
        owner: object,
        names: Iterable[str],
        wait: LockWait,
        written: frozenset[str] = frozenset(),
    ) -> None:
        """Wait while another transaction holds any of ``names`` (a statement reading them,
        and writing those of ``written``) in a mode that conflicts: ACCESS EXCLUSIVE for a
        read, any for a write, unless the holder is an index build waiting for this writer."""
        for name in names:
            held = self._holders.get(name) not in (None, owner)
            if not held:
                continue
            mode = self._modes.get(name)
            if mode is RelationLock.SHARE_UPDATE_EXCLUSIVE:
                continue
            if name not in written and mode is not RelationLock.ACCESS_EXCLUSIVE:
                continue
            if self._acquire_one(owner, name, wait, reading=True):
                self.release(owner, [name])

    def _waits_for_writer(self, holder: object, writer: object, name: str) -> bool:
        found = self._writer_waits.get(holder)
        return found is not None and name in found[1] and any(w is writer for w in found[0])

    def writer_wait(self, owner: object, writers: Sequence[object], names: Iterable[str]) -> None:
        """``owner``'s index build on ``names`` waits for ``writers`` to end: DeadlockDetected
        if one of them already waits, through other locks, for ``owner``."""
        names = frozenset(names)
        with self._cond:
            self._writer_waits[owner] = (list(writers), names)
            try:
                for writer in writers:
                    self._check_deadlock(owner, writer, min(names, default=""))
            except BaseException:
                del self._writer_waits[owner]
                raise
            self._cond.notify_all()

    def writer_wait_over(self, owner: object) -> None:
        with self._cond:
            self._writer_waits.pop(owner, None)

    def _check_deadlock(self, owner: object, holder: object, name: str) -> None:
        """Raise DeadlockDetected if ``owner`` waiting for ``holder`` closes a cycle; a
        writer's wait for an index build that waits for that writer is no edge (it passes)."""
        stack = [holder]
        seen = set()
        while stack:
            current = stack.pop()
            if current is owner:
                raise DeadlockDetected(
                    "deadlock detected",
                    detail=f'Waiting for relation "{name}" would close a cycle of transactions '
                    "waiting for each other's locks.",
                )
            if id(current) in seen:
                continue
            seen.add(id(current))
            build = self._writer_waits.get(current)
            if build is not None:
                stack.extend(build[0])
            waiting = self._waiting.get(current)
            if waiting is not None and not self._waits_for_writer(waiting[0], current, waiting[1]):
                stack.append(waiting[0])

    def release(self, owner: object, names: Iterable[str]) -> None:
        with self._cond:
            for name in names:
                if self._holders.get(name) is owner:
                    del self._holders[name]
                    del self._modes[name]
            self._cond.notify_all()
