"""Transaction: the seam the SQL layer reads and writes tablets through.

A transaction reads at a snapshot and writes provisionally:

- ``snapshot`` is a safe time from the MvccManager.  READ COMMITTED takes a
  fresh one per statement (the SQL layer calls ``refresh_snapshot()``).  A
  transaction always sees its own writes, whatever its snapshot.
- ``insert`` / ``update`` / ``delete`` apply a batch to a tablet's MemRowSet
  at once, tagged with this transaction's ``TxnState``; nobody else sees
  them until commit.  A key holding another live transaction's provisional
  write is locked: the writer waits for that transaction to finish (deadlocks
  are found with a waits-for graph, 40P01; ``lock_timeout_ms`` gives 55P03),
  then re-applies against the newest committed version (READ COMMITTED).
- ``commit`` writes ONE WAL record (commit timestamp + every write, as Arrow
  IPC), group-commit syncs it, stamps the TxnState with the commit timestamp
  so every write becomes visible at the same instant, and waits for safe time
  so the client's next statement sees the commit.  A transaction that wrote
  nothing writes nothing to the WAL.
- ``rollback`` removes the provisional writes and wakes waiters.

Known gap (PostgreSQL's EvalPlanQual): after a lock wait, an UPDATE's new
values, computed by the SQL layer from its snapshot, are written over the
newer version as they are; ``SET x = x + 1`` from two sessions can lose one
increment.  A deadlock or lock-timeout error rolls the transaction back at
once, releasing its locks, as PostgreSQL does on any error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from storage import commit_record
from storage.commit_record import OpKind, WriteOp
from storage.errors import (
    DbError,
    InFailedSqlTransaction,
    LockNotAvailable,
    ProgramLimitExceeded,
    ReadOnlySqlTransaction,
)
from storage.mvcc import TxnState, TxnStatus
from storage.predicate import ScanSpec
from storage.scan_stats import ScanStats
from storage.tablet.tablet import Tablet, WriteResult
from storage.timestamp import Timestamp
from storage.types import TabletId

if TYPE_CHECKING:
    from storage.engine import StorageEngine

log = logging.getLogger(__name__)

_LOCK_WAIT_SLICE_S = 0.1
_MAX_RECORD_BYTES = (1 << 32) - 1


class Transaction:
    """One storage transaction; used by one thread at a time (its session's)."""

    def __init__(self, engine: StorageEngine, *, read_only: bool = False) -> None:
        self._engine = engine
        self._state = TxnState()
        self.read_only = read_only
        self._snapshot = engine.mvcc.safe_time()
        self._ops: list[WriteOp] = []
        self._written: dict[TabletId, tuple[Tablet, set[bytes]]] = {}
        self.cancel_check: Callable[[], None] | None = None
        """Called now and then while waiting for a row lock; raise QueryCanceled to stop."""

    @property
    def txn_id(self) -> int:
        return self._state.txn_id

    @property
    def state(self) -> TxnState:
        return self._state

    @property
    def snapshot(self) -> Timestamp:
        return self._snapshot

    @property
    def is_active(self) -> bool:
        return self._state.status is TxnStatus.IN_PROGRESS

    @property
    def has_writes(self) -> bool:
        return bool(self._ops)

    def refresh_snapshot(self) -> Timestamp:
        """Read at the current safe time from now on (READ COMMITTED: once per statement)."""
        self._snapshot = self._engine.mvcc.safe_time()
        return self._snapshot

    def scan(
        self, tablet_id: TabletId, spec: ScanSpec, *, stats: ScanStats | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Yield the tablet's rows matching ``spec`` at this snapshot, own writes included;
        or, when ``spec.snapshot`` is set, as the tablet was then (SnapshotTooOld, 72000, if
        that is older than ``history_max_age_s``).  ``stats`` collects what the scan read; the
        engine also keeps it, with the tablet and spec, in ``recent_scans``."""
        self._check_active()
        tablet = self._engine.tablet(tablet_id)
        stats = stats if stats is not None else ScanStats()
        self._engine.recent_scans.append((tablet_id, spec, stats))
        if spec.snapshot is not None:
            self._engine.check_snapshot(Timestamp(spec.snapshot))
            return tablet.scan(spec, Timestamp(spec.snapshot), None, stats)
        return tablet.scan(spec, self._snapshot, self._state, stats)

    def check_snapshot(self, snapshot: int) -> None:
        """Raise SnapshotTooOld (72000) if a time-travel read at ``snapshot`` is refused."""
        self._engine.check_snapshot(Timestamp(snapshot))

    def insert(
        self,
        tablet_id: TabletId,
        batch: pa.RecordBatch,
        *,
        constraint_name: str | None = None,
    ) -> int:
        """Insert ``batch`` (every column, fields named ``str(column_id)``); return rows inserted.

        All or nothing: a key that is live (or repeated in the batch) raises
        UniqueViolation naming ``constraint_name`` and leaves no row behind.
        """
        self._check_writable("INSERT")
        tablet = self._engine.tablet(tablet_id)
        result = tablet.insert(self._state, batch, self._wait_for, constraint_name)
        return self._record(tablet, OpKind.INSERT, batch, result)

    def update(self, tablet_id: TabletId, batch: pa.RecordBatch) -> int:
        """Set the non-key columns in ``batch`` on the rows its key columns name.

        Rows whose key is absent or deleted at the newest version are skipped;
        returns the rows updated.  Key columns cannot change (delete + insert).
        """
        self._check_writable("UPDATE")
        tablet = self._engine.tablet(tablet_id)
        result = tablet.update(self._state, batch, self._wait_for)
        return self._record(tablet, OpKind.UPDATE, batch, result)

    def delete(self, tablet_id: TabletId, keys: pa.RecordBatch) -> int:
        """Delete the rows whose key columns ``keys`` holds; return the rows deleted."""
        self._check_writable("DELETE")
        tablet = self._engine.tablet(tablet_id)
        result = tablet.delete(self._state, keys, self._wait_for)
        return self._record(tablet, OpKind.DELETE, keys, result)

    def _record(
        self, tablet: Tablet, kind: OpKind, batch: pa.RecordBatch, result: WriteResult
    ) -> int:
        if result.count:
            self._ops.append(WriteOp(tablet.tablet_id, kind, batch))
            self._written.setdefault(tablet.tablet_id, (tablet, set()))[1].update(result.keys)
        return result.count

    def commit(self) -> Timestamp | None:
        """Make every write durable and visible at once; return the commit timestamp (None if
        the transaction wrote nothing)."""
        self._check_active()
        if not self._ops:
            self._state.mark_committed(None)
            return None
        engine = self._engine
        body = commit_record.encode_ops(self._ops)
        if commit_record.HEADER_BYTES + len(body) > _MAX_RECORD_BYTES:
            self.rollback()
            raise ProgramLimitExceeded("transaction is too large to commit in one WAL record")
        with engine.commit_lock:
            # Timestamps are assigned in WAL order, so replay order is commit order.
            commit_ts = engine.mvcc.start_commit()
            payload = commit_record.encode_header(commit_ts, len(self._ops)) + body
            try:
                lsn = engine.wal.append(payload)
            except BaseException:
                engine.mvcc.abort_commit(commit_ts)
                self.rollback()
                raise
        try:
            engine.wal.sync(lsn)
        except BaseException:
            log.critical("WAL sync failed; transaction %d rolled back in memory", self.txn_id)
            engine.mvcc.abort_commit(commit_ts)
            self.rollback()
            raise
        self._state.mark_committed(commit_ts)
        engine.mvcc.finish_commit(commit_ts)
        engine.mvcc.wait_for_safe_time(commit_ts)
        written = list(self._written)
        self._ops.clear()
        self._written.clear()
        try:
            engine.maybe_flush(written)
        except Exception:
            # The commit is durable; a failed flush is retried by the next commit or CHECKPOINT.
            log.exception("flush after the commit of transaction %d failed", self.txn_id)
        return commit_ts

    def rollback(self) -> None:
        """Discard every provisional write and wake writers waiting on them; idempotent."""
        if not self.is_active:
            return
        for tablet, keys in self._written.values():
            tablet.remove_provisional(self._state, keys)
        self._ops.clear()
        self._written.clear()
        self._state.mark_aborted()

    def _wait_for(self, holder: TxnState) -> None:
        """Wait until ``holder`` finishes, unless that would deadlock or time out."""
        engine = self._engine
        try:
            engine.waits_for.add_wait(self._state, holder)
            try:
                timeout_ms = engine.options.lock_timeout_ms
                deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
                while True:
                    wait_s = _LOCK_WAIT_SLICE_S
                    if deadline is not None:
                        wait_s = max(0.0, min(wait_s, deadline - time.monotonic()))
                    if holder.wait_done(wait_s):
                        return
                    if self.cancel_check is not None:
                        self.cancel_check()
                    if deadline is not None and time.monotonic() >= deadline:
                        raise LockNotAvailable("canceling statement due to lock timeout")
            finally:
                engine.waits_for.remove_wait(self._state)
        except DbError:
            self.rollback()
            raise

    def _check_active(self) -> None:
        if not self.is_active:
            raise InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block"
                if self._state.status is TxnStatus.ABORTED
                else "transaction is already committed"
            )

    def _check_writable(self, command: str) -> None:
        self._check_active()
        if self.read_only:
            raise ReadOnlySqlTransaction(f"cannot execute {command} in a read-only transaction")
