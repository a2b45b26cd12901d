"""Flush: a tablet's MemRowSet written out as a DiskRowSet, and its DeltaMemStores as REDO files.

A flush runs at a snapshot S (a safe time, so every commit at or below S is
applied and every later one is stamped above S) and keeps history back to a
cutoff C = S - history_max_age:

- a MemRowSet row whose insert committed at or below S leaves for the new
  DiskRowSet: its base is its state at S; each change it went through after C
  becomes an UNDO record holding the row's before-image; its entries above S
  or still provisional move, as they are, to the new rowset's DeltaMemStore.
  A row deleted at S with no history after C is dropped (ghost collection);
- a row inserted above S, or by a transaction still open, stays in a new
  MemRowSet with its whole chain;
- each DiskRowSet's DeltaMemStore writes its mutations committed at or below
  S as a REDO delta file.

The flush hands back what it built (``FlushResult``); the tablet adds the
new DiskRowSet, replaces its metadata, naming the new files and
``flushed_ts = S``, and only then swaps in the new MemRowSet.  The tablet
lock is held throughout, so writers wait and scans see before or after.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortedcontainers import SortedDict

from storage.row_change import Row, apply_mutation
from storage.schema import Schema
from storage.tablet.diskrowset import DiskRowSet, FlushRow, rowset_dir_name, write_rowset
from storage.tablet.memrowset import MemRowSet
from storage.timestamp import Timestamp

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FlushResult:
    """What a flush built, for the tablet to swap in under its lock."""

    memrowset: MemRowSet
    """The rows that stay in memory: inserted above the snapshot, or still provisional."""
    new_rowset: DiskRowSet | None
    """The DiskRowSet the flushed rows went to; None when no row left the MemRowSet."""
    flushed_rows: int
    wrote: bool
    """Whether any file was written: a new DiskRowSet or a REDO delta file."""


def flush_memrowset(
    memrowset: MemRowSet,
    rowsets: list[DiskRowSet],
    directory: Path,
    schema: Schema,
    rowset_id: int,
    snapshot: Timestamp,
    history_cutoff: int,
    *,
    fsync: bool,
) -> FlushResult:
    """Write ``memrowset``'s rows committed at or below ``snapshot`` as DiskRowSet
    ``rowset_id`` and each of ``rowsets``' DeltaMemStores as a REDO file; the caller holds the
    tablet lock, and swaps in what this returns before naming it in the metadata."""
    kept: SortedDict = SortedDict()
    rows: list[FlushRow] = []
    for key, row in memrowset.entries():
        ts0 = row.txn.commit_ts
        if ts0 is None or ts0 > snapshot:
            kept[key] = row
            continue
        values: Row | None = row.values
        last_live: Row = row.values
        undo: list[tuple[int, Row | None]] = [(int(ts0), None)] if ts0 > history_cutoff else []
        cut = 0
        for mutation in row.mutations:
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
        suffix = row.mutations[cut:]
        if values is None and not undo and not suffix:
            continue
        rows.append(
            FlushRow(
                key,
                values if values is not None else last_live,
                values is not None,
                undo,
                suffix,
            )
        )
    wrote = False
    for rowset in rowsets:
        if rowset.flush_deltas(snapshot, fsync=fsync) is not None:
            wrote = True
    new_rowset = None
    if rows:
        meta = write_rowset(directory, rowset_id, schema, rows, int(snapshot), fsync=fsync)
        new_rowset = DiskRowSet(directory, schema, meta)
        for rowid, flushed in enumerate(rows):
            for mutation in flushed.redo:
                new_rowset.dms.append(rowid, mutation)
        wrote = True
    return FlushResult(memrowset.with_entries(kept), new_rowset, len(rows), wrote)


def log_flush(tablet_id: int, snapshot: Timestamp, result: FlushResult) -> None:
    """Log a flush once the tablet has swapped its result in."""
    log.info(
        "flushed tablet %s at %s: %d rows to %s, %d kept in memory",
        tablet_id,
        int(snapshot),
        result.flushed_rows,
        rowset_dir_name(result.new_rowset.rowset_id) if result.new_rowset else "no rowset",
        len(result.memrowset),
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
            known = {d["file"] for d in (*meta["undo"], *meta["redo"])}
            for item in path.iterdir():
                is_delta = item.name.startswith(("undo-", "redo-"))
                if (is_delta and item.name not in known) or item.name.endswith(".tmp"):
                    log.warning("removing %s: a delta file written during a crash", item)
                    item.unlink()
