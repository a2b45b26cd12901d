"""Row updates: an UPDATE by key whose SET reads the row (``v = v + $1``), without DuckDB.

The row is read by its key (a point read of the encoded key, or a scan when the key does
not encode), the SET expressions are evaluated over it (key_expressions.py) and checked
as an assignment, and the new row is written; if a concurrent transaction changed the row
meanwhile, READ COMMITTED re-reads its newest version and computes again (REPEATABLE READ
fails with 40001 in storage).  What does not depend on the values is worked out once per
plan (``RowUpdate``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from catalog.table import TableInfo
from sql.dml.assigned_values import Fallback, as_arrow, checked_value, compared, row_batch
from sql.dml.cells import Cell, Values
from sql.dml.write_batches import by_tablet
from storage.data_type import ColumnId, DataType, TabletId
from storage.key_encoding import encode_key
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
        new_row = [*key_values]
        try:
            for cell, column in plan.written:
                value = (
                    cell.computed.evaluate(row, values.params)
                    if cell.computed is not None
                    else values.of(cell)
                )
                new_row.append(checked_value(value, column, table))
            batch = row_batch(tuple(new_row), plan.struct)
        except Fallback:
            return None
        conflicts: list[int] = []
        count = txn.update(tablet_id, batch, conflicts=conflicts)
        if not conflicts:
            return count
        # READ COMMITTED: the row changed after the snapshot; compute again from its newest version.
        txn.refresh_snapshot()


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
