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

Then the tablet metadata is replaced, naming the new files and
``flushed_ts = S``; only then is the new MemRowSet swapped in.  The tablet
lock is held throughout, so writers wait and scans see before or after.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from sortedcontainers import SortedDict

from storage.row_change import Row, apply_mutation
from storage.schema import Schema
from storage.tablet.diskrowset import DiskRowSet, FlushRow, rowset_dir_name, write_rowset
from storage.tablet.memrowset import MemRowSet
from storage.timestamp import Timestamp

log = logging.getLogger(__name__)


def flush_tablet(tablet, snapshot: Timestamp, history_cutoff: int) -> bool:  # noqa: ANN001
    """Flush ``tablet`` at ``snapshot``; return whether anything was written."""
    with tablet.lock:
        old = tablet.memrowset
        kept: SortedDict = SortedDict()
        rows: list[FlushRow] = []
        for key, row in old._rows.items():
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
        for rowset in tablet.rowsets:
            if rowset.flush_deltas(snapshot, fsync=tablet._options.fsync) is not None:
                wrote = True
        new_rowset = None
        if rows:
            rowset_id = tablet.next_rowset_id
            meta = write_rowset(
                tablet.directory,
                rowset_id,
                tablet.schema,
                rows,
                int(snapshot),
                fsync=tablet._options.fsync,
            )
            new_rowset = DiskRowSet(tablet.directory, tablet.schema, meta)
            for rowid, flushed in enumerate(rows):
                for mutation in flushed.redo:
                    new_rowset.dms.append(rowid, mutation)
            tablet.rowsets = [*tablet.rowsets, new_rowset]
            tablet.next_rowset_id = rowset_id + 1
            wrote = True
        previous_ts = tablet.flushed_ts
        tablet.flushed_ts = Timestamp(max(int(snapshot), int(previous_ts)))
        tablet.write_metadata()
        memrowset = MemRowSet(tablet.schema, tablet.lock)
        memrowset._rows = kept
        tablet._memrowset = memrowset
        tablet.memrowset_bytes = 0
        log.info(
            "flushed tablet %s at %s: %d rows to %s, %d kept in memory",
            tablet.tablet_id,
            int(snapshot),
            len(rows),
            rowset_dir_name(new_rowset.rowset_id) if new_rowset else "no rowset",
            len(kept),
        )
        return wrote


def remove_unnamed_files(tablet_dir: Path, doc: dict, schema: Schema, *, fsync: bool) -> None:
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
