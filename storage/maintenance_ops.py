"""The maintenance operations of one tablet, each scored as Kudu scores it.

- ``FlushOp``: MemRowSet and DeltaMemStores to disk.  Scored by memory held:
  past ``flush_threshold_bytes`` it outranks everything; past
  ``flush_threshold_rows`` (unflushed rows are read one by one, so they cost
  scans far more than their memory says; a bulk insert's segment rows are read
  as columns and count only by their bytes) it outranks the compactions; past
  ``flush_threshold_s`` since the first unflushed write (which bounds how
  much WAL the tablet keeps for replay) it runs when nothing else is urgent.
A major delta compaction waits until a rowset's REDO files hold
``delta_compaction_min_bytes``: below that a read of them costs little.

- ``MinorDeltaCompactionOp``: the rowset with the most REDO files, once it has
  ``minor_delta_compaction_min_files``; score (files - 1) / that minimum.
- ``MajorDeltaCompactionOp``: the rowset whose REDO deltas are the largest
  share of its base (Kudu's REDO bytes over base bytes, or REDO records per
  base row, whichever is larger), once that reaches
  ``major_delta_compaction_min_ratio``; score the ratio.
- ``MergingCompactionOp``: the rowsets Kudu's budgeted policy picks
  (compaction_policy.py) within ``compaction_budget_mb``; score its quality,
  the drop in average rowset height (or the share of a mostly-deleted
  rowset's rows it drops).
- ``UndoGcOp``: UNDO files wholly older than the history window; score the
  MiB it frees.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from storage.maintenance_manager import MaintenanceOp, OpResult, OpStats
from storage.options import MIB, StorageOptions
from storage.tablet.tablet import Tablet
from storage.timestamp import Timestamp

_DMS_ROW_BYTES = 150
"""Rough memory of one DeltaMemStore chain entry."""

SafeTime = Callable[[], Timestamp]
HistoryCutoff = Callable[[Timestamp], int]


class TabletOp(MaintenanceOp):
    """An op on one tablet, with the engine's clock and history window."""

    def __init__(
        self,
        tablet: Tablet,
        options: StorageOptions,
        safe_time: SafeTime,
        history_cutoff: HistoryCutoff,
    ) -> None:
        super().__init__(tablet.tablet_id)
        self.tablet = tablet
        self.options = options
        self._safe_time = safe_time
        self._history_cutoff = history_cutoff

    def cutoff(self) -> int:
        return self._history_cutoff(self._safe_time())


class FlushOp(TabletOp):
    kind = "FlushOp"

    def stats(self) -> OpStats:
        tablet = self.tablet
        options = self.options
        mrs_bytes, rows = tablet.flush_pressure(
            options.flush_threshold_rows, options.flush_threshold_bytes
        )
        held = mrs_bytes + _DMS_ROW_BYTES * tablet.delta_memstore_rows
        since = tablet.unflushed_since
        age = 0.0 if since is None else time.monotonic() - since
        why = f"{held / MIB:.1f} MiB in memory, oldest unflushed write {age:.0f} s ago"
        if not held and since is None:
            return OpStats(False, 0.0, "nothing to flush")
        if held >= self.options.flush_threshold_bytes:
            return OpStats(True, 1000.0 + held / MIB, why + " (over the size threshold)")
        if rows >= self.options.flush_threshold_rows:
            return OpStats(
                True,
                100.0 + rows / self.options.flush_threshold_rows,
                why + f", {rows} rows (over the row threshold)",
            )
        if since is not None and age >= self.options.flush_threshold_s:
            return OpStats(True, 10.0 + held / MIB, why + " (over the age threshold)")
        return OpStats(True, 0.0, why)

    def perform(self) -> OpResult:
        snapshot = self._safe_time()
        before = self.tablet.bytes_on_disk()
        wrote = self.tablet.flush(snapshot, self._history_cutoff(snapshot))
        written = max(0, self.tablet.bytes_on_disk() - before)
        return OpResult(0, written, "flushed" if wrote else "nothing was committed to flush")


