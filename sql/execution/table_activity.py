"""TableActivity: the counters behind pg_stat_database and pg_stat_user_tables.

Counters are kept per tablet (a table's are the sum over its tablets, so
nothing here needs the catalog) and per database, and each is bumped once
per scan or per transaction, never per row: a scan adds its row count when it
ends; a transaction's writes are tallied from its write log (one entry per
batch written) when it commits or rolls back.  As in PostgreSQL, ``n_tup_ins``
/ ``upd`` / ``del`` count rows written whether or not the transaction then
committed, while the live-row estimate moves only with committed writes:
it starts, when a tablet is first counted, from what its storage holds
(rows in DiskRowSets not deleted in their base data, plus the MemRowSet's),
an estimate as PostgreSQL's is.  The counters live in memory and start again
with the server.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields

from storage.commit_record import OpKind, WriteOp
from storage.data_type import TabletId

_TALLIED = {OpKind.INSERT: 0, OpKind.UPDATE: 1, OpKind.DELETE: 2}
"""The write kinds a transaction's tally counts, by column: inserted, updated, deleted."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(slots=True)
class TabletCounters:
    """One tablet's scans and writes since the counters were last reset."""

    seq_scan: int = 0
    seq_tup_read: int = 0
    idx_scan: int = 0
    idx_tup_fetch: int = 0
    n_tup_ins: int = 0
    n_tup_upd: int = 0
    n_tup_del: int = 0
    live_rows: int = 0
    """The storage's count when first counted, plus committed inserts, minus deletes."""
    dead_rows: int = 0
    """Row versions committed updates and deletes (and rolled-back inserts) left behind
    since the storage last reported (``storage_synced``)."""
    maintenance_runs: int = 0
    """How many flushes and compactions of the tablet the storage had done then."""
    n_mod_since_analyze: int = 0
    n_ins_since_vacuum: int = 0
    last_vacuum: dt.datetime | None = None
    vacuum_count: int = 0
    last_analyze: dt.datetime | None = None
    analyze_count: int = 0

    def add(self, other: TabletCounters) -> None:
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, int):
                setattr(self, f.name, mine + theirs)
            elif theirs is not None and (mine is None or theirs > mine):
                setattr(self, f.name, theirs)

    def copy(self) -> TabletCounters:
        out = TabletCounters()
        out.add(self)
        return out


@dataclass(slots=True)
class DatabaseCounters:
    """What pg_stat_database counts that no tablet does."""

    xact_commit: int = 0
    xact_rollback: int = 0
    blocks_read: int = 0
    sessions: int = 0
    sessions_killed: int = 0
    session_time_ms: float = 0.0
    """Of the sessions that have ended; the live ones' are added when read."""
    active_time_ms: float = 0.0
    stats_reset: dt.datetime = field(default_factory=_now)


