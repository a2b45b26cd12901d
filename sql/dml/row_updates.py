"""Row updates: an UPDATE by key whose SET reads the row (``v = v + $1``), without DuckDB.

The row is read by its key (a point read of the encoded key, or a scan when the key does
not encode), the SET expressions are evaluated over it (key_expressions.py) and checked
as an assignment, and the new row is written; if a concurrent transaction changed the row
meanwhile, READ COMMITTED re-reads its newest version and computes again (REPEATABLE READ
fails with 40001 in storage).  What does not depend on the values is worked out once per
plan (``RowUpdate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from catalog.table import TableInfo
from sql.dml.assigned_values import (
    Fallback,
    as_arrow,
    checked_value,
    compared,
    compared_all,
    row_batch,
    rows_batch,
)
from sql.dml.cells import Cell, Values
from sql.dml.write_batches import by_tablet
from storage.data_type import ColumnId, DataType, TabletId
from storage.key_encoding import encode_key, encode_keys
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema
from storage.transaction import Transaction


@dataclass(frozen=True, slots=True)
class RowUpdate:
    """An UPDATE by key that reads its row, with what does not depend on the values worked
    out once per plan: the key's columns and cells, the columns read, the cells written."""

    table: TableInfo
    struct: pa.StructType
    keys: tuple[ColumnSchema, ...]
    key_types: list[DataType]
    key_cells: list[Cell]
    projection: tuple[ColumnId, ...]
    written: list[tuple[Cell, ColumnSchema]]

    @staticmethod
    def of(
        table: TableInfo,
        struct: pa.StructType,
        columns: list[ColumnSchema],
        cells: list[Cell],
        reads: tuple[ColumnSchema, ...],
    ) -> RowUpdate:
        keys = table.schema.key_columns
        return RowUpdate(
            table,
            struct,
            keys,
            [c.type for c in keys],
            cells[: len(keys)],
            tuple(c.id for c in reads),
            list(zip(cells[len(keys) :], columns[len(keys) :], strict=True)),
        )


def update_from_row(plan: RowUpdate, txn: Transaction, values: Values) -> int | None:
    """Apply ``plan`` with ``values``; its row count, or None when the general path must.

    The key is checked and encoded from Python values (plain ints and strs: what the tablet
    encodes from their arrays) once, for every re-check's write; each write is one row
    converted at once (``row_batch``)."""
    table = plan.table
    keys = plan.keys
    try:
        raw = [values.of(cell) for cell in plan.key_cells]
        key_values = [compared(v, c, table) for v, c in zip(raw, keys, strict=True)]
        if table.partition_schema is None:
            tablet_id = table.tablet_ids[0]
        else:
            key_arrays = [as_arrow([v], c) for v, c in zip(key_values, keys, strict=True)]
            key_batch = pa.RecordBatch.from_arrays(key_arrays, names=[str(c.id) for c in keys])
            ((tablet_id, _),) = by_tablet(table, key_batch)
    except Fallback:
        return None
    projection = plan.projection
    key: bytes | None = None
    if all(type(v) is int or type(v) is str for v in key_values):
        try:
            key = encode_key(key_values, plan.key_types)
        except (ValueError, OverflowError, TypeError, ArithmeticError):
            key = None
    if key is not None:
        txn.refuse_if_queued(tablet_id, key)
    while True:
        found = _current_row(txn, tablet_id, projection, key, keys, raw)
        if found is None:
            return 0
        row: dict[int, object] = dict(
            zip(projection, [col[0] for col in found.to_pydict().values()], strict=True)
        )
        try:
            batch = row_batch(_new_row(plan, key_values, row, values, table), plan.struct)
        except Fallback:
            return None
        conflicts: list[int] = []
        count = txn.update(tablet_id, batch, conflicts=conflicts)
        if not conflicts:
            return count
        # READ COMMITTED: the row changed after the snapshot; compute again from its newest version.
        txn.refresh_snapshot()


def _new_row(
    plan: RowUpdate,
    key: Sequence[object],
    row: dict[int, object],
    values: Values,
    table: TableInfo,
) -> tuple[object, ...]:
    """The row as the update writes it: its key, then each SET column's checked value."""
    new_row = [*key]
    for cell, column in plan.written:
        value = (
            cell.computed.evaluate(row, values.params)
            if cell.computed is not None
            else values.of(cell)
        )
        new_row.append(checked_value(value, column, table))
    return tuple(new_row)


