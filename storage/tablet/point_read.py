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
from collections.abc import Sequence
from operator import itemgetter

import numpy as np
import pyarrow as pa

from storage.data_type import ColumnId
from storage.mvcc import TxnState
from storage.predicate import KeyRange
from storage.row_change import Row, from_storage_values
from storage.scan_stats import ScanStats
from storage.schema import Schema
from storage.tablet.bloom import key_hashes
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.memrowset import MemRowSet
from storage.timestamp import Timestamp

_HASHED_MIN = 8
"""From this many keys, the bloom filters are probed with numpy over hashes computed once."""
_ROW_BY_ROW = 8
"""Up to this many rows of a rowset are read one by one (``DiskRowSet.read_row``: slices of
cached blocks, the DeltaMemStore chain walked) rather than as arrays (``read_rows``)."""


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
    if len(keys) == 1:
        return _read_one(schema, memrowsets, rowsets, keys[0], columns, snapshot, reader, stats)
    keys = sorted(set(keys))
    distinct = tuple(dict.fromkeys(columns))
    parts: dict[ColumnId, list[pa.Array]] = {c: [] for c in distinct}
    rows: list[Row] = []
    for memrowset in memrowsets:
        for key in keys:
            row = memrowset.read(key, snapshot, reader)
            if row is not None:
                rows.append(row)
    found = _add_rows(schema, rows, distinct, parts, stats)
    if rowsets:
        found += _read_rowsets(rowsets, keys, distinct, snapshot, reader, stats, parts)
    return _batch(schema, columns, parts, found, stats)


def _read_one(
    schema: Schema,
    memrowsets: list[MemRowSet],
    rowsets: list[DiskRowSet],
    key: bytes,
    columns: tuple[ColumnId, ...],
    snapshot: Timestamp,
    reader: TxnState | None,
    stats: ScanStats,
) -> pa.RecordBatch:
    """``read_keys`` of one key (a prepared point select's, an UPDATE's current row): the
    same sources asked in the same order with the same checks and counts, but no sort and
    no per-column lists; a DiskRowSet row of base values is a slice of its block's cached
    batch (``DiskRowSet.read_row_batch``), returned as it is when it is the only row."""
    found: list[pa.RecordBatch | list[pa.Array]] = []
    rows: list[Row] = []
    for memrowset in memrowsets:
        row = memrowset.read(key, snapshot, reader)
        if row is not None:
            rows.append(row)
    if rows:
        stats.memrowset_rows_scanned += len(rows)
        for row in rows:
            found.append(
                [
                    from_storage_values([row[schema.index_of(c)]], schema.column(c).type)
                    for c in columns
                ]
            )
    arrow_schema = _arrow_schema(schema, columns) if columns else None
    at = int(snapshot)
    for rowset in rowsets:
        if key < rowset.min_key or key > rowset.max_key:
            stats.rowsets_skipped += 1
            continue
        rowid = rowset.key_index.find_cached(key)
        if rowid == -2:
            probed = rowset.key_index.find(key) if rowset.bloom.may_contain(key) else None
            rowid = -1 if probed is None else probed
        if rowid < 0:
            stats.rowsets_skipped += 1
            continue
        if rowset.files_change(rowid, at):
            stats.rowsets_read += 1
            live, values = rowset.read_rows(np.array([rowid], np.int64), columns, at, reader, stats)
            if len(live):
                found.append([values[c][0] for c in columns])
            continue
        if arrow_schema is None:
            read = rowset.read_row(rowid, columns, at, reader, stats)
        else:
            read = rowset.read_row_batch(rowid, columns, arrow_schema, at, reader, stats)
        if read is not None:
            found.append(read)
    if len(found) == 1 and isinstance(found[0], pa.RecordBatch):
        stats.rows_returned += 1
        return found[0]
    parts: dict[ColumnId, list[pa.Array]] = {c: [] for c in columns}
    for one in found:
        arrays = one.columns if isinstance(one, pa.RecordBatch) else one
        for column_id, array in dict(zip(columns, arrays, strict=True)).items():
            parts[column_id].append(array)
    return _batch(schema, columns, parts, len(found), stats)


