"""Converting delta files of tablet metadata format 2 (``.arrow``) to today's ``.delta`` files.

Until format 3, a delta file was an Arrow IPC file of whole-row images sorted
by (rowid, ts): columns ``rowid``, ``ts``, ``live`` and one per schema column
(named by column ID).  An image is exactly a record that sets every column
its file has: ``LIVE`` with those columns when ``live``, else ``DEAD`` (a REDO
image is the row after a change, an UNDO image the row before it, as today).
Columns added after the file was written are not in it and read their
default, as they did.

A data directory written before the change is converted when its tablet is
opened, rather than refused: nothing a user can do would be simpler.  Each
rowset's new files are written (temporary name, fsync, rename) before the
tablet metadata naming them replaces the old one; until that swap the old
metadata and files stand, and the next open converts again (flush.py's
``remove_unnamed_files`` removes half-converted files, and the old files once
nothing names them; ``remove_old_files`` removes them after the swap).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from storage.errors import DataCorrupted
from storage.fs import fsync_dir
from storage.row_change import storage_arrow_type
from storage.schema import Schema
from storage.tablet.delta_file import write_delta_file
from storage.tablet.delta_records import DEAD, LIVE, ColumnDelta, DeltaRecords

log = logging.getLogger(__name__)

OLD_SUFFIX = ".arrow"


def needs_upgrade(doc: dict[str, Any]) -> bool:
    """Whether tablet metadata ``doc`` names any format-2 delta file."""
    return any(
        d["file"].endswith(OLD_SUFFIX)
        for rowset in doc.get("rowsets", [])
        for d in (*rowset["undo"], *rowset["redo"])
    )


def upgrade_delta_files(
    tablet_dir: Path, doc: dict[str, Any], schema: Schema, *, fsync: bool
) -> dict[str, Any]:
    """Write a ``.delta`` file for each ``.arrow`` one ``doc`` names; return the metadata
    naming the new files (the caller writes it, then the old files may go)."""
    rowsets = []
    converted = 0
    for rowset in doc.get("rowsets", []):
        directory = tablet_dir / f"rowset-{rowset['id']}"
        entries = {}
        for kind in ("undo", "redo"):
            kept = []
            for entry in rowset[kind]:
                if entry["file"].endswith(OLD_SUFFIX):
                    converted += 1
                    new = _convert(directory, entry, schema, fsync=fsync)
                    if new is not None:
                        kept.append(new)
                else:
                    kept.append(entry)
            entries[kind] = kept
        if fsync:
            fsync_dir(directory)
        rowsets.append({**rowset, **entries})
    log.info("converted %d delta files in %s to the per-column format", converted, tablet_dir)
    return {**doc, "rowsets": rowsets}


def _convert(
    directory: Path, entry: dict[str, Any], schema: Schema, *, fsync: bool
) -> dict[str, Any] | None:
    """The metadata entry of the converted file (None: the old one held no record)."""
    old = directory / entry["file"]
    try:
        table = pa.ipc.open_file(pa.memory_map(str(old), "r")).read_all()
        rowid = table.column("rowid").to_numpy().astype(np.int64)
        ts = table.column("ts").to_numpy().astype(np.int64)
        live = table.column("live").to_numpy(zero_copy_only=False).astype(bool)
    except (OSError, KeyError, pa.ArrowInvalid) as exc:
        raise DataCorrupted(f"delta file {old} (format 2) is unreadable: {exc}") from exc
    if not len(rowid):
        return None
    columns = {}
    for column in schema.columns:
        name = str(column.id)
        if name in table.column_names:
            values = table.column(name).combine_chunks().cast(storage_arrow_type(column.type))
            columns[column.id] = ColumnDelta(live.copy(), values)
    records = DeltaRecords(rowid, ts, np.where(live, LIVE, DEAD).astype(np.int8), columns)
    name = entry["file"][: -len(OLD_SUFFIX)] + ".delta"
    tmp = directory / (name + ".tmp")
    info = write_delta_file(tmp, records, fsync=fsync)
    os.replace(tmp, directory / name)
    return {**info.to_json(), "file": name}


def remove_old_files(tablet_dir: Path, doc: dict[str, Any]) -> None:
    """Remove the format-2 files once metadata naming their replacements is durable."""
    for rowset in doc.get("rowsets", []):
        for path in (tablet_dir / f"rowset-{rowset['id']}").glob("*" + OLD_SUFFIX):
            path.unlink()