def _current_row(
    txn: Transaction,
    tablet_id: TabletId,
    projection: tuple[ColumnId, ...],
    key: bytes | None,
    keys: tuple[ColumnSchema, ...],
    values: list[object],
) -> pa.RecordBatch | None:
    """The row an UPDATE by key reads, as a scan for ``keys`` equal to ``values`` would find
    it: by a point read of its encoded ``key`` (a scan when the key did not encode), or None."""
    if key is not None:
        batch = txn.read_keys(tablet_id, [key], projection)
        return batch if batch.num_rows else None
    spec = ScanSpec(
        projection=projection,
        predicates=tuple(
            ColumnPredicate.equality(c.id, v) for c, v in zip(keys, values, strict=True)
        ),
    )
    found = [b for b in txn.scan(tablet_id, spec) if b.num_rows]
    return found[0] if found else None


def update_rows(plan: RowUpdate, txn: Transaction, rows: list[Values]) -> int | None:
    """``update_from_row`` of each of ``rows`` (a pipelined batch) as one point read of
    every key and one write per tablet, when their keys are distinct plain ints and strs;
    the rows written, or None (nothing written) when they must go one at a time.  The
    caller undoes the write unless every row was found and written: a missing row, or one
    changed since the snapshot, is left to the one-at-a-time path."""
    table = plan.table
    keys = plan.keys
    try:
        key_columns = [
            compared_all([values.of(cell) for values in rows], c, table)
            for cell, c in zip(plan.key_cells, keys, strict=True)
        ]
    except Fallback:
        return None
    key_rows = list(zip(*key_columns, strict=True))
    if len(set(key_rows)) != len(key_rows) or not all(
        type(v) is int or type(v) is str for column in key_columns for v in column
    ):
        return None
    try:
        arrays = [as_arrow(column, c) for column, c in zip(key_columns, keys, strict=True)]
        encoded = encode_keys(arrays, plan.key_types)
    except (Fallback, ValueError, OverflowError, TypeError, ArithmeticError):
        return None
    partitioning = table.partition_schema
    if partitioning is None:
        groups = [(table.tablet_ids[0], list(range(len(rows))))]
    else:
        index = partitioning.route(
            table.schema, table.partitions, {c.id: a for c, a in zip(keys, arrays, strict=True)}
        )
        if (index < 0).any():
            return None  # the row's own statement reports the partition it lacks
        groups = [
            (table.partitions[int(p)].tablet_id, np.flatnonzero(index == p).tolist())
            for p in np.unique(index)
        ]
    count = 0
    for tablet_id, positions in groups:
        written = _update_tablet(
            plan,
            txn,
            tablet_id,
            [encoded[i] for i in positions],
            [key_rows[i] for i in positions],
            [rows[i] for i in positions],
        )
        if written is None:
            return None
        count += written
    return count


def _update_tablet(
    plan: RowUpdate,
    txn: Transaction,
    tablet_id: TabletId,
    encoded: list[bytes],
    key_rows: list[tuple[object, ...]],
    rows: list[Values],
) -> int | None:
    """``update_rows`` of the rows one tablet holds."""
    table = plan.table
    for key in encoded:
        txn.refuse_if_queued(tablet_id, key)
    key_ids = tuple(c.id for c in plan.keys)
    read_ids = tuple(c for c in plan.projection if c not in key_ids)
    found = txn.read_keys(tablet_id, encoded, key_ids + read_ids)
    if found.num_rows != len(rows):
        return None
    columns = [found.column(i).to_pylist() for i in range(found.num_columns)]
    width = len(key_ids)
    current: dict[tuple[object, ...], dict[int, object]] = {
        tuple(cells[:width]): dict(zip(key_ids + read_ids, cells, strict=True))
        for cells in zip(*columns, strict=True)
    }
    new_rows = []
    try:
        for key_row, values in zip(key_rows, rows, strict=True):
            row = current.get(key_row)
            if row is None:
                return None
            new_rows.append(_new_row(plan, key_row, row, values, table))
        batch = rows_batch(new_rows, plan.struct)
    except Fallback:
        return None
    conflicts: list[int] = []
    count = txn.update(tablet_id, batch, conflicts=conflicts)
    return None if conflicts else count
