"""Delta compactions of one DiskRowSet: minor (merge REDO files) and major (fold REDOs into base).

Both keep rowids, so they run beside writers and readers (kudu-tablet-design.txt,
"Delta Compactions"): the work reads immutable files and writes new ones with
no lock; the caller names the outputs in the tablet metadata and then swaps
them in under the tablet lock.

- **Minor**: every REDO file becomes one, so a read consults one store
  instead of many.  Records are kept as they are (history needs them).
- **Major**: the REDO records are applied to the base data of the columns
  they set, and only those columns' files are rewritten (plus the deleted
  bitmap when a row's liveness changed).  Each folded record becomes an UNDO
  record holding what it replaced, so time travel still sees the past; UNDO
  records at or below the history cutoff are dropped, as are UNDO files that
  hold nothing newer (history GC).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType
from storage.cfile.reader import CFileReader
from storage.cfile.writer import write_cfile
from storage.data_type import BOOL, ColumnId
from storage.fs import fsync_dir
from storage.row_change import from_storage_values
from storage.schema import ColumnSchema, Schema
from storage.tablet.delta_apply import resolve_column, resolve_live, scatter
from storage.tablet.delta_file import DeltaFile, write_delta_file
from storage.tablet.delta_records import DEAD, KEEP, LIVE, ColumnDelta, DeltaRecords


@dataclass(frozen=True, slots=True)
class CompactionOutput:
    """What a delta compaction wrote: the rowset's next metadata entry, and its cost."""

    meta: dict[str, Any]
    obsolete: list[str]
    """Files of the rowset the new metadata no longer names (removed after the swap)."""
    bytes_read: int
    bytes_written: int


def _write_delta(
    directory: Path, name: str, records: DeltaRecords, *, fsync: bool
) -> dict[str, Any]:
    tmp = directory / (name + ".tmp")
    info = write_delta_file(tmp, records, fsync=fsync)
    os.replace(tmp, directory / name)
    return {**info.to_json(), "file": name}


def minor_compaction(
    directory: Path,
    schema: Schema,
    meta: dict[str, Any],
    redo: tuple[DeltaFile, ...],
    *,
    fsync: bool,
) -> CompactionOutput:
    """Merge the REDO files ``redo`` (at least two) into one."""
    records = DeltaRecords.concat([d.all_records() for d in redo], schema)
    generation = meta["next_delta"]
    doc = _write_delta(directory, f"redo-{generation}.delta", records, fsync=fsync)
    if fsync:
        fsync_dir(directory)
    merged = {d.path.name for d in redo}
    kept = [d for d in meta["redo"] if d["file"] not in merged]
    new_meta = {**meta, "redo": [doc, *kept], "next_delta": generation + 1}
    return CompactionOutput(new_meta, sorted(merged), sum(d.size_bytes for d in redo), doc["bytes"])


def undo_of(records: DeltaRecords, before: dict[ColumnId, ColumnDelta]) -> DeltaRecords:
    """UNDO records for folded REDO ``records`` (sorted): same rowids and timestamps,
    liveness inverted, and per column the value each record replaced (``before``)."""
    live = records.live.copy()
    live[records.live == DEAD] = LIVE
    live[records.live == LIVE] = DEAD
    return DeltaRecords(records.rowid, records.ts, live, before)


@dataclass(frozen=True, slots=True)
class Folded:
    """Base data with REDO records applied: the columns they changed, liveness, and the
    UNDO records of what they replaced."""

    columns: dict[ColumnId, pa.Array]
    deleted: np.ndarray
    liveness_changed: bool
    undo: DeltaRecords


BaseColumn = Callable[[ColumnSchema], pa.Array]