class MinorDeltaCompactionOp(TabletOp):
    kind = "MinorDeltaCompactionOp"

    def _best(self) -> tuple[int, int] | None:
        counts = [(len(r.redo), r.rowset_id) for r in list(self.tablet.rowsets)]
        return max(counts, default=None)

    def stats(self) -> OpStats:
        best = self._best()
        if best is None or best[0] < 2:
            return OpStats(False, 0.0, "no rowset has two REDO files")
        files, rowset_id = best
        minimum = self.options.minor_delta_compaction_min_files
        # No size gate here: merging small files is cheap, and each file costs every scan
        # and lookup of its rowids a probe, so the count stays bounded by the setting.
        why = f"rowset {rowset_id} has {files} REDO files"
        return OpStats(files >= minimum, (files - 1) / minimum if files >= minimum else 0.0, why)

    def perform(self) -> OpResult:
        best = self._best()
        if best is None:
            return OpResult(detail="nothing to compact")
        out = self.tablet.compact_deltas(best[1], major=False, history_cutoff=self.cutoff())
        if out is None:
            return OpResult(detail="nothing to compact")
        return OpResult(out.bytes_read, out.bytes_written, f"rowset {best[1]}: REDO files merged")


class MajorDeltaCompactionOp(TabletOp):
    kind = "MajorDeltaCompactionOp"

    def _best(self) -> tuple[float, int] | None:
        ratios = []
        for rowset in list(self.tablet.rowsets):
            redo = sum(d.size_bytes for d in rowset.redo)
            if redo >= self.options.delta_compaction_min_bytes:
                # REDO bytes over base bytes (Kudu), or REDO records per base row: what a
                # scan pays to apply them, which narrow updates of wide rows understate.
                records = sum(len(d) for d in rowset.redo) / max(1, rowset.rows)
                ratios.append((max(redo / max(1, rowset.base_bytes), records), rowset.rowset_id))
        return max(ratios, default=None)

    def stats(self) -> OpStats:
        best = self._best()
        if best is None:
            return OpStats(False, 0.0, "no rowset has enough REDO bytes")
        ratio, rowset_id = best
        why = f"rowset {rowset_id}: REDO deltas are {ratio:.2f} of its base (bytes or rows)"
        runnable = ratio >= self.options.major_delta_compaction_min_ratio
        return OpStats(runnable, ratio if runnable else 0.0, why)

    def perform(self) -> OpResult:
        best = self._best()
        if best is None:
            return OpResult(detail="nothing to compact")
        out = self.tablet.compact_deltas(best[1], major=True, history_cutoff=self.cutoff())
        if out is None:
            return OpResult(detail="nothing to compact")
        return OpResult(
            out.bytes_read, out.bytes_written, f"rowset {best[1]}: REDOs folded into base data"
        )


class UndoGcOp(TabletOp):
    kind = "UndoDeltaGCOp"

    def stats(self) -> OpStats:
        cutoff = self.cutoff()
        old = sum(
            d.size_bytes for r in list(self.tablet.rowsets) for d in r.undo if d.max_ts <= cutoff
        )
        if not old:
            return OpStats(False, 0.0, "no UNDO file is past the history window")
        return OpStats(True, old / MIB, f"{old} bytes of UNDO past the history window")

    def perform(self) -> OpResult:
        freed = self.tablet.gc_undo(self.cutoff())
        return OpResult(0, 0, f"freed {freed} bytes of UNDO")


class MergingCompactionOp(TabletOp):
    kind = "CompactRowSetsOp"

    def stats(self) -> OpStats:
        choice = self.tablet.compaction_choice(self.options.compaction_budget_mb, self.cutoff())
        if choice is None:
            return OpStats(False, 0.0, "no rowsets worth merging")
        return OpStats(True, choice.quality, choice.reason)

    def perform(self) -> OpResult:
        snapshot = self._safe_time()
        cutoff = self._history_cutoff(snapshot)
        choice = self.tablet.compaction_choice(self.options.compaction_budget_mb, cutoff)
        if choice is None:
            return OpResult(detail="nothing to merge")
        out = self.tablet.compact_rowsets(choice.rowset_ids, snapshot, cutoff)
        if out is None:
            return OpResult(detail="nothing to merge")
        return OpResult(
            out.bytes_read,
            out.bytes_written,
            f"merged rowsets {choice.rowset_ids}, dropped {out.rows_dropped} deleted rows",
        )


def tablet_ops(
    tablet: Tablet, options: StorageOptions, safe_time: SafeTime, history_cutoff: HistoryCutoff
) -> list[MaintenanceOp]:
    """Every maintenance op of ``tablet``."""
    return [
        kind(tablet, options, safe_time, history_cutoff)
        for kind in (
            FlushOp,
            MinorDeltaCompactionOp,
            MajorDeltaCompactionOp,
            MergingCompactionOp,
            UndoGcOp,
        )
    ]
