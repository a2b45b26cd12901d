"""DeltaRecords: a batch of delta records held as columns, Kudu's per-column changes by rowid.

A delta record says what one change did to one row of a DiskRowSet:

- ``rowid`` and ``ts`` (the change's commit timestamp; the DeltaMemStore
  orders its not-yet-flushed records after every file's),
- ``live``: ``KEEP`` (an UPDATE: liveness unchanged), ``DEAD`` (the row is
  absent after it) or ``LIVE`` (present after it: a REINSERT's REDO sets every
  column; the UNDO of a DELETE sets none, as the base keeps the values),
- per column, whether the record sets it and the value it sets.

REDO records hold the state *after* a change; UNDO records the state *before*
it.  A reader at snapshot S resolves each row and each column on its own
(``delta_apply.py``): the newest REDO at or below S that sets it, else the
oldest UNDO above S that sets it, else the base data.  Holding the records as
numpy and Arrow columns is what lets that run as a scatter per block and per
projected column instead of per row in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.data_type import ColumnId
from storage.row_change import Mutation, MutationKind, Row, from_storage_values
from storage.schema import ColumnSchema, Schema

KEEP, DEAD, LIVE = 0, 1, 2
"""Values of ``DeltaRecords.live``: liveness unchanged, the row absent, the row present."""

DMS_TS_BASE = (1 << 63) - (1 << 40)
"""DeltaMemStore records are ordered after every flushed record by giving them
timestamps from here up (their real commit timestamps are all newer than any file's).
Hybrid times (micros << 12) stay below it until 2041."""


@dataclass(frozen=True, slots=True)
class ColumnDelta:
    """One column of a batch of records: which records set it, and to what."""

    is_set: np.ndarray
    values: pa.Array


@dataclass(frozen=True, slots=True)
class DeltaRecords:
    """Delta records as parallel columns; ``columns`` holds only the columns some record sets."""

    rowid: np.ndarray
    ts: np.ndarray
    live: np.ndarray
    columns: dict[ColumnId, ColumnDelta]

    def __len__(self) -> int:
        return len(self.rowid)

    @classmethod
    def empty(cls) -> DeltaRecords:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int8), {})

    def column(self, column: ColumnSchema) -> ColumnDelta:
        """Column ``column`` of these records; none sets a column they do not hold (a
        LIVE record that only restores liveness, or one written before the column was
        added, when its value was the read default the base data also reads)."""
        found = self.columns.get(column.id)
        if found is not None:
            return found
        return ColumnDelta(np.zeros(len(self), bool), pa.nulls(len(self), column.type.arrow_type))

    def take(self, indices: np.ndarray) -> DeltaRecords:
        positions = pa.array(indices, pa.int64())
        return DeltaRecords(
            self.rowid[indices],
            self.ts[indices],
            self.live[indices],
            {
                cid: ColumnDelta(c.is_set[indices], c.values.take(positions))
                for cid, c in self.columns.items()
            },
        )

    def where(self, mask: np.ndarray) -> DeltaRecords:
        return self if bool(mask.all()) else self.take(np.flatnonzero(mask))

    def in_rowids(self, lo: int, hi: int) -> DeltaRecords:
        """The records of rowids in [lo, hi), from records sorted by rowid."""
        start = int(np.searchsorted(self.rowid, lo, "left"))
        end = int(np.searchsorted(self.rowid, hi, "left"))
        if start == 0 and end == len(self):
            return self
        return self.slice(start, end)

    def slice(self, start: int, end: int) -> DeltaRecords:
        return DeltaRecords(
            self.rowid[start:end],
            self.ts[start:end],
            self.live[start:end],
            {
                cid: ColumnDelta(c.is_set[start:end], c.values.slice(start, end - start))
                for cid, c in self.columns.items()
            },
        )

    def sorted(self) -> DeltaRecords:
        """These records ordered by (rowid, ts)."""
        order = np.lexsort((self.ts, self.rowid))
        if bool((order[1:] > order[:-1]).all()):
            return self
        return self.take(order)

    @classmethod
    def concat(cls, parts: Sequence[DeltaRecords], schema: Schema) -> DeltaRecords:
        """One batch of ``parts``' records (in order), over ``schema``'s columns."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        wanted = {cid for p in parts for cid in p.columns}
        columns = {}
        for column in schema.columns:
            if column.id not in wanted:
                continue
            pieces = [p.column(column) for p in parts]
            columns[column.id] = ColumnDelta(
                np.concatenate([c.is_set for c in pieces]),
                pa.concat_arrays([c.values.cast(column.type.arrow_type) for c in pieces]),
            )
        return cls(
            np.concatenate([p.rowid for p in parts]),
            np.concatenate([p.ts for p in parts]),
            np.concatenate([p.live for p in parts]),
            columns,
        )

    @property
    def nbytes(self) -> int:
        size: int = self.rowid.nbytes * 3 + sum(
            c.is_set.nbytes + c.values.nbytes for c in self.columns.values()
        )
        return 64 + size


class _Builder:
    """Accumulates records one by one (the DeltaMemStore's and a MemRowSet flush's edge)."""

    def __init__(self, schema: Schema) -> None:
        self._schema = schema
        self.rowids: list[int] = []
        self.ts: list[int] = []
        self.live: list[int] = []
        self._cells: dict[int, tuple[list[int], list[object]]] = {}

    def add(self, rowid: int, ts: int, live: int, cells: Iterable[tuple[int, object]]) -> None:
        """Add a record; ``cells`` are (column index, storage value) pairs it sets."""
        record = len(self.rowids)
        self.rowids.append(rowid)
        self.ts.append(ts)
        self.live.append(live)
        for column_idx, value in cells:
            positions, values = self._cells.setdefault(column_idx, ([], []))
            positions.append(record)
            values.append(value)

    def add_row(self, rowid: int, ts: int, values: Row | None) -> None:
        """A whole-row image: LIVE with every column, or DEAD when ``values`` is None."""
        if values is None:
            self.add(rowid, ts, DEAD, ())
        else:
            self.add(rowid, ts, LIVE, enumerate(values))

    def add_mutation(self, rowid: int, ts: int, mutation: Mutation) -> None:
        """A REDO record: the change ``mutation`` makes."""
        kind = mutation.kind
        if kind is MutationKind.UPDATE:
            changes: Sequence[tuple[int, object]] = mutation.change  # type: ignore[assignment]
            self.add(rowid, ts, KEEP, changes)
        elif kind is MutationKind.DELETE:
            self.add(rowid, ts, DEAD, ())
        else:
            self.add_row(rowid, ts, mutation.change)

    def build(self) -> DeltaRecords:
        n = len(self.rowids)
        columns = {}
        for column_idx, (positions, values) in sorted(self._cells.items()):
            column = self._schema.columns[column_idx]
            is_set = np.zeros(n, bool)
            is_set[positions] = True
            full: list[object] = [None] * n
            for position, value in zip(positions, values, strict=True):
                full[position] = value
            columns[column.id] = ColumnDelta(is_set, from_storage_values(full, column.type))
        return DeltaRecords(
            np.array(self.rowids, np.int64),
            np.array(self.ts, np.int64),
            np.array(self.live, np.int8),
            columns,
        )


def records_builder(schema: Schema) -> _Builder:
    """A builder of records over ``schema``'s column positions."""
    return _Builder(schema)