def fold(schema: Schema, records: DeltaRecords, base: BaseColumn, deleted: np.ndarray) -> Folded:
    """Apply REDO ``records`` (sorted by rowid, ts) to base data; ``base(column)`` gives a
    column's whole base array, asked only for the columns some record sets."""
    touched = np.unique(records.rowid)
    any_reinsert = bool((records.live == LIVE).any())
    before: dict[ColumnId, ColumnDelta] = {}
    columns: dict[ColumnId, pa.Array] = {}
    for column in schema.columns:
        if column.id not in records.columns and not any_reinsert:
            continue
        delta = records.column(column)
        if not delta.is_set.any():
            continue
        values = base(column)
        setters = np.flatnonzero(delta.is_set)
        rowids = records.rowid[setters]
        same = np.zeros(len(setters), bool)
        same[1:] = rowids[1:] == rowids[:-1]
        m = len(setters)
        combined = pa.concat_arrays(
            [
                delta.values.take(pa.array(setters)).cast(values.type),
                values.take(pa.array(rowids)),
            ]
        )
        replaced = combined.take(pa.array(np.where(same, np.arange(m) - 1, m + np.arange(m))))
        before[column.id] = ColumnDelta(
            delta.is_set, scatter(pa.nulls(len(records), values.type), setters, replaced)
        )
        current = resolve_column(
            touched, values.take(pa.array(touched)), column, records, DeltaRecords.empty()
        )
        columns[column.id] = scatter(values, touched, current)
    liveness_changed = bool((records.live != KEEP).any())
    new_deleted = deleted
    if liveness_changed:
        live = resolve_live(touched, ~deleted[touched], records, DeltaRecords.empty())
        new_deleted = deleted.copy()
        new_deleted[touched] = ~live
    return Folded(columns, new_deleted, liveness_changed, undo_of(records, before))


def major_compaction(
    directory: Path,
    schema: Schema,
    meta: dict[str, Any],
    redo: tuple[DeltaFile, ...],
    base_columns: dict[ColumnId, CFileReader],
    deleted: np.ndarray,
    block_rows: int,
    history_cutoff: int,
    *,
    fsync: bool,
) -> CompactionOutput:
    """Fold every REDO file into new base data for the columns they set; ``base_columns``
    maps column id to its CFileReader (a column without one reads its default)."""
    records = DeltaRecords.concat([d.all_records() for d in redo], schema).sorted()
    bytes_read = sum(d.size_bytes for d in redo)
    generation = meta["next_delta"]
    column_files = dict(meta.get("column_files", {}))
    written_columns = list(meta.get("columns", [c.id for c in schema.columns]))
    obsolete: list[str] = []
    bytes_written = 0

    def base(column: ColumnSchema) -> pa.Array:
        nonlocal bytes_read
        reader = base_columns.get(column.id)
        if reader is None:
            return from_storage_values([column.read_default] * len(deleted), column.type)
        bytes_read += reader.size_bytes
        return reader.read_all()

    folded = fold(schema, records, base, deleted)
    for column_id, new_base in folded.columns.items():
        column = schema.column(column_id)
        name = f"col-{column.id}.{generation}.cfile"
        bytes_written += write_cfile(
            directory / name,
            new_base,
            column.type,
            EncodingType(column.encoding),
            CompressionType(column.compression),
            fsync=fsync,
            block_rows=block_rows,
        )
        if column.id in base_columns:
            obsolete.append(column_files.get(str(column.id), f"col-{column.id}.cfile"))
        column_files[str(column.id)] = name
        if column.id not in written_columns:
            written_columns.append(column.id)
    new_meta: dict[str, Any] = {**meta, "column_files": column_files, "columns": written_columns}
    if folded.liveness_changed:
        name = f"deleted.{generation}.cfile"
        bytes_written += write_cfile(
            directory / name,
            pa.array(folded.deleted),
            BOOL,
            EncodingType.RLE,
            fsync=fsync,
            block_rows=block_rows,
        )
        obsolete.append(meta.get("deleted_file", "deleted.cfile"))
        new_meta["deleted_file"] = name
    undo_records = folded.undo.where(folded.undo.ts > history_cutoff)
    undo_docs = [d for d in meta["undo"] if d["max_ts"] > history_cutoff]
    obsolete += [d["file"] for d in meta["undo"] if d["max_ts"] <= history_cutoff]
    if len(undo_records):
        doc = _write_delta(directory, f"undo-{generation}.delta", undo_records, fsync=fsync)
        bytes_written += doc["bytes"]
        undo_docs.append(doc)
    obsolete += [d.path.name for d in redo]
    redo_names = {d.path.name for d in redo}
    new_meta["undo"] = undo_docs
    new_meta["redo"] = [d for d in meta["redo"] if d["file"] not in redo_names]
    new_meta["next_delta"] = generation + 1
    if fsync:
        fsync_dir(directory)
    return CompactionOutput(new_meta, obsolete, bytes_read, bytes_written)


def undo_gc(meta: dict[str, Any], history_cutoff: int) -> CompactionOutput | None:
    """Drop whole UNDO files holding nothing newer than the history cutoff."""
    old = [d for d in meta["undo"] if d["max_ts"] <= history_cutoff]
    if not old:
        return None
    new_meta = {**meta, "undo": [d for d in meta["undo"] if d["max_ts"] > history_cutoff]}
    return CompactionOutput(new_meta, [d["file"] for d in old], 0, 0)
