"""InsertSegment: one bulk insert's rows kept in the MemRowSet as Arrow columns, not row objects.

A bulk load (COPY, INSERT ... SELECT, a batch of new keys) used to become one
``MemRowSetRow`` per row: a million Python objects built, merged into the
sorted map, walked by every scan and walked again by the flush.  A segment
keeps the batch as it arrived, sorted by encoded key, tagged with the inserting
transaction's ``TxnState``: all its rows become visible together, exactly as
the same rows in the map would (their inserts share that state).

A row leaves its segment only when something changes it (an UPDATE or DELETE
of its key, by any transaction): it then becomes an ordinary ``MemRowSetRow``
in the map and ``moved`` masks it out here, so each key lives in exactly one
place.  Rolling back the inserting transaction (or the savepoint before the
insert) drops the segment whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import ColumnId
from storage.mvcc import TxnState
from storage.predicate import ScanSpec
from storage.row_change import Row, to_storage_values
from storage.schema import Schema
from storage.timestamp import Timestamp

_SEGMENT_ROW_OVERHEAD_BYTES = 64
"""Rough cost of a segment row beyond its Arrow bytes: its key's bytes object and slot."""


class InsertSegment:
    """A batch of rows one transaction inserted at keys nothing else held, in key order."""

    __slots__ = (
        "txn", "schema", "keys", "batch", "moved", "live_rows", "first_key", "last_key", "ident",
        "_key_list",
    )  # fmt: skip

    def __init__(
        self, txn: TxnState, schema: Schema, keys: np.ndarray, batch: pa.RecordBatch
    ) -> None:
        """``keys``: distinct encoded keys, ascending (an object array of bytes); ``batch``:
        the rows in that order, one field per ``schema`` column in schema order."""
        self.txn = txn
        self.schema = schema
        self.keys = keys
        self.batch = batch
        self.moved = np.zeros(len(keys), dtype=bool)
        """Rows that left: moved to the map by a change, or removed by a partial rollback."""
        self.live_rows = len(keys)
        self.first_key: bytes = keys[0] if len(keys) else b""
        self.last_key: bytes = keys[-1] if len(keys) else b""
        self._key_list: list[bytes] | None = None
        self.ident: object = self
        """The insert this segment holds: kept by the copies an ALTER TABLE makes, so the
        transaction's rollback finds the copy it must drop."""

    @classmethod
    def build(
        cls, txn: TxnState, schema: Schema, keys: list[bytes], columns: list[pa.Array]
    ) -> InsertSegment:
        """A segment of rows given in any order (``columns`` in schema order)."""
        key_array = np.empty(len(keys), dtype=object)
        key_array[:] = keys
        order = np.argsort(key_array, kind="stable")
        batch = pa.RecordBatch.from_arrays(columns, names=[str(c.id) for c in schema.columns])
        if not bool(np.all(order[1:] > order[:-1])):  # not already in key order
            key_array = key_array[order]
            batch = batch.take(pa.array(order, pa.int64()))
        return cls(txn, schema, key_array, batch)

    def __len__(self) -> int:
        return self.live_rows

    @property
    def nbytes(self) -> int:
        return int(self.batch.nbytes) + _SEGMENT_ROW_OVERHEAD_BYTES * len(self.keys)

    def key_list(self) -> list[bytes]:
        """``keys`` as a list, made once: a C bisect of it beats ``searchsorted`` over an
        object array for a few keys."""
        if self._key_list is None:
            self._key_list = self.keys.tolist()
        return self._key_list

    def index_of(self, key: bytes) -> int | None:
        """The position of ``key`` if this segment still holds it."""
        if not self.live_rows or key < self.first_key or key > self.last_key:
            return None
        keys = self.key_list()
        i = bisect.bisect_left(keys, key)
        if i < len(keys) and keys[i] == key and not self.moved[i]:
            return i
        return None

    def holds_any(self, sorted_keys: np.ndarray) -> bool:
        """Whether any of ``sorted_keys`` (an ascending object array) is held here."""
        if not self.live_rows or not len(sorted_keys):
            return False
        keys = self.keys
        lo = int(np.searchsorted(sorted_keys, keys[0]))
        hi = int(np.searchsorted(sorted_keys, keys[-1], side="right"))
        if lo >= hi:
            return False
        probe = sorted_keys[lo:hi]
        positions = np.searchsorted(keys, probe)
        positions[positions >= len(keys)] = len(keys) - 1
        found = keys[positions] == probe
        return bool(np.any(found & ~self.moved[positions]))

    def span(self, lower: bytes | None, upper: bytes | None) -> tuple[int, int]:
        """Positions [lo, hi) of the keys in [lower, upper)."""
        lo = 0 if lower is None else int(np.searchsorted(self.keys, lower))
        hi = len(self.keys) if upper is None else int(np.searchsorted(self.keys, upper))
        return lo, max(lo, hi)

    def is_visible(self, snapshot: Timestamp, reader: TxnState | None) -> bool:
        txn = self.txn
        if txn is reader:
            return True
        committed = txn.commit_ts
        return committed is not None and committed <= snapshot

    def row(self, index: int) -> Row:
        """Row ``index`` as the tuple of storage values a MemRowSetRow holds."""
        part = self.batch.slice(index, 1)
        return tuple(
            to_storage_values(part.column(i), column.type)[0]
            for i, column in enumerate(self.schema.columns)
        )

    def rows(self, indexes: list[int]) -> list[Row]:
        """Rows at ``indexes`` as storage-value tuples."""
        if not indexes:
            return []
        part = self.batch.take(pa.array(indexes, pa.int64()))
        values = [
            to_storage_values(part.column(i), column.type)
            for i, column in enumerate(self.schema.columns)
        ]
        return list(zip(*values, strict=True))

    def mark_moved(self, index: int) -> None:
        if not self.moved[index]:
            self.moved[index] = True
            self.live_rows -= 1

    def with_batch(self, schema: Schema, batch: pa.RecordBatch) -> InsertSegment:
        """The same rows (same keys, txn and moved marks) with ``batch``'s columns."""
        copy = InsertSegment(self.txn, schema, self.keys, batch)
        copy.moved = self.moved.copy()
        copy.live_rows = self.live_rows
        copy.ident = self.ident
        return copy


