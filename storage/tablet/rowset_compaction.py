"""Merging rowset compaction: several DiskRowSets rewritten as one, in key order, with their history.

Rowids change, so concurrent mutations need care (Kudu's compaction.txt).  Ours
is an equivalent of Kudu's two-phase scheme that blocks writers only for the
swap:

1. **merge** (no tablet lock; the caller holds the maintenance lock, so no
   flush or other compaction changes the inputs' files): each input's REDO
   files are folded into its base (``delta_compaction.fold``), giving every
   row's state after the newest flushed change plus UNDO records for its
   history; rows dead there with no UNDO record newer than the history cutoff
   are dropped (history GC: deleted rows disappear, an all-deleted input
   leaves nothing); the survivors are sorted by key and written as a new
   DiskRowSet with the UNDO records remapped to the new rowids.
2. **swap** (tablet lock): every mutation not in those files lives in an
   input's DeltaMemStore (nothing flushed them meanwhile); each chain moves,
   as the same list, to the output's DeltaMemStore at the row's new rowid, so
   committed and provisional writes alike carry over and none is lost.  A
   chain on a dropped row can only start with a REINSERT; it becomes a
   MemRowSet row.  Then the output replaces the inputs.

Scans that began before the swap keep reading the inputs, whose files stay
readable (memory-mapped) until the last reader lets go.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.row_change import MutationKind, from_storage_values
from storage.schema import ColumnSchema, Schema
from storage.tablet.delta_compaction import fold
from storage.tablet.delta_records import DeltaRecords
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.memrowset import MemRowSet, MemRowSetRow
from storage.tablet.rowset_files import rowset_dir_name
from storage.tablet.rowset_writer import write_rowset_columns


class _BaseColumns:
    """One input's whole base columns, read once each on demand."""

    def __init__(self, rowset: DiskRowSet) -> None:
        self._rowset = rowset
        self._readers = rowset.column_readers
        self._cache: dict[int, pa.Array] = {}

    def __call__(self, column: ColumnSchema) -> pa.Array:
        if column.id not in self._cache:
            reader = self._readers.get(column.id)
            self._cache[column.id] = (
                reader.read_all()
                if reader is not None
                else from_storage_values([column.read_default] * self._rowset.rows, column.type)
            )
        return self._cache[column.id]


@dataclass(frozen=True, slots=True)
class MergeOutput:
    """Phase 1's result: the new rowset's metadata entry (None when no row survived) and,
    per input, its old rowid -> new rowid (-1: dropped) and its keys."""

    meta: dict[str, Any] | None
    mappings: list[np.ndarray]
    keys: list[pa.Array]
    bytes_read: int
    bytes_written: int
    rows_dropped: int


def merge_rowsets(
    tablet_dir: Path,
    rowset_id: int,
    schema: Schema,
    inputs: list[DiskRowSet],
    snapshot: int,
    history_cutoff: int,
    *,
    fsync: bool,
) -> MergeOutput:
    """Phase 1: write ``inputs`` merged as DiskRowSet ``rowset_id``."""
    columns: list[list[pa.Array]] = [[] for _ in schema.columns]
    keys_kept: list[pa.Array] = []
    deleted_kept: list[np.ndarray] = []
    undo_parts: list[DeltaRecords] = []
    mappings: list[np.ndarray] = []
    all_keys: list[pa.Array] = []
    bytes_read = 0
    offset = 0
    dropped = 0
    for rowset in inputs:
        bytes_read += rowset.size_bytes
        base = _BaseColumns(rowset)
        records = DeltaRecords.concat([d.all_records() for d in rowset.redo], schema).sorted()
        folded = fold(schema, records, base, rowset.deleted)
        history = DeltaRecords.concat(
            [*(d.all_records() for d in rowset.undo), folded.undo], schema
        )
        history = history.where(history.ts > history_cutoff)
        keep = ~folded.deleted
        keep[history.rowid] = True
        kept = np.flatnonzero(keep)
        dropped += rowset.rows - len(kept)
        mapping = np.full(rowset.rows, -1, np.int64)
        mapping[kept] = offset + np.arange(len(kept))
        mappings.append(mapping)
        keys = rowset.keys()
        all_keys.append(keys)
        selection = pa.array(kept)
        keys_kept.append(keys.take(selection))
        deleted_kept.append(folded.deleted[kept])
        for idx, column in enumerate(schema.columns):
            values = folded.columns.get(column.id)
            columns[idx].append((values if values is not None else base(column)).take(selection))
        undo_parts.append(
            DeltaRecords(
                mapping[history.rowid],
                history.ts,
                history.live,
                history.columns,
            )
        )
        offset += len(kept)
    if offset == 0:
        return MergeOutput(None, mappings, all_keys, bytes_read, 0, dropped)
    keys = pa.concat_arrays(keys_kept)
    order = pc.sort_indices(keys).to_numpy()
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order))
    mappings = [np.where(m >= 0, position[np.maximum(m, 0)], -1) for m in mappings]
    take = pa.array(order)
    arrays = [pa.concat_arrays(parts).take(take) for parts in columns]
    deleted = np.concatenate(deleted_kept)[order]
    undo = DeltaRecords.concat(undo_parts, schema)
    undo = DeltaRecords(position[undo.rowid], undo.ts, undo.live, undo.columns)
    meta = write_rowset_columns(
        tablet_dir,
        rowset_id,
        schema,
        arrays,
        keys.take(take),
        deleted,
        undo,
        snapshot,
        fsync=fsync,
    )
    written = sum(p.stat().st_size for p in (tablet_dir / rowset_dir_name(rowset_id)).iterdir())
    return MergeOutput(meta, mappings, all_keys, bytes_read, written, dropped)


def carry_mutations(
    inputs: list[DiskRowSet], out: MergeOutput, output: DiskRowSet | None, memrowset: MemRowSet
) -> None:
    """Phase 2 (caller holds the tablet lock): move every input's DeltaMemStore chains to
    the output at the rows' new rowids; a chain on a dropped row becomes a MemRowSet row."""
    for rowset, mapping, keys in zip(inputs, out.mappings, out.keys, strict=True):
        for rowid, chain in list(rowset.dms.chains.items()):
            if not chain:
                continue
            new = int(mapping[rowid])
            if new >= 0:
                assert output is not None, "a kept row has an output"
                output.dms.adopt(new, chain)
                continue
            first = chain[0]
            assert first.kind is MutationKind.REINSERT and first.change is not None, (
                "a dropped row was dead, so its next change re-inserts it"
            )
            row = MemRowSetRow(first.txn, first.change)
            row.mutations = list(chain[1:])
            memrowset.adopt(keys[rowid].as_py(), row)


def remove_rowset_dirs(inputs: list[DiskRowSet]) -> None:
    """Remove the replaced inputs' directories (after the metadata stopped naming them)."""
    for rowset in inputs:
        shutil.rmtree(rowset.directory, ignore_errors=True)
