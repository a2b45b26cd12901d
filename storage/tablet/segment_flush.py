"""A flush's segment rows: InsertSegments leave the MemRowSet as columns, merged with the map's rows.

The map's rows are transposed into columns one by one (they are Python tuples);
a segment's rows already are columns, so the flush concatenates them with the
map's, sorts the whole run by key once (Arrow), renumbers the UNDO records by
the new rowids, and gives each segment's inserts their UNDO records as one
vectorised set (the row was absent before its insert's commit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.schema import Schema
from storage.tablet.delta_records import DEAD, DeltaRecords


@dataclass(frozen=True, slots=True)
class SegmentPart:
    """A MemRowSet segment's rows leaving it, as columns (insert_segment.py)."""

    batch: pa.RecordBatch
    """The rows, one column per schema column in schema order, ascending by key."""
    keys: np.ndarray
    """Their encoded keys (an object array of bytes)."""
    undo_ts: int | None
    """The insert's commit timestamp when the history window still covers it (each row
    then gets an UNDO record saying it was absent before), else None."""


def merge_segments(
    schema: Schema,
    arrays: list[pa.Array],
    keys: pa.Array,
    deleted: np.ndarray,
    undo: DeltaRecords,
    segments: Sequence[SegmentPart],
) -> tuple[list[pa.Array], pa.Array, np.ndarray, DeltaRecords]:
    """Map rows (``arrays``, ``keys``, ``deleted``, ``undo``) and segment rows as one run
    in key order, with rowids renumbered; vectorised (the segments are the bulk).  Segments
    whose key ranges are disjoint (a load in key order) and no map rows need no sort."""
    in_order = not len(keys) and _disjoint(segments)
    if in_order:
        segments = sorted(segments, key=lambda p: bytes(p.keys[0]))
    all_keys = pa.concat_arrays([keys, *(pa.array(p.keys, pa.binary()) for p in segments)])
    if in_order:
        order = np.arange(len(all_keys), dtype=np.int64)
        rowid_of = order
    else:
        order = pc.sort_indices(all_keys).to_numpy()
        rowid_of = np.empty(len(order), np.int64)
        rowid_of[order] = np.arange(len(order), dtype=np.int64)
    take = pa.array(order, pa.int64())
    merged = [
        _take(
            pa.concat_arrays(
                [array, *(p.batch.column(i).cast(column.type.arrow_type) for p in segments)]
            ),
            take,
            in_order,
        )
        for i, (array, column) in enumerate(zip(arrays, schema.columns, strict=True))
    ]
    all_deleted = np.concatenate([deleted, *(np.zeros(len(p.keys), bool) for p in segments)])
    parts = [
        DeltaRecords(rowid_of[undo.rowid], undo.ts, undo.live, undo.columns) if len(undo) else undo
    ]
    offset = len(keys)
    for part in segments:
        count = len(part.keys)
        if part.undo_ts is not None:
            parts.append(
                DeltaRecords(
                    rowid_of[offset : offset + count],
                    np.full(count, part.undo_ts, np.int64),
                    np.full(count, DEAD, np.int8),
                    {},
                )
            )
        offset += count
    return (
        merged,
        _take(all_keys, take, in_order),
        all_deleted[order],
        DeltaRecords.concat(parts, schema).sorted(),
    )


def _disjoint(segments: Sequence[SegmentPart]) -> bool:
    """Whether the segments' key ranges overlap nowhere (each is sorted)."""
    if not all(len(p.keys) for p in segments):
        return False
    spans = sorted((bytes(p.keys[0]), bytes(p.keys[-1])) for p in segments)
    return all(a[1] < b[0] for a, b in zip(spans, spans[1:]))


def _take(array: pa.Array, indices: pa.Array, in_order: bool) -> pa.Array:
    return array if in_order else array.take(indices)