def read_range(
    schema: Schema,
    memrowsets: list[MemRowSet],
    rowsets: list[DiskRowSet],
    key_range: KeyRange,
    columns: tuple[ColumnId, ...],
    snapshot: Timestamp,
    reader: TxnState | None,
    stats: ScanStats,
    most: int,
) -> pa.RecordBatch | None:
    """A short key range read as point reads of its rows: ``columns`` of the rows in
    ``key_range`` visible at ``snapshot`` to ``reader``, or None when any source holds more
    than ``most`` rows in it (a scan is then the better read); caller holds the lock."""
    lower, upper = key_range.lower, key_range.upper
    distinct = tuple(dict.fromkeys(columns))
    parts: dict[ColumnId, list[pa.Array]] = {c: [] for c in distinct}
    rows: list[Row] = []
    for memrowset in memrowsets:
        found = memrowset.read_range(lower, upper, snapshot, reader, most)
        if found is None:
            return None
        rows += found
    spans = _spans(rowsets, lower, upper, most)
    if spans is None:
        return None
    total = _add_rows(schema, rows, distinct, parts, stats)
    for rowset, lo, hi in spans:
        if lo >= hi:
            stats.rowsets_skipped += 1
            continue
        total += _read_rows(rowset, range(lo, hi), distinct, int(snapshot), reader, stats, parts)
    return _batch(schema, columns, parts, total, stats)


def keys_in_range(
    memrowsets: list[MemRowSet],
    rowsets: list[DiskRowSet],
    key_range: KeyRange,
    snapshot: Timestamp,
    reader: TxnState | None,
    stats: ScanStats,
    most: int,
) -> list[bytes] | None:
    """``read_range`` of no columns but the rows' encoded keys (what an index entry's key
    holds): a DiskRowSet's come from its key index, so no column block is read and no
    Arrow batch made; None when any source holds more than ``most`` rows in the range."""
    lower, upper = key_range.lower, key_range.upper
    keys: list[bytes] = []
    for memrowset in memrowsets:
        found = memrowset.keys_in_range(lower, upper, snapshot, reader, most)
        if found is None:
            return None
        keys += found
    if lower is not None and upper is not None:
        found = _keys_in_blocks(rowsets, lower, upper, int(snapshot), reader, stats, most)
        if found is not None:
            stats.memrowset_rows_scanned += len(keys)
            keys += found
            stats.rows_returned += len(keys)
            return keys
    spans = _spans(rowsets, lower, upper, most)
    if spans is None:
        return None
    stats.memrowset_rows_scanned += len(keys)
    for rowset, lo, hi in spans:
        if lo >= hi:
            stats.rowsets_skipped += 1
            continue
        live = _live(rowset, range(lo, hi), int(snapshot), reader, stats)
        keys += rowset.key_index.keys_at(live)
    stats.rows_returned += len(keys)
    return keys


def _keys_in_blocks(
    rowsets: list[DiskRowSet],
    lower: bytes,
    upper: bytes,
    snapshot: int,
    reader: TxnState | None,
    stats: ScanStats,
    most: int,
) -> list[bytes] | None:
    """``keys_in_range``'s DiskRowSet part when each rowset's keys in the range lie in one
    key-index block (an index lookup's usually do): the keys are taken from the block the
    search found them in; None (nothing counted) when some rowset's do not, or hold more
    than ``most``."""
    if len(rowsets) == 1:
        rowset = rowsets[0]
        one = rowset.keys_between(lower, upper, most)
        if one is None:
            return None
        first, inside = one
        if not inside:
            stats.rowsets_skipped += 1
            return inside
        if len(inside) == 1 and not rowset.files_change(first, snapshot):
            return inside if rowset.is_live(first, snapshot, reader, stats) else []
        live = _live(rowset, range(first, first + len(inside)), snapshot, reader, stats)
        return inside if len(live) == len(inside) else [inside[r - first] for r in live]
    found = []
    for rowset in rowsets:
        between = rowset.keys_between(lower, upper, most)
        if between is None:
            return None
        found.append(between)
    keys: list[bytes] = []
    for rowset, (first, inside) in zip(rowsets, found, strict=True):
        if not inside:
            stats.rowsets_skipped += 1
            continue
        live = _live(rowset, range(first, first + len(inside)), snapshot, reader, stats)
        if len(live) == len(inside):
            keys += inside
        else:
            keys += [inside[rowid - first] for rowid in live]
    return keys


def _spans(
    rowsets: list[DiskRowSet], lower: bytes | None, upper: bytes | None, most: int
) -> list[tuple[DiskRowSet, int, int]] | None:
    """Each rowset's rowids in [lower, upper), or None when one holds more than ``most``."""
    spans = []
    for rowset in rowsets:
        lo, hi = rowset.span(lower, upper)
        if hi - lo > most:
            return None
        spans.append((rowset, lo, hi))
    return spans


