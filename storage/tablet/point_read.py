"""A point read: the rows of a few primary keys, without a scan's machinery.

A scan builds a key range, walks every rowset's blocks in it and re-checks its
predicates; a read of a handful of keys needs none of that.  Each key is looked up
where it can live: the MemRowSets' maps, then each DiskRowSet whose key range covers
it (bounds, bloom filter, key index, then only those rows of the cached decoded blocks
and only their deltas).  A key may have versions in several rowsets (deleted in one,
reinserted in a later one); at most one is visible at a snapshot, and every source is
asked, so the visibility is exactly a scan's.
"""

from __future__ import annotations

import bisect
from operator import itemgetter

import numpy as np
import pyarrow as pa

from storage.data_type import ColumnId
from storage.mvcc import TxnState
from storage.row_change import Row, from_storage_values
from storage.scan_stats import ScanStats
from storage.schema import Schema
from storage.tablet.bloom import key_hashes
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.memrowset import MemRowSet
from storage.timestamp import Timestamp

_HASHED_MIN = 8
"""From this many keys, the bloom filters are probed with numpy over hashes computed once."""


def read_keys(
    schema: Schema,
    memrowsets: list[MemRowSet],
    rowsets: list[DiskRowSet],
    keys: list[bytes],
    columns: tuple[ColumnId, ...],
    snapshot: Timestamp,
    reader: TxnState | None,
    stats: ScanStats,
) -> pa.RecordBatch:
    """The ``columns`` of the rows with encoded primary keys ``keys`` visible at
    ``snapshot`` to ``reader`` (absent keys are skipped); the caller holds the tablet lock."""
    keys = sorted(set(keys))
    parts: dict[ColumnId, list[pa.Array]] = {c: [] for c in columns}
    found = 0
    rows: list[Row] = []
    for memrowset in memrowsets:
        for key in keys:
            row = memrowset.read(key, snapshot, reader)
            if row is not None:
                rows.append(row)
    if rows:
        stats.memrowset_rows_scanned += len(rows)
        found += len(rows)
        for column_id in columns:
            getter = itemgetter(schema.index_of(column_id))
            values = [getter(row) for row in rows]
            parts[column_id].append(from_storage_values(values, schema.column(column_id).type))
    if rowsets:
        found += _read_rowsets(rowsets, keys, columns, snapshot, reader, stats, parts)
    stats.rows_returned += found
    if not columns:
        return pa.RecordBatch.from_arrays([pa.nulls(found)], names=["_"]).select([])
    arrow_schema = schema.arrow_schema(columns)
    arrays = [_concat(parts[c], field.type) for c, field in zip(columns, arrow_schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _read_rowsets(
    rowsets: list[DiskRowSet],
    keys: list[bytes],
    columns: tuple[ColumnId, ...],
    snapshot: Timestamp,
    reader: TxnState | None,
    stats: ScanStats,
    parts: dict[ColumnId, list[pa.Array]],
) -> int:
    """Append the rows of ``keys`` (ascending) found in ``rowsets`` to ``parts``; their count.
    The bloom filter is probed with hashes computed once for every rowset."""
    hashes = key_hashes(keys) if len(keys) >= _HASHED_MIN else None
    found = 0
    for rowset in rowsets:
        lo = bisect.bisect_left(keys, rowset.min_key)
        hi = bisect.bisect_right(keys, rowset.max_key)
        if lo >= hi:
            stats.rowsets_skipped += 1
            continue
        if hashes is None:
            candidates = [k for k in keys[lo:hi] if rowset.bloom.may_contain(k)]
        else:
            maybe = rowset.bloom.may_contain_hashed(hashes[0][lo:hi], hashes[1][lo:hi])
            candidates = [keys[i] for i in (np.flatnonzero(maybe) + lo).tolist()]
        if not candidates:
            stats.rowsets_skipped += 1
            continue
        rowids = [r for r in rowset.key_index.lookup_sorted(candidates) if r is not None]
        if not rowids:
            stats.rowsets_skipped += 1
            continue
        stats.rowsets_read += 1
        live, values = rowset.read_rows(
            np.array(rowids, np.int64), columns, int(snapshot), reader, stats
        )
        found += len(live)
        for column_id, arrays in values.items():
            parts[column_id].extend(arrays)
    return found


def _concat(arrays: list[pa.Array], arrow_type: pa.DataType) -> pa.Array:
    if not arrays:
        return pa.array([], arrow_type)
    if len(arrays) == 1 and arrays[0].type == arrow_type:
        return arrays[0]
    return pa.concat_arrays([a.cast(arrow_type) for a in arrays])