def scan_segments(
    segments: list[tuple[InsertSegment, np.ndarray]],
    spec: ScanSpec,
    schema: Schema,
    lower: bytes | None,
    upper: bytes | None,
    snapshot: Timestamp,
    reader: TxnState | None,
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """Each captured segment's rows in [lower, upper) that had not moved at the capture
    (``moved``, a copy of its marks then), filtered with Arrow compute: a segment is
    visible whole or not at all."""
    arrow_schema = schema.arrow_schema(spec.projection)
    for segment, moved in segments:
        if not segment.is_visible(snapshot, reader):
            continue
        lo, hi = segment.span(lower, upper)
        batch = segment.batch
        for start in range(lo, hi, batch_rows):
            stop = min(hi, start + batch_rows)
            part = batch.slice(start, stop - start)
            gone = moved[start:stop]
            if gone.any():
                part = part.filter(pa.array(~gone))
            arrays = {
                ColumnId(int(name)): column
                for name, column in zip(part.schema.names, part.columns, strict=True)
            }
            out = project_batch(arrays, spec, arrow_schema, part.num_rows)
            if spec.predicates:
                out = out.filter(predicate_mask(spec, arrays))
            if out.num_rows:
                yield out


def project_batch(
    arrays: dict[ColumnId, pa.Array], spec: ScanSpec, arrow_schema: pa.Schema, num_rows: int
) -> pa.RecordBatch:
    if not spec.projection:
        # No columns (SELECT count(*)): a batch that still carries its row count.
        return pa.RecordBatch.from_arrays([pa.nulls(num_rows)], names=["_"]).select([])
    return pa.RecordBatch.from_arrays(
        [arrays[column_id] for column_id in spec.projection], schema=arrow_schema
    )


def predicate_mask(spec: ScanSpec, arrays: dict[ColumnId, pa.Array]) -> pa.Array:
    mask = spec.predicates[0].evaluate(arrays[spec.predicates[0].column_id])
    for predicate in spec.predicates[1:]:
        mask = pc.and_(mask, predicate.evaluate(arrays[predicate.column_id]))
    return mask


def locate_in_segments(
    segments: list[InsertSegment], keys: list[bytes]
) -> dict[bytes, tuple[InsertSegment, int] | None]:
    """The segment still holding each of ``keys`` and its position there, None where no
    segment does: ``index_of`` of every key in every segment, each segment searched (a
    bisect of its key list) only for the keys within its range not found in an earlier one."""
    out: dict[bytes, tuple[InsertSegment, int] | None] = dict.fromkeys(keys)
    pending = sorted(out)
    for segment in segments:
        if not segment.live_rows or not pending:
            continue
        lo = bisect.bisect_left(pending, segment.first_key)
        hi = bisect.bisect_right(pending, segment.last_key)
        if lo >= hi:
            continue
        held, moved = segment.key_list(), segment.moved
        rest = []
        for key in pending[lo:hi]:
            position = bisect.bisect_left(held, key)
            if position < len(held) and held[position] == key and not moved[position]:
                out[key] = (segment, position)
            else:
                rest.append(key)
        if len(rest) < hi - lo:
            pending = pending[:lo] + rest + pending[hi:]
    return out