def _live(
    rowset: DiskRowSet,
    rowids: Sequence[int],
    snapshot: int,
    reader: TxnState | None,
    stats: ScanStats,
) -> list[int]:
    """Of ``rowids`` (ascending) of ``rowset``, those live at ``snapshot`` (``_read_rows``
    of no columns)."""
    if len(rowids) <= _ROW_BY_ROW and (
        not (rowset.redo or rowset.undo)
        or not any(rowset.files_change(r, snapshot) for r in rowids)
    ):
        return [r for r in rowids if rowset.is_live(r, snapshot, reader, stats)]
    stats.rowsets_read += 1
    live, _ = rowset.read_rows(np.array(rowids, np.int64), (), snapshot, reader, stats)
    return [int(r) for r in live.tolist()]


def _add_rows(
    schema: Schema,
    rows: list[Row],
    columns: tuple[ColumnId, ...],
    parts: dict[ColumnId, list[pa.Array]],
    stats: ScanStats,
) -> int:
    """Append MemRowSet ``rows`` to ``parts`` as Arrow arrays; their count."""
    if rows:
        stats.memrowset_rows_scanned += len(rows)
        for column_id in columns:
            getter = itemgetter(schema.index_of(column_id))
            values = [getter(row) for row in rows]
            parts[column_id].append(from_storage_values(values, schema.column(column_id).type))
    return len(rows)


_ARROW_SCHEMAS: dict[tuple[int, tuple[ColumnId, ...]], tuple[Schema, pa.Schema]] = {}
_ARROW_SCHEMA_ENTRIES = 256


def _arrow_schema(schema: Schema, columns: tuple[ColumnId, ...]) -> pa.Schema:
    """``schema.arrow_schema(columns)``, made once per schema and projection: a prepared
    point read asks for the same one every time, and making it costs more than the row."""
    key = (id(schema), columns)
    found = _ARROW_SCHEMAS.get(key)
    if found is not None and found[0] is schema:
        return found[1]
    made = schema.arrow_schema(columns)
    if len(_ARROW_SCHEMAS) >= _ARROW_SCHEMA_ENTRIES:
        _ARROW_SCHEMAS.clear()
    _ARROW_SCHEMAS[key] = (schema, made)
    return made


def _batch(
    schema: Schema,
    columns: tuple[ColumnId, ...],
    parts: dict[ColumnId, list[pa.Array]],
    total: int,
    stats: ScanStats,
) -> pa.RecordBatch:
    """The batch of ``columns`` (a column may repeat) from ``parts``, read once per column."""
    stats.rows_returned += total
    if not columns:
        return pa.RecordBatch.from_arrays([pa.nulls(total)], names=["_"]).select([])
    arrow_schema = _arrow_schema(schema, columns)
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
        found += _read_rows(rowset, rowids, columns, int(snapshot), reader, stats, parts)
    return found


def _read_rows(
    rowset: DiskRowSet,
    rowids: Sequence[int],
    columns: tuple[ColumnId, ...],
    snapshot: int,
    reader: TxnState | None,
    stats: ScanStats,
    parts: dict[ColumnId, list[pa.Array]],
) -> int:
    """Append the rows of ``rowids`` (ascending) of ``rowset`` live at ``snapshot`` to
    ``parts``; their count.  A few rows that no delta file changes are read one by one."""
    slow = rowids
    if len(rowids) <= _ROW_BY_ROW:
        slow = []
        found = 0
        for rowid in rowids:
            if rowset.files_change(rowid, snapshot):
                slow.append(rowid)
                continue
            row = rowset.read_row(rowid, columns, snapshot, reader, stats)
            if row is not None:
                found += 1
                for column_id, array in zip(columns, row, strict=True):
                    parts[column_id].append(array)
        if not slow:
            return found
        if found:
            # Rows from both paths: keep them in rowid order, as the vectorised read gives.
            slow = rowids
            for column_id in columns:
                del parts[column_id][len(parts[column_id]) - found :]
    stats.rowsets_read += 1
    live, values = rowset.read_rows(np.array(slow, np.int64), columns, snapshot, reader, stats)
    for column_id, arrays in values.items():
        parts[column_id].extend(arrays)
    return len(live)


def _concat(arrays: list[pa.Array], arrow_type: pa.DataType) -> pa.Array:
    if not arrays:
        return pa.array([], arrow_type)
    if len(arrays) == 1 and arrays[0].type == arrow_type:
        return arrays[0]
    return pa.concat_arrays([a.cast(arrow_type) for a in arrays])
