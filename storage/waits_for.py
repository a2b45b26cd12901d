"""WaitsForGraph: who waits for whose row locks, to find deadlocks before sleeping on one.

A transaction that finds another live transaction's provisional write on a
key waits for that transaction to finish.  Each waiter waits for exactly one
holder at a time, so the graph is a map waiter -> holder and a cycle is found
by walking from the new holder: if the walk comes back to the waiter, the
waiter that would close the cycle gets ``DeadlockDetected`` (40P01) instead
of waiting, and the others go on once its transaction rolls back.
"""

from __future__ import annotations

import threading
import time

from storage.errors import DeadlockDetected
from storage.mvcc import TxnState


class WaitsForGraph:
    """The database-wide waits-for relation; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting_for: dict[TxnState, TxnState] = {}
        self._since: dict[TxnState, float] = {}
        self.deadlocks = 0
        """Deadlocks found since the engine opened (pg_stat_database.deadlocks)."""

    def add_wait(self, waiter: TxnState, holder: TxnState) -> None:
        """Record that ``waiter`` waits for ``holder``; raise DeadlockDetected if that closes a cycle."""
        with self._lock:
            cycle = [waiter.txn_id]
            node: TxnState | None = holder
            seen: set[TxnState] = set()
            while node is not None and not node.is_done and node not in seen:
                seen.add(node)
                cycle.append(node.txn_id)
                if node is waiter:
                    self.deadlocks += 1
                    raise DeadlockDetected(
                        "deadlock detected",
                        detail=" -> ".join(f"transaction {t}" for t in cycle)
                        + " (each waits for the next).",
                        hint="See server log for query details.",
                    )
                node = self._waiting_for.get(node)
            self._waiting_for[waiter] = holder
            self._since[waiter] = time.monotonic()

    def remove_wait(self, waiter: TxnState) -> None:
        with self._lock:
            self._waiting_for.pop(waiter, None)
            self._since.pop(waiter, None)

    def waiting_since(self, waiter: TxnState) -> float | None:
        """When (``time.monotonic()``) the waiter began its current wait, if it waits."""
        with self._lock:
            return self._since.get(waiter)

    def waiters_of(self, holder: TxnState) -> list[TxnState]:
        """Who waits for ``holder``, longest-waiting first."""
        with self._lock:
            found = [w for w, h in self._waiting_for.items() if h is holder]
            return sorted(found, key=lambda w: self._since.get(w, 0.0))

    def waiting_for(self, waiter: TxnState) -> TxnState | None:
        with self._lock:
            return self._waiting_for.get(waiter)
