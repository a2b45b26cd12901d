"""ON DELETE / ON UPDATE CASCADE, SET NULL and SET DEFAULT: the child rows a parent write changes.

When a statement takes parent keys away, the child rows that named them are
found in one probe (``execution.referential``) and deleted (CASCADE on delete),
given the parent's new key (CASCADE on update), or have the key's columns (or
PostgreSQL 15's ``SET NULL (cols)`` list) set to NULL or their defaults, in
the same transaction and in batches, with their indexes kept in step.  What
that does to the child's own children follows recursively, through the same
checks a statement's own rows get (``dml.referential_checks``).  A child row
another transaction changed after this statement's snapshot is 40001 rather
than PostgreSQL's re-check.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import pyarrow as pa
import sqlglot

from catalog.foreign_keys import CASCADE, SET_DEFAULT, ForeignKey
from catalog.table import TableInfo
from sql.common.duckdb_errors import translate
from sql.dml.write_batches import check_constraints, insert_rows, routed
from sql.execution import index_writes, referential
from sql.frontend.parser import DIALECT
from storage.data_type import ColumnId
from storage.errors import CheckViolation, SerializationFailure
from storage.schema import ColumnSchema
from storage.transaction import Transaction

Followup = Callable[[TableInfo, pa.Table, pa.Table | None, set[ColumnId]], None]
"""Checks a child's own keys after its rows changed: (child, old rows, new rows or None for a
delete, columns changed)."""


def _concurrent() -> SerializationFailure:
    return SerializationFailure("could not serialize access due to concurrent update")


def delete_rows(txn: Transaction, table: TableInfo, rows: pa.Table) -> None:
    keys = list(table.schema.key_columns)
    for tablet_id, batch, _positions in routed(table, rows, keys):
        found: list[int] = []
        txn.delete(tablet_id, batch, conflicts=found)
        if found:
            raise _concurrent()
    if table.indexes:
        index_writes.remove_entries(table, txn, rows)


def rewrite_rows(
    txn: Transaction, table: TableInfo, old: pa.Table, new: pa.Table, changed: set[ColumnId]
) -> None:
    """Write ``new`` images of rows ``old`` (row i of each is one row) that set ``changed``."""
    columns = [c for c in table.schema.columns if c.id in changed]
    new = check_constraints(table, new, columns)
    key_ids = set(table.schema.key_column_ids)
    if changed & key_ids:
        delete_rows(txn, table, old)
        insert_rows(table, txn, new)
        return
    written = [*table.schema.key_columns, *columns]
    for tablet_id, batch, _positions in routed(table, new, written):
        found: list[int] = []
        txn.update(tablet_id, batch, conflicts=found)
        if found:
            raise _concurrent()
    if table.indexes:
        index_writes.replace_entries(table, txn, old, new)


def _default(column: ColumnSchema, count: int) -> pa.Array:
    if column.default_sql is None:
        return pa.nulls(count, column.type.arrow_type)
    sql = sqlglot.transpile(column.default_sql, read=DIALECT, write="duckdb")[0]
    connection = duckdb.connect()
    try:
        value = connection.execute(f"SELECT {sql}").fetchone()
    finally:
        connection.close()
    scalar = value[0] if value is not None else None
    return pa.array([scalar] * count).cast(column.type.arrow_type)


def _check(table: TableInfo, rows: pa.Table) -> None:
    """23514 when a row an action rewrote breaks one of ``table``'s CHECK constraints (DuckDB
    evaluates the expressions over the batch; NULL passes, as in PostgreSQL)."""
    if not table.checks or rows.num_rows == 0:
        return
    tests = ", ".join(
        "bool_and(coalesce(("
        + sqlglot.transpile(c.expression, read="postgres", write="duckdb")[0]
        + "), true))"
        for c in table.checks
    )
    connection = duckdb.connect()
    try:
        connection.register("__nyala_rows", rows)
        try:
            passed = connection.execute(f"SELECT {tests} FROM __nyala_rows").fetchone()
        except duckdb.Error as exc:
            raise translate(exc) from None
    finally:
        connection.close()
    for check, ok in zip(table.checks, passed or (), strict=True):
        if ok is False:
            raise CheckViolation(
                f'new row for relation "{table.name}" violates check constraint "{check.name}"'
            )


def apply(
    txn: Transaction,
    parent: TableInfo,
    child: TableInfo,
    key: ForeignKey,
    action: str,
    gone: pa.Table,
    replacement: pa.Table | None,
    followup: Followup,
) -> None:
    """Carry out ``action`` on the rows of ``child`` whose key is one of ``gone`` (parent key
    values, NULL-free); ``replacement`` holds, row for row, the new parent key an UPDATE gave
    (None for a DELETE)."""
    fits = referential.fitting(gone, child, key.columns)
    if not fits.all():
        gone = gone.filter(pa.array(fits))
        replacement = replacement.filter(pa.array(fits)) if replacement is not None else None
    probe = pa.table(
        [
            c.combine_chunks().cast(child.schema.column(i).type.arrow_type)
            for c, i in zip(gone.columns, key.columns, strict=True)
        ],
        names=gone.column_names,
    )
    rows = referential.matching(txn, child, key.columns, probe, child.schema.column_ids)
    if rows.num_rows == 0:
        return
    if action == CASCADE and replacement is None:
        delete_rows(txn, child, rows)
        followup(child, rows, None, set())
        return
    new = rows
    if action == CASCADE:
        assert replacement is not None
        mine = referential.encoded(
            referential.values_of(child, key.columns, rows), parent, key.parent_columns
        )
        theirs = referential.encoded(gone, parent, key.parent_columns)
        positions = pa.table({"k": theirs, "p": pa.array(range(len(theirs)), pa.int64())})
        order = pa.table({"k": mine, "o": pa.array(range(len(mine)), pa.int64())})
        joined = order.join(positions, "k").sort_by("o")
        taken = replacement.take(joined.column("p"))
        targets = key.columns
        for i, column_id in enumerate(targets):
            column = child.schema.column(column_id)
            at = new.column_names.index(column.name)
            value = taken.column(i).cast(column.type.arrow_type)
            new = new.set_column(at, new.field(at), value)
    else:
        targets = key.set_columns or key.columns
        for column_id in targets:
            column = child.schema.column(column_id)
            at = new.column_names.index(column.name)
            value = (
                _default(column, rows.num_rows)
                if action == SET_DEFAULT
                else pa.nulls(rows.num_rows, column.type.arrow_type)
            )
            new = new.set_column(at, new.field(at), value)
    changed = set(targets)
    _check(child, new)
    rewrite_rows(txn, child, rows, new, changed)
    followup(child, rows, new, changed)
