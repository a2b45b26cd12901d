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
  Writers waiting on one row wait in line (``row_lock_queue.py``): only the
  first waits for the holder, and keeps its place until its own write of the
  row is done or its statement ends, so a release wakes one writer.
- ``lock`` takes PostgreSQL's row locks without writing (a foreign-key check's
  FOR KEY SHARE, ``SELECT ... FOR SHARE``): several transactions may hold a
  row in shared modes at once (each tablet's ``RowLockTable``), an update
  holds its rows FOR NO KEY UPDATE and a delete FOR UPDATE, and conflicting
  requests wait in the same lines, deadlock checks and timeouts as writes.
- ``commit`` writes ONE WAL record (commit timestamp + every write, as Arrow
  IPC), group-commit syncs it, stamps the TxnState with the commit timestamp
  so every write becomes visible at the same instant, and waits for safe time
  so the client's next statement sees the commit.  A transaction that wrote
  nothing writes nothing to the WAL.
- ``rollback`` removes the provisional writes and wakes waiters.

- ``update`` / ``delete`` with ``conflicts=`` check each row against the
  snapshot: a row another transaction changed and committed after it is not
  written.  Under REPEATABLE READ that is 40001; under READ COMMITTED the
  rows are handed back, and the SQL layer re-reads them at a fresh snapshot
  and re-applies its WHERE and SET (PostgreSQL's EvalPlanQual), so
  ``SET x = x + 1`` from two sessions loses nothing.
- ``savepoint`` / ``rollback_to`` / ``release`` mark a point in the write
  log; rolling back to it undoes each later write, newest first (every write
  adds exactly one provisional entry per row it changed), and puts the row
  lock table back as it was then: a lock taken after the savepoint goes, one
  upgraded after it returns to its mode (PostgreSQL's subtransaction locks),
  and writers waiting on those rows look again at once.

A deadlock or lock-timeout error rolls the transaction back at once,
releasing its locks, unless it has savepoints (then, as in PostgreSQL, the
locks stay until the client rolls back).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NoReturn

import numpy as np
import pyarrow as pa

from storage import commit_record
from storage.commit_pipeline import CommitPipeline
from storage.commit_record import OpKind, WriteOp
from storage.data_type import ColumnId, TabletId
from storage.errors import (
    DbError,
    InFailedSqlTransaction,
    InvalidSavepointSpecification,
    LockNotAvailable,
    ProgramLimitExceeded,
    ReadOnlySqlTransaction,
    SerializationFailure,
)
from storage.mvcc import TxnState, TxnStatus
from storage.predicate import KeyRange, ScanSpec
from storage.row_lock_mode import RowLockMode
from storage.row_lock_queue import RowId, Ticket
from storage.scan_stats import ScanStats
from storage.tablet.insert_segment import InsertSegment
from storage.tablet.tablet import Tablet, WriteResult
from storage.tablet_registry import TabletRegistry
from storage.timestamp import Timestamp

log = logging.getLogger(__name__)

_LOCK_WAIT_SLICE_S = 0.1
_MAX_RECORD_BYTES = (1 << 32) - 1


class Transaction:
    """One storage transaction; used by one thread at a time (its session's)."""

    def __init__(
        self, pipeline: CommitPipeline, tablets: TabletRegistry, *, read_only: bool = False
    ) -> None:
        self._pipeline = pipeline
        self._tablets = tablets
        self._state = TxnState()
        self.read_only = read_only
        self._snapshot = pipeline.mvcc.safe_time()
        self._ops: list[WriteOp] = []
        self._discarded: tuple[WriteOp, ...] = ()
        self._undo_log: list[tuple[Tablet, list[bytes], InsertSegment | None]] = []
        self._written: dict[TabletId, tuple[Tablet, set[bytes]]] = {}
        self._segments: list[tuple[Tablet, InsertSegment]] = []
        """Bulk inserts kept whole in a MemRowSet (their keys are not in ``_written``)."""
        self._locked: dict[TabletId, tuple[Tablet, set[bytes]]] = {}
        """Rows with entries in their tablet's row lock table, released when this ends."""
        self._lock_ops: list[WriteOp] = []
        """Those locks as ROW_LOCK records, for PREPARE TRANSACTION to keep."""
        self._lock_log: list[tuple[Tablet, list[bytes], RowLockMode]] = []
        """Those locks by encoded key, one entry per ``_lock_ops`` record (savepoints)."""
        self._enlisted: set[TabletId] = set()
        """The tablets this transaction told the pipeline it writes (``wait_for_writers``)."""
        self._lock_enlisted: set[TabletId] = set()
        """Tablets it holds row locks on (told the pipeline too): as PostgreSQL's ROW SHARE
        table lock, a rewrite or DROP waits for it, an index build does not."""
        self._savepoints: list[tuple[str, int, int]] = []
        """Name, then how many writes and row-lock records came before it."""
        self._tickets: dict[RowId, Ticket] = {}
        self._waiting: tuple[RowId, TxnState, float, int] | None = None
        """The row this statement waits for, its holder, since when, and how many early
        releases of the holder's it has looked past (a retry keeps the lock_timeout)."""
        self.repeatable_read = False
        """One snapshot for the whole transaction, taken by its first statement."""
        self._snapshot_fixed = False
        self.lock_timeout_ms: int | None = None
        """How long to wait for a row lock (0: forever); None: the ``lock_timeout_ms`` option."""
        self.cancel_check: Callable[[], None] | None = None
        """Called now and then while waiting for a row lock; raise QueryCanceled to stop."""
        self.on_wait_end: Callable[[bool], None] | None = None
        """Called when a row-lock wait ends, with whether the turn came (log_lock_waits)."""
        self.refuse_wait: Callable[[], NoReturn] | None = None
        """Raises instead of a row-lock wait: a statement on the event loop must not block it,
        so it gives up before it joins the row's line and runs again where it may wait."""

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

    @property
    def has_snapshot(self) -> bool:
        """Whether a statement has run (and, under REPEATABLE READ, fixed the snapshot)."""
        return self._snapshot_fixed

    def begin_statement(self, *, snapshot_is_new: bool = False) -> Timestamp:
        """The snapshot a statement reads at: a fresh one under READ COMMITTED; under
        REPEATABLE READ the first statement's, for the whole transaction.
        ``snapshot_is_new``: the transaction began (or ``refresh_snapshot`` ran) for this
        statement, after it arrived, so that snapshot already sees every commit acknowledged
        before it and a second ``safe_time`` would only cost time."""
        self.end_statement()
        if not snapshot_is_new and not (self.repeatable_read and self._snapshot_fixed):
            self._snapshot = self._pipeline.mvcc.safe_time()
        self._snapshot_fixed = True
        return self._snapshot

    def end_statement(self) -> None:
        """Give up this transaction's place in any row's line of waiters (its statement is over)."""
        if self._tickets:
            self._leave_lines()

    def refresh_snapshot(self) -> Timestamp:
        """Read at the current safe time from now on (an EvalPlanQual re-read)."""
        self._snapshot = self._pipeline.mvcc.safe_time()
        return self._snapshot

    @contextlib.contextmanager
    def reading_latest(self) -> Iterator[None]:
        """Read at the current safe time inside the block, at the snapshot again after it
        (PostgreSQL's crosscheck snapshot: a REPEATABLE READ foreign-key check looks for
        rows its snapshot cannot see)."""
        saved = self._snapshot
        self._snapshot = self._pipeline.mvcc.safe_time()
        try:
            yield
        finally:
            self._snapshot = saved

    def scan(
        self,
        tablet_id: TabletId,
        spec: ScanSpec,
        *,
        stats: ScanStats | None = None,
        latest: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the tablet's rows matching ``spec`` at this snapshot, own writes included
        (``latest``: at the current safe time, whatever the snapshot, as an index build
        reads); or, when ``spec.snapshot`` is set, as the tablet was then (SnapshotTooOld,
        72000, if that is older than ``history_max_age_s``).  ``stats`` collects what the scan read; the
        commit pipeline also keeps it, with the tablet and spec, in ``recent_scans``."""
        self._check_active()
        tablet = self._tablets.tablet(tablet_id)
        stats = stats if stats is not None else ScanStats()
        self._pipeline.recent_scans.append((tablet_id, spec, stats))
        if spec.snapshot is not None:
            self._pipeline.check_snapshot(Timestamp(spec.snapshot))
            return tablet.scan(spec, Timestamp(spec.snapshot), None, stats)
        snapshot = self._pipeline.mvcc.safe_time() if latest else self._snapshot
        return tablet.scan(spec, snapshot, self._state, stats)

    def read_keys(
        self,
        tablet_id: TabletId,
        keys: list[bytes],
        columns: tuple[ColumnId, ...],
        *,
        snapshot: int | None = None,
        stats: ScanStats | None = None,
    ) -> pa.RecordBatch:
        """The rows of the tablet with encoded primary keys ``keys`` (``encode_keys``), as
        ``scan`` would see them: at this snapshot with own writes, or as the tablet was at
        ``snapshot`` (SnapshotTooOld, 72000, if refused)."""
        at, reader = self._reading(snapshot)
        return self._tablets.tablet(tablet_id).read_keys(keys, columns, at, reader, stats)

    def read_range(self, tablet_id: TabletId, spec: ScanSpec, most: int) -> pa.RecordBatch | None:
        """``scan`` of a short primary-key range as point reads (``read_key_range`` of the
        spec's key range), or None when ``spec`` bounds more than the key, has a limit, or
        the range holds more than ``most`` rows in some rowset (the caller scans instead)."""
        self._check_active()
        schema = self._tablets.tablet(tablet_id).schema
        key_range = spec.key_range(schema)
        if spec.limit is not None or key_range.is_empty or spec.beyond_key(schema, key_range):
            return None
        return self.read_key_range(
            tablet_id, key_range, spec.projection, most, snapshot=spec.snapshot
        )

    def read_key_range(
        self,
        tablet_id: TabletId,
        key_range: KeyRange,
        projection: tuple[ColumnId, ...],
        most: int,
        *,
        snapshot: int | None = None,
    ) -> pa.RecordBatch | None:
        """``read_range`` of an already encoded, non-empty key range, every row in it wanted
        (``Tablet.read_key_range``): at this snapshot with own writes, or at ``snapshot``."""
        at, reader = self._reading(snapshot)
        return self._tablets.tablet(tablet_id).read_key_range(
            key_range, projection, at, reader, most
        )

    def keys_in_range(
        self, tablet_id: TabletId, key_range: KeyRange, most: int, *, snapshot: int | None = None
    ) -> list[bytes] | None:
        """``read_key_range`` of the rows' encoded keys alone (``Tablet.keys_in_range``)."""
        at, reader = self._reading(snapshot)
        return self._tablets.tablet(tablet_id).keys_in_range(key_range, at, reader, most)

    def _reading(self, snapshot: int | None) -> tuple[Timestamp, TxnState | None]:
        """The snapshot and reader of a point read: the transaction's own, with its writes;
        or, for time travel to ``snapshot``, that one alone once it is allowed (72000)."""
        self._check_active()
        if snapshot is None:
            return self._snapshot, self._state
        self._pipeline.check_snapshot(Timestamp(snapshot))
        return Timestamp(snapshot), None

    def check_snapshot(self, snapshot: int) -> None:
        """Raise SnapshotTooOld (72000) if a time-travel read at ``snapshot`` is refused."""
        self._pipeline.check_snapshot(Timestamp(snapshot))

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
        tablet = self._tablets.tablet(tablet_id)
        self._enlist(tablet_id)
        try:
            result = tablet.insert(self._state, batch, self._waiter(tablet_id), constraint_name)
        except BaseException:
            self.end_statement()
            raise
        return self._record(tablet, OpKind.INSERT, batch, result)

    def update(
        self,
        tablet_id: TabletId,
        batch: pa.RecordBatch,
        *,
        conflicts: list[int] | None = None,
        key_update: bool = False,
    ) -> int:
        """Set the non-key columns in ``batch`` on the rows its key columns name.

        Rows whose key is absent or deleted at the newest version are skipped;
        returns the rows updated.  Key columns cannot change (delete + insert).
        With ``conflicts`` (a list to fill), rows changed by a transaction that
        committed after this snapshot are not written: REPEATABLE READ raises
        SerializationFailure (40001); READ COMMITTED appends their batch row
        numbers to ``conflicts``, for the caller to re-read and retry.
        ``key_update``: the write changes a column of a unique index, so it locks the
        rows FOR UPDATE (a foreign-key check's FOR KEY SHARE waits for it), not FOR NO
        KEY UPDATE.
        """
        self._check_writable("UPDATE")
        tablet = self._tablets.tablet(tablet_id)
        self._enlist(tablet_id)
        mode = RowLockMode.UPDATE if key_update else RowLockMode.NO_KEY_UPDATE
        try:
            result = tablet.update(
                self._state, batch, self._waiter(tablet_id), self._conflict_ts(conflicts), mode
            )
        except BaseException:
            self.end_statement()
            raise
        if key_update and result.keys:
            self._note_locks(tablet, result.keys, mode, batch)
        return self._record(tablet, OpKind.UPDATE, batch, result, conflicts)

    def lock(
        self,
        tablet_id: TabletId,
        keys: pa.RecordBatch,
        mode: RowLockMode,
        *,
        conflicts: list[int] | None = None,
        command: str = "SELECT FOR UPDATE",
    ) -> int:
        """Lock the rows whose key columns ``keys`` holds in ``mode`` until this transaction
        ends, waiting for conflicting holders as a write does; return the rows locked
        (absent or deleted ones are skipped).  Nothing is written or logged.  ``conflicts``
        as for ``update``, except that such rows are locked too (the caller re-reads them).
        """
        self._check_writable(command)
        tablet = self._tablets.tablet(tablet_id)
        if tablet_id not in self._lock_enlisted:
            self._lock_enlisted.add(tablet_id)
            self._pipeline.enlist_writer(tablet_id, self._state, self)
        try:
            result = tablet.lock_rows(
                self._state, keys, mode, self._waiter(tablet_id), self._conflict_ts(conflicts)
            )
        except BaseException:
            self.end_statement()
            raise
        self.end_statement()
        if result.keys:
            self._note_locks(tablet, result.keys, mode, keys)
        if result.conflicts:
            if self.repeatable_read:
                raise SerializationFailure("could not serialize access due to concurrent update")
            assert conflicts is not None, "conflicts are only checked for a caller that asks"
            conflicts.extend(result.conflicts)
        return result.count

    def _note_locks(
        self, tablet: Tablet, keys: list[bytes], mode: RowLockMode, batch: pa.RecordBatch
    ) -> None:
        self._locked.setdefault(tablet.tablet_id, (tablet, set()))[1].update(keys)
        self._lock_ops.append(commit_record.row_lock_op(tablet.tablet_id, batch, mode))
        self._lock_log.append((tablet, keys, mode))

    def delete(
        self, tablet_id: TabletId, keys: pa.RecordBatch, *, conflicts: list[int] | None = None
    ) -> int:
        """Delete the rows whose key columns ``keys`` holds; return the rows deleted.
        ``conflicts`` as for ``update``."""
        self._check_writable("DELETE")
        tablet = self._tablets.tablet(tablet_id)
        self._enlist(tablet_id)
        try:
            result = tablet.delete(
                self._state, keys, self._waiter(tablet_id), self._conflict_ts(conflicts)
            )
        except BaseException:
            self.end_statement()
            raise
        return self._record(tablet, OpKind.DELETE, keys, result, conflicts)

    def enlist(self, tablet_ids: Sequence[TabletId]) -> None:
        """Count as a writer of ``tablet_ids`` from now to the transaction's end (a write
        statement, before it reads the catalog it runs by), as a PostgreSQL writer's ROW
        EXCLUSIVE lock is held; an index build on them waits for it."""
        for tablet_id in tablet_ids:
            self._enlist(tablet_id)

    def writes_any(self, tablet_ids: Iterable[TabletId]) -> bool:
        """Whether this transaction counts as a writer of any of ``tablet_ids``."""
        return not self._enlisted.isdisjoint(tablet_ids)

    def has_written(self, tablet_ids: Iterable[TabletId]) -> bool:
        """Whether this transaction has uncommitted writes on any of ``tablet_ids``."""
        ids = set(tablet_ids)
        return not ids.isdisjoint(self._written) or any(
            tablet.tablet_id in ids for tablet, _ in self._segments
        )

    def _enlist(self, tablet_id: TabletId) -> None:
        if tablet_id not in self._enlisted:
            self._enlisted.add(tablet_id)
            self._pipeline.enlist_writer(tablet_id, self._state, self)

    def _discharge(self) -> None:
        if self._enlisted or self._lock_enlisted:
            enlisted = self._enlisted | self._lock_enlisted
            self._pipeline.discharge_writer(list(enlisted), self._state)
            self._enlisted = set()
            self._lock_enlisted = set()

    def wait_for_writers(
        self,
        tablet_ids: list[TabletId],
        check: Callable[[list[Transaction]], None],
        timeout_ms: int,
        *,
        ignore: object = None,
        row_lockers: bool = False,
    ) -> None:
        """Wait until every other transaction with uncommitted writes on ``tablet_ids`` now
        has ended (an index build, as PostgreSQL's CREATE INDEX waits for the lockers it
        finds, not for ones that come after it: those wait for its lock); with
        ``row_lockers``, also those holding row locks there (ACCESS EXCLUSIVE DDL).

        ``check(writers)`` gets those still live before each wait and now and then while
        it lasts: it raises on a cancel or on a cycle through locks above storage; a cycle
        through row locks is DeadlockDetected (40P01) and ``timeout_ms`` (0: none)
        LockNotAvailable (55P03).  ``ignore`` is a transaction not to wait for (the one a
        helper transaction serves).
        """
        pipeline = self._pipeline
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        others = [
            (s, t) for s, t in pipeline.writers(tablet_ids)
            if s is not self._state and t is not ignore and isinstance(t, Transaction)
            and (row_lockers or t.writes_any(tablet_ids))
        ]  # fmt: skip
        for position, (state, _writer) in enumerate(others):
            pipeline.waits_for.add_wait(self._state, state)
            try:
                while True:
                    check([t for s, t in others[position:] if not s.is_done])
                    if state.wait_done(_LOCK_WAIT_SLICE_S):
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        raise LockNotAvailable("canceling statement due to lock timeout")
            finally:
                pipeline.waits_for.remove_wait(self._state)
            if state.commit_ts is not None:  # a scan at the safe time then sees its writes
                pipeline.mvcc.wait_for_safe_time(state.commit_ts)

    def _conflict_ts(self, conflicts: list[int] | None) -> Timestamp | None:
        return self._snapshot if conflicts is not None or self.repeatable_read else None

    def _record(
        self,
        tablet: Tablet,
        kind: OpKind,
        batch: pa.RecordBatch,
        result: WriteResult,
        conflicts: list[int] | None = None,
    ) -> int:
        if not result.conflicts:
            # The write is done; with conflicts the caller re-reads those rows and writes
            # again, keeping its place at the head of their lines until then.
            self.end_statement()
        if result.conflicts:
            if self.repeatable_read:
                self._undo_writes(tablet, result.keys)
                raise SerializationFailure("could not serialize access due to concurrent update")
            assert conflicts is not None, "conflicts are only checked for a caller that asks"
            conflicts.extend(result.conflicts)
            keep = np.ones(batch.num_rows, dtype=bool)
            keep[result.conflicts] = False
            batch = batch.filter(pa.array(keep))
        if result.count:
            self._ops.append(WriteOp(tablet.tablet_id, kind, batch))
            self._undo_log.append((tablet, result.keys, result.segment))
            self._written.setdefault(tablet.tablet_id, (tablet, set()))[1].update(result.keys)
            if result.segment is not None:
                self._segments.append((tablet, result.segment))
        return result.count

    def _undo_writes(self, tablet: Tablet, keys: list[bytes]) -> None:
        if keys:
            tablet.remove_provisional(self._state, keys, newest_only=True)

    # -- savepoints ------------------------------------------------------------------------

    def savepoint(self, name: str) -> None:
        """Mark the current point of the write log under ``name`` (names may repeat)."""
        self._check_active()
        self._savepoints.append((name, len(self._ops), len(self._lock_log)))

    def _find_savepoint(self, name: str) -> int:
        for index in range(len(self._savepoints) - 1, -1, -1):
            if self._savepoints[index][0] == name:
                return index
        raise InvalidSavepointSpecification(f'savepoint "{name}" does not exist')

    def rollback_to(self, name: str) -> None:
        """Undo every write since savepoint ``name``, newest first, and give up the row
        locks taken since; the savepoint stays, later ones go."""
        self._check_active()
        index = self._find_savepoint(name)
        _, mark, lock_mark = self._savepoints[index]
        del self._savepoints[index + 1 :]
        released = len(self._ops) > mark or len(self._lock_log) > lock_mark
        self._restore_row_locks(lock_mark)
        while len(self._ops) > mark:
            self._ops.pop()
            tablet, keys, segment = self._undo_log.pop()
            self._undo_writes(tablet, keys)
            if segment is not None:
                tablet.drop_segment(segment)
                self._segments.remove((tablet, segment))
        if released:
            self._state.released_early()

    def _restore_row_locks(self, mark: int) -> None:
        """Put the row lock table entries back as the first ``mark`` lock records left
        them: a row locked only later is freed, one locked before keeps its mode then."""
        if len(self._lock_log) <= mark:
            return
        undone = self._lock_log[mark:]
        del self._lock_log[mark:]
        del self._lock_ops[mark:]
        modes: dict[TabletId, tuple[Tablet, dict[bytes, RowLockMode | None]]] = {}
        for tablet, keys, _ in undone:
            modes.setdefault(tablet.tablet_id, (tablet, {}))[1].update(dict.fromkeys(keys))
        for tablet, keys, mode in self._lock_log:
            entry = modes.get(tablet.tablet_id)
            if entry is None:
                continue
            wanted = entry[1]
            for key in keys:
                if key in wanted:
                    held = wanted[key]
                    if held is None or held < mode:
                        wanted[key] = mode
        for tablet_id, (tablet, wanted) in modes.items():
            tablet.restore_row_locks(self._state, wanted)
            self._locked[tablet_id][1].difference_update(
                key for key, mode in wanted.items() if mode is None
            )

    def release(self, name: str) -> None:
        """Forget savepoint ``name`` and every later one; their writes stay."""
        self._check_active()
        del self._savepoints[self._find_savepoint(name) :]

    def savepoint_names(self) -> list[str]:
        """The savepoints now defined, oldest first."""
        return [name for name, _, _ in self._savepoints]

    @property
    def has_savepoints(self) -> bool:
        return bool(self._savepoints)

    def write_ops(self) -> tuple[WriteOp, ...]:
        """The writes a commit would log, in order, then the row locks held without a write:
        what PREPARE TRANSACTION keeps, so a restart takes them all again."""
        return (*self._ops, *self._lock_ops)

    def attempted_ops(self) -> tuple[WriteOp, ...]:
        """The writes made, also once a rollback (a deadlock's, say) discarded them: what
        the activity statistics count."""
        return self._discarded + tuple(self._ops)

    def commit(
        self,
        *,
        marker: WriteOp | None = None,
        on_durable: Callable[[], None] | None = None,
        markers: tuple[WriteOp, ...] = (),
    ) -> Timestamp | None:
        """Make every write durable and visible at once; return the commit timestamp (None if
        the transaction wrote nothing).

        ``marker`` and ``markers`` are logged after the writes (COMMIT PREPARED's gid, the
        catalog and role documents); ``on_durable`` runs once the record is durable and
        before any reader can see the commit.
        """
        self._check_active()
        extra = markers if marker is None else (marker, *markers)
        if not self._ops and not extra:
            self._state.mark_committed(None)
            self._discharge()
            self._release_row_locks()
            return None
        pipeline = self._pipeline
        ops = [*self._ops, *extra] if extra else self._ops
        body = commit_record.encode_ops(ops)
        if commit_record.HEADER_BYTES + len(body) > _MAX_RECORD_BYTES:
            self.rollback()
            raise ProgramLimitExceeded("transaction is too large to commit in one WAL record")
        with pipeline.commit_lock:
            # Timestamps are assigned in WAL order, so replay order is commit order.
            commit_ts = pipeline.mvcc.start_commit()
            payload = commit_record.encode_header(commit_ts, len(ops)) + body
            try:
                lsn = pipeline.wal.append(payload)
            except BaseException:
                pipeline.mvcc.abort_commit(commit_ts)
                self.rollback()
                raise
        try:
            pipeline.wal.sync(lsn)
        except BaseException:
            log.critical("WAL sync failed; transaction %d rolled back in memory", self.txn_id)
            pipeline.mvcc.abort_commit(commit_ts)
            self.rollback()
            raise
        if on_durable is not None:
            try:
                on_durable()
            except Exception:  # the commit is durable: it must become visible all the same
                log.exception("after the commit of transaction %d", self.txn_id)
        self._state.mark_committed(commit_ts)
        pipeline.mvcc.finish_commit(commit_ts)
        pipeline.mvcc.wait_for_safe_time(commit_ts)
        self._discharge()
        self._release_row_locks()
        written = list(self._written)
        self._ops.clear()
        self._undo_log.clear()
        self._written.clear()
        self._segments.clear()
        self.end_statement()
        try:
            pipeline.maybe_flush(written)
        except Exception:
            # The commit is durable; a failed flush is retried by the next commit or CHECKPOINT.
            log.exception("flush after the commit of transaction %d failed", self.txn_id)
        return commit_ts

    def rollback(self) -> None:
        """Discard every provisional write and wake writers waiting on them; idempotent."""
        if not self.is_active:
            return
        self.end_statement()
        for tablet, keys in self._written.values():
            tablet.remove_provisional(self._state, keys)
        for tablet, segment in self._segments:
            tablet.drop_segment(segment)
        self._segments.clear()
        self._discarded = tuple(self._ops)
        self._ops.clear()
        self._undo_log.clear()
        self._written.clear()
        self._savepoints.clear()
        self._state.mark_aborted()
        self._discharge()
        self._release_row_locks()

    def _release_row_locks(self) -> None:
        """Drop this transaction's row lock table entries (it has ended, so they already
        block no one: the tables skip finished holders)."""
        locked, self._locked = self._locked, {}
        self._lock_ops = []
        self._lock_log = []
        for tablet, keys in locked.values():
            tablet.release_row_locks(self._state, keys)

    def refuse_if_queued(self, tablet_id: TabletId, key: bytes) -> None:
        """Under ``refuse_wait``, refuse at once to write a row other transactions wait in
        line for, unless this one wrote or locked it: the write would find the row locked
        and refuse anyway, after reading it and computing its new values for nothing (on a
        hot row, most of the event loop's time)."""
        if self.refuse_wait is None or not self._pipeline.row_locks.has_line((tablet_id, key)):
            return
        for held in (self._written, self._locked):
            entry = held.get(tablet_id)
            if entry is not None and key in entry[1]:
                return
        self.refuse_wait()

    def _waiter(self, tablet_id: TabletId) -> Callable[[TxnState, bytes], None]:
        return lambda holder, key: self._wait_for((tablet_id, key), holder)

    def _wait_for(self, row: RowId, holder: TxnState) -> None:
        """Wait in ``row``'s line until it is this transaction's turn and ``holder`` has
        finished, unless that would deadlock or time out.  Returns early when the turn comes
        (the row may have a new holder by then: the tablet retries and calls again)."""
        if self.refuse_wait is not None:
            self.refuse_wait()
        pipeline = self._pipeline
        for other in [r for r in self._tickets if r != row]:
            pipeline.row_locks.leave(self._tickets.pop(other))
        ticket = self._tickets.get(row)
        if ticket is None:
            ticket = self._tickets[row] = pipeline.row_locks.join(row, self._state)
        was_head = ticket.is_head
        waiting = self._waiting
        if waiting is None or waiting[0] != row:
            waiting = (row, holder, time.monotonic(), 0)
        elif waiting[1] is not holder:
            waiting = (row, holder, waiting[2], 0)
        self._waiting = waiting
        since, seen = waiting[2], waiting[3]
        acquired = False
        try:
            pipeline.waits_for.add_wait(self._state, holder)
            try:
                timeout_ms = self.lock_timeout_ms
                if timeout_ms is None:
                    timeout_ms = pipeline.options.lock_timeout_ms
                deadline = since + timeout_ms / 1000 if timeout_ms else None
                while True:
                    wait_s = _LOCK_WAIT_SLICE_S
                    if deadline is not None:
                        wait_s = max(0.0, min(wait_s, deadline - time.monotonic()))
                    if was_head:
                        # Also when the holder gives rows up early (ROLLBACK TO SAVEPOINT), or
                        # did after the tablet looked: the tablet then looks again.
                        ended = holder.wait_progress(wait_s)
                        if ended and holder.commit_ts is not None:
                            # The holder is stamped committed (waking us) just before its
                            # commit reaches safe time: a re-read at a snapshot taken in
                            # between would miss its write, conflict again and loop.
                            pipeline.mvcc.wait_for_safe_time(holder.commit_ts)
                        if ended or holder.early_releases != seen:
                            self._waiting = (row, holder, since, holder.early_releases)
                            acquired = True
                            return
                    elif ticket.wait_turn(wait_s):
                        acquired = True
                        return
                    if self.cancel_check is not None:
                        self.cancel_check()
                    if deadline is not None and time.monotonic() >= deadline:
                        raise LockNotAvailable("canceling statement due to lock timeout")
            finally:
                pipeline.waits_for.remove_wait(self._state)
                if self.on_wait_end is not None:
                    self.on_wait_end(acquired)
        except BaseException as exc:
            self._leave_lines()
            if isinstance(exc, DbError) and not self._savepoints:
                self.rollback()
            raise

    def _leave_lines(self) -> None:
        self._waiting = None
        tickets, self._tickets = self._tickets, {}
        for ticket in tickets.values():
            self._pipeline.row_locks.leave(ticket)

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
