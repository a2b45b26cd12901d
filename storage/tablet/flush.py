"""Flush: a tablet's frozen MemRowSet written out as a DiskRowSet, and its DeltaMemStores as REDO files.

A flush runs at a snapshot S (a safe time, so every commit at or below S is
applied and every later one is stamped above S) and keeps history back to a
cutoff C = S - history_max_age.  It goes in three steps, and only the first
and the last hold the tablet lock, briefly; the file I/O holds none:

1. **freeze** (tablet lock): the MemRowSet is frozen and a fresh one takes
   new inserts; the frozen one stays readable and writable (updates,
   deletes and REINSERTs of its keys keep landing in its chains).  Each
   DiskRowSet's DeltaMemStore hands out a copy of its committed prefixes.
2. **write** (no lock): ``plan_flush`` picks, from the frozen rows, those whose
   insert committed at or below S: its base is its state at S, each change
   after C becomes an UNDO record holding the before-image, a row deleted at
   S with no history after C is dropped (ghost collection).  The new
   DiskRowSet and the REDO files are written, fsynced and renamed, then the
   tablet metadata naming them (and ``flushed_ts = S``) replaces the old.
3. **install** (tablet lock): the new DiskRowSet joins the tablet; each
   flushed row's chain entries past S (written before or during the flush)
   move to its DeltaMemStore; the DeltaMemStores drop what their files now
   hold; frozen rows not flushed move back into the live MemRowSet.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from storage.mvcc import TxnState
from storage.row_change import Row, apply_mutation
from storage.schema import Schema
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.insert_segment import InsertSegment
from storage.tablet.memrowset import MemRowSet, MemRowSetRow
from storage.tablet.rowset_files import known_files, rowset_dir_name
from storage.tablet.rowset_writer import FlushRow, write_rowset
from storage.tablet.segment_flush import SegmentPart
from storage.timestamp import Timestamp

log = logging.getLogger(__name__)


@dataclass(slots=True)
class FlushPlan:
    """What step 2 writes: the rows leaving the frozen MemRowSet, and those it keeps."""

    rows: list[FlushRow]
    cuts: list[int]
    """Per flushed row, how many chain entries its base and UNDO records cover."""
    kept: list[tuple[bytes, MemRowSetRow]]
    """Rows inserted above the snapshot or still provisional: they go back to memory."""
    ghosts: list[tuple[bytes, MemRowSetRow, int]]
    """Rows deleted at the snapshot with no history kept: dropped unless written to since."""
    segments: list[tuple[InsertSegment, np.ndarray]] = field(default_factory=list)
    """Segments whose insert committed at or below the snapshot, with their moved marks at
    the freeze: their other rows are flushed as columns."""
    kept_segments: list[tuple[InsertSegment, np.ndarray]] = field(default_factory=list)
    """Segments inserted above the snapshot or still provisional (with their moved marks at
    the freeze): they go back to memory."""
    history_cutoff: int = 0


def plan_flush(
    entries: list[tuple[bytes, MemRowSetRow]],
    snapshot: Timestamp,
    history_cutoff: int,
    segments: Sequence[tuple[InsertSegment, np.ndarray]] = (),
) -> FlushPlan:
    """Split a frozen MemRowSet's entries (key order) and segments (with their moved marks
    at the freeze) at ``snapshot``; needs no lock, as the chains' committed prefixes at or
    below a safe time never change."""
    plan = FlushPlan([], [], [], [], history_cutoff=history_cutoff)
    for segment, moved in segments:
        inserted = segment.txn.commit_ts
        if inserted is None or inserted > snapshot:
            plan.kept_segments.append((segment, moved))
        elif not bool(moved.all()):
            plan.segments.append((segment, moved))
    for key, row in entries:
        ts0 = row.txn.commit_ts
        if ts0 is None or ts0 > snapshot:
            plan.kept.append((key, row))
            continue
        values: Row | None = row.values
        last_live: Row = row.values
        undo: list[tuple[int, Row | None]] = [(int(ts0), None)] if ts0 > history_cutoff else []
        cut = 0
        for mutation in list(row.mutations):
            ts = mutation.txn.commit_ts
            if ts is None or ts > snapshot:
                break
            before = values
            values = apply_mutation(values, mutation)
            if ts > history_cutoff:
                undo.append((int(ts), before))
            if values is not None:
                last_live = values
            cut += 1
        if values is None and not undo:
            plan.ghosts.append((key, row, cut))
            continue
        plan.rows.append(
            FlushRow(key, values if values is not None else last_live, values is not None, undo)
        )
        plan.cuts.append(cut)
    return plan


@dataclass(frozen=True, slots=True)
class InFlightHold:
    """What a flush kept in memory because the transactions that wrote it were still open.

    Counted at full weight, those rows put the tablet straight back over a flush
    threshold: the next flush keeps them again, and a long bulk transaction (Spark's
    JDBC writer commits a task's rows at its end) had every row re-filed into the
    MemRowSet every maintenance tick, quadratic in its size.  While every one of
    ``txns`` is open the thresholds count only the rows since, less as many again as
    were kept, so the kept rows are re-filed a bounded number of times overall.
    """

    txns: frozenset[TxnState]
    rows: int
    """Map rows kept (what the row threshold counts)."""
    nbytes: int

    @classmethod
    def after(cls, plan: FlushPlan, nbytes: int) -> InFlightHold | None:
        """The hold a flush's ``plan`` leaves, or None when a kept row's transaction already
        committed (above the snapshot): the next flush can write it."""
        txns = {row.txn for _, row in plan.kept} | {s.txn for s, _ in plan.kept_segments}
        if not txns or any(t.commit_ts is not None or t.is_done for t in txns):
            return None
        return cls(frozenset(txns), len(plan.kept), nbytes)

    def holding(self) -> bool:
        return not any(t.is_done for t in self.txns)

    def discount(
        self, rows: int, nbytes: int, row_threshold: int, byte_threshold: int
    ) -> tuple[int, int]:
        """(rows, bytes) as the thresholds are to see them: a flush is due once the rows since
        reach the threshold and as many as were kept."""
        return (
            rows - self.rows - max(0, self.rows - row_threshold),
            nbytes - self.nbytes - max(0, self.nbytes - byte_threshold),
        )


@dataclass(frozen=True, slots=True)
class FlushResult:
    """What a flush did, for the log."""

    new_rowset: DiskRowSet | None
    flushed_rows: int
    kept_rows: int
    wrote: bool
    """Whether any file was written: a new DiskRowSet or a REDO delta file."""


def write_flushed_rowset(
    plan: FlushPlan,
    directory: Path,
    schema: Schema,
    rowset_id: int,
    snapshot: Timestamp,
    *,
    fsync: bool,
) -> DiskRowSet | None:
    """Step 2's DiskRowSet (None when no row leaves memory), durable but not yet named."""
    if not plan.rows and not plan.segments:
        return None
    parts = [segment_part(s, moved, plan.history_cutoff) for s, moved in plan.segments]
    meta = write_rowset(
        directory, rowset_id, schema, plan.rows, int(snapshot), fsync=fsync, segments=parts
    )
    return DiskRowSet(directory, schema, meta)


def segment_part(segment: InsertSegment, moved: np.ndarray, history_cutoff: int) -> SegmentPart:
    """The rows of a committed ``segment`` not moved at the freeze, as columns."""
    batch, keys = segment.batch, segment.keys
    if bool(moved.any()):
        batch = batch.filter(pa.array(~moved))
        keys = keys[~moved]
    inserted = segment.txn.commit_ts
    assert inserted is not None, "only a committed segment is flushed"
    return SegmentPart(batch, keys, int(inserted) if inserted > history_cutoff else None)


def install_flushed_rows(
    plan: FlushPlan, frozen: MemRowSet, new_rowset: DiskRowSet | None, live: MemRowSet
) -> None:
    """Step 3 for the rows (caller holds the tablet lock): chain entries past each flushed
    row's cut go to the new rowset's DeltaMemStore; rows not flushed go back to ``live``.
    With segments flushed, rowids are not positions in ``plan.rows``: they are looked up."""
    if new_rowset is not None:
        for position, (flushed, cut) in enumerate(zip(plan.rows, plan.cuts, strict=True)):
            row = frozen.get(flushed.key)
            assert row is not None, "a flushed row's insert committed, so it stays in its MemRowSet"
            later = row.mutations[cut:]
            if later:
                rowid = _rowid(new_rowset, flushed.key) if plan.segments else position
                for mutation in later:
                    new_rowset.dms.append(rowid, mutation)
        for segment, moved in plan.segments:
            # Rows changed during the flush moved to the frozen map: their whole chain is
            # newer than the flushed base.
            for index in np.flatnonzero(segment.moved & ~moved).tolist():
                key = segment.keys[index]
                moved_row = frozen.get(key)
                if moved_row is None:
                    continue
                rowid = _rowid(new_rowset, key)
                for mutation in moved_row.mutations:
                    new_rowset.dms.append(rowid, mutation)
    for segment, moved in plan.kept_segments:
        if frozen.holds_segment(segment):
            live.add_segment(segment)
            for index in np.flatnonzero(segment.moved & ~moved).tolist():
                key = segment.keys[index]
                moved_row = frozen.get(key)
                if moved_row is not None:
                    live.adopt(key, moved_row, moved=True)
    # A scan begun during the flush captured ``frozen`` too, and reads these rows there.
    live.adopt_many([(key, row) for key, row in plan.kept if frozen.get(key) is row])
    for key, row, cut in plan.ghosts:
        if frozen.get(key) is row and len(row.mutations) > cut:
            live.adopt(key, row, moved=True)


def _rowid(rowset: DiskRowSet, key: bytes) -> int:
    rowid = rowset.find(key)
    assert rowid is not None, "a flushed key is in the rowset written from it"
    return rowid


def log_flush(tablet_id: int, snapshot: Timestamp, result: FlushResult) -> None:
    """Log a flush once the tablet has swapped its result in."""
    log.info(
        "flushed tablet %s at %s: %d rows to %s, %d kept in memory",
        tablet_id,
        int(snapshot),
        result.flushed_rows,
        rowset_dir_name(result.new_rowset.rowset_id) if result.new_rowset else "no rowset",
        result.kept_rows,
    )


def remove_unnamed_files(
    tablet_dir: Path, doc: dict[str, Any], schema: Schema, *, fsync: bool
) -> None:
    """Remove rowset directories and delta files a crash left before the metadata named them."""
    named = {rowset_dir_name(m["id"]): m for m in doc.get("rowsets", [])}
    if not tablet_dir.is_dir():
        return
    for path in tablet_dir.iterdir():
        if path.name.startswith("rowset-") and path.is_dir():
            meta = named.get(path.name)
            if meta is None:
                log.warning("removing %s: a rowset written during a crash", path)
                shutil.rmtree(path)
                continue
            known = known_files(meta)
            for item in path.iterdir():
                prefixes = (
                    ("undo-", "redo-", "col-", "deleted")
                    if "columns" in meta
                    else ("undo-", "redo-")
                )
                is_data = item.name.startswith(prefixes)
                if (is_data and item.name not in known) or item.name.endswith(".tmp"):
                    log.warning("removing %s: a file written during a crash or replaced", item)
                    item.unlink()
