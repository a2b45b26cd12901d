"""Write batches: checking rows against a table's constraints, casting them to storage
batches (fields named by column ID) and routing them to the tablets they belong to."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.table import TableInfo
from sql.execution import index_writes
from storage.data_type import TabletId, TypeKind
from storage.errors import CheckViolation, NotNullViolation, StringDataRightTruncation
from storage.schema import ColumnSchema
from storage.transaction import Transaction

OLD_KEY = "__nyala_old_key_"
"""Prefix of the columns that carry a key-changing UPDATE's old key values."""


def check_constraints(table: TableInfo, rows: pa.Table, columns: list[ColumnSchema]) -> pa.Table:
    """``rows`` checked against NOT NULL and varchar lengths; a varchar(n) value whose
    characters past n are all spaces is cut to n, as PostgreSQL stores it (22001 else),
    and a char(n) value loses its trailing spaces (see ``storage.data_type``)."""
    for column in columns:
        array = original = rows.column(column.name)
        if not column.nullable and array.null_count:
            raise NotNullViolation(
                f'null value in column "{column.name}" of relation "{table.name}" '
                "violates not-null constraint"
            )
        if column.type.kind is TypeKind.VARCHAR and column.type.length is not None:
            limit = column.type.length
            longest = pc.max(pc.utf8_length(array)).as_py()
            if longest is not None and longest > limit:
                rest = pc.utf8_slice_codeunits(array, limit)
                if not pc.all(pc.match_substring_regex(rest, "^ *$")).as_py():
                    raise StringDataRightTruncation(
                        f"value too long for type {column.type.pg_name()}"
                    )
                array = pc.utf8_slice_codeunits(array, 0, limit)
        if column.type.blank_padded:
            array = pc.utf8_rtrim(array, characters=" ")
        if array is not original:
            index = rows.column_names.index(column.name)
            rows = rows.set_column(index, rows.field(index), array)
    return rows


def storage_batch(rows: pa.Table, columns: list[ColumnSchema]) -> pa.RecordBatch:
    arrays = [rows.column(c.name).cast(c.type.arrow_type) for c in columns]
    table = pa.Table.from_arrays(arrays, names=[str(c.id) for c in columns])
    return (
        table.combine_chunks().to_batches()[0]
        if table.num_rows
        else pa.RecordBatch.from_pylist([], schema=table.schema)
    )


def routed(
    table: TableInfo, rows: pa.Table, columns: list[ColumnSchema]
) -> list[tuple[TabletId, pa.RecordBatch, np.ndarray]]:
    """``by_tablet`` that also gives, per tablet batch, each row's position in ``rows``."""
    batch = storage_batch(rows, columns)
    position_name = "__nyala_position"
    numbered = batch.append_column(position_name, pa.array(np.arange(batch.num_rows)))
    out = []
    for tablet_id, part in by_tablet(table, numbered):
        index = part.schema.get_field_index(position_name)
        positions = part.column(index).to_numpy()
        out.append((tablet_id, part.remove_column(index), positions))
    return out


def insert_rows(table: TableInfo, txn: Transaction, rows: pa.Table) -> int:
    columns = list(table.schema.columns)
    rows = check_constraints(table, rows, columns)
    count = 0
    for tablet_id, batch in by_tablet(table, storage_batch(rows, columns)):
        count += txn.insert(tablet_id, batch, constraint_name=f"{table.name}_pkey")
    if table.indexes:
        index_writes.add_entries(table, txn, rows)
    return count


def by_tablet(table: TableInfo, batch: pa.RecordBatch) -> list[tuple[TabletId, pa.RecordBatch]]:
    """Split a write batch (fields named by column ID) by the tablet each row belongs to.

    Every row is routed before anything is written: a row outside every range
    fails the statement with 23514 and nothing of it is applied.
    """
    partitioning = table.partition_schema
    if partitioning is None:
        return [(table.tablet_ids[0], batch)]
    names = batch.schema.names
    columns = {
        column.id: batch.column(names.index(str(column.id)))
        for column in table.schema.key_columns
        if str(column.id) in names
    }
    index = partitioning.route(table.schema, table.partitions, columns)
    if (index < 0).any():
        tree = partitioning.tree
        if tree is not None and tree.find(table.name) is not None:  # written by its own name
            raise CheckViolation(
                f'new row for relation "{table.name}" violates partition constraint'
            )
        raise CheckViolation(
            f'no partition of relation "{table.name}" found for row',
            detail=None
            if tree is not None
            else "The row's key falls outside every range partition of the table.",
        )
    out = []
    for position in np.unique(index):
        mask = pa.array(index == position)
        out.append((table.partitions[int(position)].tablet_id, batch.filter(mask)))
    return out
