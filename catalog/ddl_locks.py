"""DdlLocks: names that a transaction's uncommitted DDL holds until it ends.

PostgreSQL's DDL takes an ACCESS EXCLUSIVE lock on the relation, held to the
end of the transaction: a second transaction's DDL on it waits, and so does
any statement that reads or writes it.  nyala keeps one such lock per
relation name.  A waiter gives up on ``lock_timeout`` (55P03), on a cancel or
``statement_timeout`` (its ``check`` raises), and when waiting would close a
cycle of waiters (40P01); waiting holds no lock of the waiter's own beyond
those its transaction already held.

CREATE INDEX holds its table in SHARE mode instead: statements that only
read the table go on (they see it as committed, without the new index), and
only writers wait, as behind PostgreSQL's SHARE lock.  SHARE does not conflict
with itself, so two CREATE INDEX on one table run at once (a name has several
holders then, and a writer waits for all of them); every other pair of DDL
modes conflicts.

Role names are held the same way (a ``DdlLocks`` of their own, in ACCESS EXCLUSIVE mode):
PostgreSQL's CREATE ROLE inserts into pg_authid under a unique index on the name, so a
second transaction creating the same name waits for the first (open or prepared) to end,
then fails with 23505 if it committed; ALTER and DROP ROLE wait on the role's row.  Those
names are held across PREPARE TRANSACTION (``transfer`` to the prepared transaction's
owner) until COMMIT or ROLLBACK PREPARED.

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
    """Which transaction (any hashable owner) holds each name of one kind (``noun``:
    "relation" or "role", as a deadlock's detail names it)."""

    def __init__(self, noun: str = "relation") -> None:
        self._noun = noun
        self._cond = threading.Condition()
        self._holders: dict[str, dict[object, RelationLock]] = {}
        """The owners holding each name, with the mode each holds it in."""
        self._waiting: dict[object, tuple[list[object], str]] = {}
        self._writer_waits: dict[object, tuple[list[object], frozenset[str]]] = {}
        """Index builds waiting for writers: owner -> (writers, names its lock holds)."""

    @property
    def held(self) -> bool:
        return bool(self._holders)

    def waiting_for(self, owner: object) -> str | None:
        """The relation ``owner`` waits to lock (or, for an index build, waits for writers
        of), if it waits: pg_stat_activity shows it as a lock wait."""
        waiting = self._waiting.get(owner)
        if waiting is not None:
            return waiting[1]
        build = self._writer_waits.get(owner)
        return min(build[1], default=None) if build is not None else None

    def holder(self, name: str) -> object | None:
        """One owner holding ``name`` (the first to take it), if any."""
        return next(iter(self._holders.get(name, ())), None)

    def acquire(
        self,
        owner: object,
        names: Iterable[str],
        wait: LockWait,
        mode: RelationLock = RelationLock.ACCESS_EXCLUSIVE,
        waited: set[str] | None = None,
    ) -> list[str]:
        """Take every name for ``owner`` in ``mode`` (or the stronger mode it holds it in),
        waiting for other holders whose mode conflicts; the names newly taken.  The names
        it had to wait for are added to ``waited``."""
        taken = []
        for name in names:
            if self._acquire_one(owner, name, wait, mode, waited):
                taken.append(name)
        return taken

    def _acquire_one(
        self, owner: object, name: str, wait: LockWait, mode: RelationLock, waited: set[str] | None
    ) -> bool:
        def blockers() -> list[object]:
            return [
                other for other, held in self._holders.get(name, {}).items()
                if other is not owner and _conflicts(held, mode)
            ]  # fmt: skip

        with self._cond:
            if self._wait(owner, name, wait, blockers) and waited is not None:
                waited.add(name)
            holders = self._holders.setdefault(name, {})
            held = holders.get(owner)
            holders[owner] = mode if held is None else max(held, mode)
            return held is None

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

            def blockers(name: str = name) -> list[object]:
                found = []
                for other, mode in self._holders.get(name, {}).items():
                    if other is owner or mode is RelationLock.SHARE_UPDATE_EXCLUSIVE:
                        continue
                    if name not in written and mode is not RelationLock.ACCESS_EXCLUSIVE:
                        continue
                    if not self._waits_for_writer(other, owner, name):
                        found.append(other)
                return found

            if self._holders.get(name):
                with self._cond:
                    self._wait(owner, name, wait, blockers)

    def _wait(
        self, owner: object, name: str, wait: LockWait, blockers: Callable[[], list[object]]
    ) -> bool:
        """Wait (holding ``_cond``) until ``blockers()`` is empty, unless that would close a
        cycle (40P01), times out (55P03) or ``wait.check`` raises; whether it waited."""
        timeout_ms = wait.timeout_ms()
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        waited = False
        while True:
            found = blockers()
            if not found:
                return waited
            waited = True
            for holder in found:
                self._check_deadlock(owner, holder, name)
            self._waiting[owner] = (found, name)
            try:
                self._cond.wait(_WAIT_SLICE_S)
            finally:
                self._waiting.pop(owner, None)
            wait.check()
            if deadline is not None and time.monotonic() >= deadline:
                raise LockNotAvailable("canceling statement due to lock timeout")

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
                    detail=f'Waiting for {self._noun} "{name}" would close a cycle of transactions '
                    "waiting for each other's locks.",
                )
            if id(current) in seen:
                continue
            seen.add(id(current))
            build = self._writer_waits.get(current)
            if build is not None:
                stack.extend(build[0])
            waiting = self._waiting.get(current)
            if waiting is not None:
                stack.extend(
                    h for h in waiting[0] if not self._waits_for_writer(h, current, waiting[1])
                )

    def transfer(self, owner: object, new_owner: object) -> None:
        """Hand every name ``owner`` holds to ``new_owner`` (PREPARE TRANSACTION)."""
        with self._cond:
            for holders in self._holders.values():
                if owner in holders:
                    holders[new_owner] = holders.pop(owner)

    def release(self, owner: object, names: Iterable[str] | None = None) -> None:
        """Free ``names`` (all that ``owner`` holds when None) and wake the waiters."""
        with self._cond:
            if names is None:
                names = [name for name, holders in self._holders.items() if owner in holders]
            for name in names:
                holders = self._holders.get(name)
                if holders is not None and holders.pop(owner, None) is not None and not holders:
                    del self._holders[name]
            self._cond.notify_all()


def _conflicts(held: RelationLock, wanted: RelationLock) -> bool:
    """Whether two transactions cannot hold one relation in these DDL modes at once: SHARE
    goes with SHARE (two CREATE INDEX), every other pair conflicts."""
    return not (held is RelationLock.SHARE and wanted is RelationLock.SHARE)