class TableActivity:
    """The database's activity counters; thread-safe."""

    def __init__(self, estimate_live: Callable[[TabletId], int] = lambda tablet_id: 0) -> None:
        self._estimate_live = estimate_live
        self._lock = threading.Lock()
        self._tablets: dict[TabletId, TabletCounters] = {}
        self.database = DatabaseCounters()

    def _tablet(self, tablet_id: TabletId) -> TabletCounters:
        counters = self._tablets.get(tablet_id)
        if counters is None:
            live = self._estimate_live(tablet_id)
            counters = self._tablets[tablet_id] = TabletCounters(live_rows=live)
        return counters

    def scanned(self, tablet_id: TabletId, by_key: bool, rows: int, blocks: int) -> None:
        """One scan of a tablet ended, having returned ``rows`` and read ``blocks``."""
        with self._lock:
            counters = self._tablet(tablet_id)
            if by_key:
                counters.idx_scan += 1
                counters.idx_tup_fetch += rows
            else:
                counters.seq_scan += 1
                counters.seq_tup_read += rows
            self.database.blocks_read += blocks

    def transaction_ended(
        self, ops: Iterable[WriteOp], committed: bool, session: SessionActivity | None = None
    ) -> None:
        """Tally a transaction's writes (its write log, one entry per batch), with what
        ``session`` gathered since it last handed over (under the same lock)."""
        tally: dict[TabletId, list[int]] = {}
        for op in ops:
            column = _TALLIED.get(op.kind)
            if column is not None:
                counts = tally.get(op.tablet_id)
                if counts is None:
                    counts = tally[op.tablet_id] = [0, 0, 0]
                counts[column] += op.batch.num_rows
        with self._lock:
            if session is not None:
                self._take(session)
            if committed:
                self.database.xact_commit += 1
            else:
                self.database.xact_rollback += 1
            for tablet_id, (inserted, updated, deleted) in tally.items():
                counters = self._tablets.get(tablet_id)
                if counters is None:
                    counters = self._tablet(tablet_id)
                    # The storage's count already holds this transaction's inserted rows.
                    counters.live_rows -= inserted
                counters.n_tup_ins += inserted
                counters.n_tup_upd += updated
                counters.n_tup_del += deleted
                counters.dead_rows += updated + deleted if committed else inserted + updated
                if committed:
                    counters.live_rows += inserted - deleted
                    counters.n_mod_since_analyze += inserted + updated + deleted
                    counters.n_ins_since_vacuum += inserted

    def reads_ended(self, session: SessionActivity | None) -> None:
        """A transaction that wrote nothing committed: ``transaction_ended`` without a write
        log to tally."""
        with self._lock:
            if session is not None:
                self._take(session)
            self.database.xact_commit += 1

    def add(self, session: SessionActivity) -> None:
        """Take what ``session`` gathered since it last handed over."""
        with self._lock:
            self._take(session)

    def _take(self, session: SessionActivity) -> None:
        """Add what ``session`` gathered and clear it there (``SessionActivity.clear``)."""
        scans = session.scans
        if scans:
            for tablet_id, (seq, seq_rows, idx, idx_rows) in scans.items():
                counters = self._tablets.get(tablet_id) or self._tablet(tablet_id)
                counters.seq_scan += seq
                counters.seq_tup_read += seq_rows
                counters.idx_scan += idx
                counters.idx_tup_fetch += idx_rows
            scans.clear()
        database = self.database
        database.blocks_read += session.blocks_read
        database.active_time_ms += session.active_time_ms
        session.blocks_read = 0
        session.active_time_ms = 0.0
        session.pending = False

    def maintained(self, tablet_ids: Iterable[TabletId], kind: str) -> None:
        """VACUUM or ANALYZE (``kind``) ran on these tablets' table."""
        now = _now()
        with self._lock:
            for tablet_id in tablet_ids:
                counters = self._tablet(tablet_id)
                if kind == "VACUUM":
                    counters.last_vacuum, counters.n_ins_since_vacuum = now, 0
                    counters.vacuum_count += 1
                else:
                    counters.last_analyze, counters.n_mod_since_analyze = now, 0
                    counters.analyze_count += 1

    def session_started(self) -> None:
        with self._lock:
            self.database.sessions += 1

    def session_ended(self, duration_ms: float, killed: bool) -> None:
        with self._lock:
            self.database.session_time_ms += duration_ms
            self.database.sessions_killed += killed

    def statement_ran(self, elapsed_ms: float) -> None:
        with self._lock:
            self.database.active_time_ms += elapsed_ms

    def storage_synced(self, tablet_id: TabletId, runs: int, dead_rows: Callable[[], int]) -> None:
        """After the storage flushed or compacted the tablet (``runs`` so far), its dead-row
        count is what ``dead_rows()`` says the storage holds."""
        with self._lock:
            counters = self._tablet(tablet_id)
            if counters.maintenance_runs != runs:
                counters.maintenance_runs = runs
                counters.dead_rows = dead_rows()

    def table(self, tablet_ids: Iterable[TabletId]) -> TabletCounters:
        """The sum over a table's tablets (each counted from now on if it was not yet)."""
        total = TabletCounters()
        with self._lock:
            for tablet_id in tablet_ids:
                total.add(self._tablet(tablet_id))
        return total

    def totals(self) -> tuple[TabletCounters, DatabaseCounters]:
        """Every tablet's counters summed, and the database's (copies)."""
        total = TabletCounters()
        with self._lock:
            for counters in self._tablets.values():
                total.add(counters)
            database = dataclasses.replace(self.database)
        return total, database

    def reset(self, tablet_ids: Iterable[TabletId] | None = None) -> None:
        """pg_stat_reset() (None: all counters) or pg_stat_reset_single_table_counters()."""
        with self._lock:
            if tablet_ids is None:
                self._tablets.clear()
                self.database = DatabaseCounters()
                return
            for tablet_id in tablet_ids:
                self._tablets.pop(tablet_id, None)


class SessionActivity:
    """One session's scans and statement time, gathered without a lock and handed to the
    database's ``TableActivity`` under one, with the write tally, when its transaction ends
    (``transaction_ended``), and after a statement that ends outside one (``hand_over``):
    so a view read after a transaction or statement ended shows it, as PostgreSQL's
    statistics show a transaction's counts once it ended.  Only its own session (one
    thread at a time) touches it."""

    __slots__ = ("_activity", "active_time_ms", "blocks_read", "pending", "scans")

    def __init__(self, activity: TableActivity) -> None:
        self._activity = activity
        self.scans: dict[TabletId, list[int]] = {}
        """Per tablet: seq_scan, seq_tup_read, idx_scan, idx_tup_fetch."""
        self.blocks_read = 0
        self.active_time_ms = 0.0
        self.pending = False

    def scanned(self, tablet_id: TabletId, by_key: bool, rows: int, blocks: int) -> None:
        """``TableActivity.scanned``, gathered here."""
        counts = self.scans.get(tablet_id)
        if counts is None:
            counts = self.scans[tablet_id] = [0, 0, 0, 0]
        if by_key:
            counts[2] += 1
            counts[3] += rows
        else:
            counts[0] += 1
            counts[1] += rows
        self.blocks_read += blocks
        self.pending = True

    def statement_ran(self, elapsed_ms: float) -> None:
        self.active_time_ms += elapsed_ms
        self.pending = True

    def transaction_ended(self, ops: Iterable[WriteOp], committed: bool) -> None:
        self._activity.transaction_ended(ops, committed, self if self.pending else None)

    def reads_ended(self) -> None:
        """A transaction that wrote nothing committed (``TableActivity.reads_ended``)."""
        self._activity.reads_ended(self if self.pending else None)

    def hand_over(self) -> None:
        """Hand what was gathered to the database's counters now."""
        if self.pending:
            self._activity.add(self)

    def clear(self) -> None:
        self.scans.clear()
        self.blocks_read = 0
        self.active_time_ms = 0.0
        self.pending = False
