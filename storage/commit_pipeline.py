"""CommitPipeline: the database-wide machinery a transaction reads and commits through.

A transaction needs, from the database it runs in, the MVCC manager (its
snapshots and commit timestamps), the WAL with its group-commit sync, the
commit lock that keeps timestamps in WAL order, the waits-for graph that finds
row-lock deadlocks, the lines of writers waiting on one row, which live transactions
have written each tablet (so an index build can wait for them), the lock-timeout option,
the history window that bounds
time-travel reads, the log of recent scans, and a hook that flushes tablets
whose MemRowSets grew past the threshold.  The StorageEngine builds one
pipeline and hands it to every transaction, so a transaction never sees the
engine itself.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

from storage.data_type import TabletId
from storage.errors import InvalidParameterValue, SnapshotTooOld
from storage.mvcc import MvccManager, TxnState
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.row_lock_queue import RowLockQueue
from storage.scan_stats import ScanStats
from storage.timestamp import HybridClock, Timestamp, from_micros, to_micros
from storage.waits_for import WaitsForGraph
from storage.wal import Wal

RECENT_SCANS = 256

FlushHook = Callable[[list[TabletId]], None]
"""Called after a commit with the tablets it wrote; flushes those past the size threshold."""


class CommitPipeline:
    """One database's MVCC state, WAL and lock bookkeeping, shared by its transactions."""

    def __init__(
        self, options: StorageOptions, clock: HybridClock, wal: Wal, maybe_flush: FlushHook
    ) -> None:
        self.options = options
        self.clock = clock
        self.wal = wal
        self.mvcc = MvccManager(clock)
        self.waits_for = WaitsForGraph()
        self.row_locks = RowLockQueue()
        """The lines of writers waiting on one row: only the first waits for the holder."""
        self.commit_lock = threading.Lock()
        """Held from taking a commit timestamp to appending the record: timestamps are
        assigned in WAL order, so replay order is commit order."""
        self.maybe_flush = maybe_flush
        self.recent_scans: collections.deque[tuple[TabletId, ScanSpec, ScanStats]] = (
            collections.deque(maxlen=RECENT_SCANS)
        )
        """(tablet id, ScanSpec, ScanStats) of the latest scans, newest last, for a system view;
        a scan's stats keep filling in while it runs."""
        self._writers_lock = threading.Lock()
        self._writers: dict[TabletId, dict[TxnState, object]] = {}

    def enlist_writer(self, tablet_id: TabletId, state: TxnState, txn: object) -> None:
        """Note that ``txn`` (whose fate is ``state``) is about to write ``tablet_id``: once
        per transaction and tablet, before its first write there."""
        with self._writers_lock:
            self._writers.setdefault(tablet_id, {})[state] = txn

    def discharge_writer(self, tablet_ids: list[TabletId], state: TxnState) -> None:
        """The transaction ended: it no longer holds uncommitted writes on ``tablet_ids``."""
        with self._writers_lock:
            for tablet_id in tablet_ids:
                writers = self._writers.get(tablet_id)
                if writers is not None:
                    writers.pop(state, None)
                    if not writers:
                        del self._writers[tablet_id]

    def writers(self, tablet_ids: list[TabletId]) -> list[tuple[TxnState, object]]:
        """The live transactions that have written any of ``tablet_ids``, with their states."""
        with self._writers_lock:
            found = {s: t for i in tablet_ids for s, t in self._writers.get(i, {}).items()}
        return [(s, t) for s, t in found.items() if not s.is_done]

    def history_cutoff(self, now: Timestamp) -> int:
        """The oldest timestamp whose history is still kept, seen from ``now``."""
        micros = to_micros(now) - int(self.options.history_max_age_s * 1_000_000)
        return int(from_micros(max(0, micros)))

    def check_snapshot(self, snapshot: Timestamp) -> None:
        """Refuse a time-travel read older than the history window (72000) or in the future;
        wait until every commit at or below it is applied."""
        now = self.clock.now()
        if snapshot < self.history_cutoff(now):
            raise SnapshotTooOld(
                "snapshot too old",
                detail=f"history is kept for {self.options.history_max_age_s:g} seconds",
            )
        if snapshot > now:
            raise InvalidParameterValue("cannot read a table as of a time in the future")
        self.mvcc.wait_for_safe_time(snapshot)
