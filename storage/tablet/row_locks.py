"""RowLockTable: a tablet's explicit row locks, several transactions to a row in shared modes.

A provisional write is itself an exclusive row lock (PostgreSQL's xmax): a
row being updated is held FOR NO KEY UPDATE by its writer, a row being
deleted FOR UPDATE.  Locks that are not writes live here instead, as
PostgreSQL keeps shared lockers in a MultiXact: FOR KEY SHARE taken by a
foreign-key check, ``SELECT ... FOR SHARE/KEY SHARE/UPDATE/NO KEY UPDATE``,
and FOR UPDATE beside an UPDATE that changes a unique column (its write alone
looks like a non-key update).  The tablet consults the table under its lock
whenever a writer or locker touches a row, and a transaction's entries go when
it ends; entries of finished transactions are ignored until then.  ROLLBACK TO
SAVEPOINT puts back what the transaction held at the savepoint (``restore``):
PostgreSQL's subtransaction locks go with it, one taken before stays in its mode.
"""

from __future__ import annotations

from collections.abc import Iterable

from storage.mvcc import TxnState
from storage.row_lock_mode import RowLockMode


class RowLockTable:
    """Row locks by encoded key: the strongest mode each transaction holds; guarded by the
    tablet lock."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[bytes, dict[TxnState, RowLockMode]] = {}

    def __bool__(self) -> bool:
        return bool(self._rows)

    def conflicting(self, key: bytes, txn: TxnState, mode: RowLockMode) -> TxnState | None:
        """Another live transaction holding ``key`` in a mode that conflicts with ``mode``."""
        holders = self._rows.get(key)
        if not holders:
            return None
        for holder, held in holders.items():
            if holder is not txn and not holder.is_done and held.conflicts_with(mode):
                return holder
        return None

    def holds(self, key: bytes, txn: TxnState) -> RowLockMode | None:
        holders = self._rows.get(key)
        return holders.get(txn) if holders else None

    def add(self, keys: Iterable[bytes], txn: TxnState, mode: RowLockMode) -> None:
        """Record that ``txn`` holds each of ``keys`` in ``mode`` (or the stronger mode it
        already holds)."""
        for key in keys:
            holders = self._rows.setdefault(key, {})
            held = holders.get(txn)
            if held is None or held < mode:
                holders[txn] = mode

    def release(self, keys: Iterable[bytes], txn: TxnState) -> None:
        """Forget ``txn``'s locks on ``keys`` (its transaction ended)."""
        for key in keys:
            holders = self._rows.get(key)
            if holders is None:
                continue
            holders.pop(txn, None)
            if not holders:
                del self._rows[key]

    def restore(self, modes: dict[bytes, RowLockMode | None], txn: TxnState) -> None:
        """Set ``txn``'s lock on each key to the mode given, or drop it for None (what it
        held at a savepoint it rolled back to)."""
        for key, mode in modes.items():
            if mode is not None:
                self._rows.setdefault(key, {})[txn] = mode
            else:
                self.release((key,), txn)

    def locked_keys(self) -> int:
        """How many rows some transaction holds a lock on (a gauge for tests)."""
        return len(self._rows)
