"""Key writes: INSERT ... VALUES, and UPDATE / DELETE by the whole primary key, without DuckDB.

The general write path (dml.py) runs each statement as a DuckDB query, which
costs milliseconds of binding, planning and Arrow round trips: most of a
single-row INSERT or a point UPDATE.  The statements drivers send one row at
a time rarely need any of it: every value is a bind parameter or a plain
literal, and an UPDATE or DELETE names its row by the whole primary key.
Those are recognised at plan time and applied as Kudu's operations straight
from the parameters, with PostgreSQL's range, length and NOT NULL checks.
An UPDATE whose SET reads the row (``v = v + $1``, ``COALESCE(v, 0) * 2``;
key_expressions.py) reads that one row by key, computes the new values and
writes them; if a concurrent transaction changed the row meanwhile it waits
for it, re-reads the newest version and computes again (READ COMMITTED's
re-check; REPEATABLE READ fails with 40001 in storage).  On the event loop, where it
may not wait, it gives up before reading a row that others already wait in line for
(``Transaction.refuse_if_queued``), as its write would find the row locked anyway.

Anything else (expressions, RETURNING, ON CONFLICT, a default that is not a
constant, a parameter whose declared type differs from its column's, or a
value the checks here cannot judge, such as a NaN numeric) takes the general
path, so both paths give the same answers.
"""

from __future__ import annotations

import decimal
import operator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.dml.assigned_values import (
    INT_LIMITS,
    Fallback,
    assigned,
    checked,
    checked_value,
    compared,
    compared_all,
    row_batch,
    row_type,
)
from sql.dml.cells import Cell, Values
from sql.dml.key_expressions import assignable, compile_expression
from sql.dml.row_updates import RowUpdate, update_from_row, update_rows
from sql.dml.write_batches import by_tablet
from sql.execution.sequences import SessionSequences
from storage.data_type import TypeKind
from storage.errors import NotNullViolation
from storage.schema import ColumnSchema
from storage.transaction import Transaction
from storage.type_oids import TypeOid

_INT_OIDS = {TypeOid.INT8, TypeOid.INT2, TypeOid.INT4}
_FLOAT_OIDS = {TypeOid.FLOAT4, TypeOid.FLOAT8}
_TEXT_OIDS = {TypeOid.TEXT, TypeOid.VARCHAR}
_READ_KEY_KINDS = {*INT_LIMITS, TypeKind.STRING, TypeKind.VARCHAR}


@dataclass(frozen=True, slots=True)
class KeyWrite:
    """A statement the key-write path applies: its kind, the columns it writes, and per row
    the cell of each of them."""

    kind: str
    table: TableInfo
    columns: list[ColumnSchema]
    rows: list[list[Cell]]
    reads: tuple[ColumnSchema, ...] = ()
    """The columns a computed cell reads: the row is read by key before it is written."""
    struct: pa.StructType = field(init=False)
    """One written row as Arrow (``assigned_values.row_batch``), made once per plan."""
    short: bool = field(init=False)
    """``runs_short``, judged once per plan: the plan is remade when DDL changes the table."""
    key_count: int = field(init=False)
    row_update: RowUpdate | None = field(init=False)
    """For an UPDATE that reads its row: what ``row_updates.update_from_row`` needs, worked out once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "struct", row_type(self.columns))
        object.__setattr__(self, "short", _runs_short(self))
        object.__setattr__(self, "key_count", len(self.table.schema.key_columns))
        reads_row = bool(self.reads) and len(self.rows) == 1
        object.__setattr__(
            self,
            "row_update",
            RowUpdate.of(self.table, self.struct, self.columns, self.rows[0], self.reads)
            if reads_row
            else None,
        )


def plan_insert(
    table: TableInfo, targets: list[ColumnSchema], values: exp.Values, oids: list[int]
) -> KeyWrite | None:
    """An ``INSERT ... VALUES`` of parameters and literals, with constant defaults."""
    columns = list(table.schema.columns)
    rows = []
    for row in values.expressions:
        if len(row.expressions) > len(targets):
            return None
        given = dict(zip((c.id for c in targets), row.expressions, strict=False))
        cells = []
        for column in columns:
            node = given.get(column.id)
            if node is None or (isinstance(node, exp.Var) and node.name.upper() == "DEFAULT"):
                cell = _default_cell(column, table)
            else:
                cell = _cell(node, column, oids)
            if cell is None:
                return None
            cells.append(cell)
        rows.append(cells)
    return KeyWrite("INSERT", table, columns, rows)


def plan_update(ast: exp.Update, table: TableInfo, oids: list[int]) -> KeyWrite | None:
    """``UPDATE t SET col = $n|literal, ... WHERE key1 = ... AND ...`` (the whole key)."""
    if ast.args.get("from_") is not None or ast.args.get("returning") is not None:
        return None
    key = _key_cells(ast.args.get("where"), table, ast.this.alias_or_name, oids)
    if key is None:
        return None
    columns = list(table.schema.key_columns)
    cells = [key[c.id] for c in columns]
    alias = ast.this.alias_or_name
    reads: set[int] = set()
    for assignment in ast.expressions:
        column = table.schema.find(identifier_name(assignment.this))
        if column is None or column.id in key or column in columns:
            return None
        cell = _cell(assignment.expression, column, oids)
        if cell is None:
            computed = compile_expression(
                assignment.expression, lambda c: _row_column(c, table, alias), oids
            )
            if computed is None or not assignable(computed, column):
                return None
            cell = Cell(None, computed=computed)
            reads |= computed.reads
        columns.append(column)
        cells.append(cell)
    read = tuple(c for c in table.schema.columns if c.id in reads)
    if read and any(c.type.kind not in _READ_KEY_KINDS for c in table.schema.key_columns):
        return None  # the row is read by an equality on each key column: plain values only
    return KeyWrite("UPDATE", table, columns, [cells], reads=read)


def _row_column(node: exp.Column, table: TableInfo, alias: str) -> ColumnSchema | None:
    if node.table and node.table != alias:
        return None
    return table.schema.find(node.name)


def plan_delete(ast: exp.Delete, table: TableInfo, oids: list[int]) -> KeyWrite | None:
    """``DELETE FROM t WHERE key1 = ... AND ...`` (the whole key)."""
    if ast.args.get("using") or ast.args.get("returning") is not None:
        return None
    key = _key_cells(ast.args.get("where"), table, ast.this.alias_or_name, oids)
    if key is None:
        return None
    columns = list(table.schema.key_columns)
    return KeyWrite("DELETE", table, columns, [[key[c.id] for c in columns]])


def _key_cells(
    where: exp.Where | None, table: TableInfo, alias: str, oids: list[int]
) -> dict[int, Cell] | None:
    if where is None:
        return None
    found: dict[int, Cell] = {}
    for term in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        while isinstance(term, exp.Paren):
            term = term.this
        if not isinstance(term, exp.EQ):
            return None
        left, right = term.this, term.expression
        if not isinstance(left, exp.Column):
            left, right = right, left
        if not isinstance(left, exp.Column) or (left.table and left.table != alias):
            return None
        column = table.schema.find(left.name)
        if column is None or column.id not in table.schema.key_column_ids or column.id in found:
            return None
        cell = _cell(right, column, oids)
        if cell is None or (cell.param is None and cell.value is None):
            return None
        found[column.id] = cell
    if set(found) != set(table.schema.key_column_ids):
        return None
    return found


def _default_cell(column: ColumnSchema, table: TableInfo) -> Cell | None:
    if column.default_sql is None:
        return Cell(None, None)
    info = table.sequence_of(column.id)
    if info is not None and column.default_sql == info.default_sql:
        return Cell(None, sequence=info.name)
    node: exp.Expr = exp.maybe_parse(column.default_sql, dialect="postgres")
    return _cell(node, column, [])


def _cell(node: exp.Expr, column: ColumnSchema, oids: list[int]) -> Cell | None:
    """The cell ``node`` gives ``column``, or None if only the general path can evaluate it."""
    kind = column.type.kind
    if column.type.text_type:
        return None  # uuid and jsonb text is canonicalised by the general path's cast
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal):
        index = int(node.this.name) - 1
        if index >= len(oids) or not _compatible(oids[index], column):
            return None
        return Cell(index)
    if isinstance(node, exp.Null):
        return Cell(None, None)
    if isinstance(node, exp.CurrentTimestamp) and not node.this and kind is TypeKind.TIMESTAMP:
        # As the general path stores it: the instant, in UTC for a timestamp without zone.
        return Cell(None, is_now=True)
    if isinstance(node, exp.Boolean) and kind is TypeKind.BOOL:
        return Cell(None, node.this)
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    if not isinstance(literal, exp.Literal):
        return None
    if literal.is_string:
        if negative or kind not in (TypeKind.STRING, TypeKind.VARCHAR):
            return None
        return Cell(None, literal.this)
    text = ("-" if negative else "") + literal.this
    if kind in INT_LIMITS and text.lstrip("-").isdigit():
        return Cell(None, int(text))
    if kind in (TypeKind.FLOAT, TypeKind.DOUBLE, TypeKind.DECIMAL):
        try:
            number = decimal.Decimal(text)
        except decimal.InvalidOperation:
            return None
        return Cell(None, number if kind is TypeKind.DECIMAL else float(number))
    return None


def _compatible(oid: int, column: ColumnSchema) -> bool:
    """Whether a parameter of type ``oid`` arrives as the Python value ``column`` stores."""
    kind = column.type.kind
    if column.type.text_type:
        return False
    if kind in INT_LIMITS:
        return oid in _INT_OIDS
    if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        return oid in _FLOAT_OIDS
    if kind in (TypeKind.STRING, TypeKind.VARCHAR):
        return oid in _TEXT_OIDS
    return oid == column.type.pg_oid


def runs_short(write: KeyWrite) -> bool:
    """Whether applying ``write`` may be tried again after it found a row lock held (on the
    event loop, then on the session's thread): it draws no sequence value a user sees (a
    hidden key's may be drawn twice)."""
    return write.short


def _runs_short(write: KeyWrite) -> bool:
    hidden = {c.id for c in write.table.hidden_columns}
    return all(
        cell.sequence is None or column.id in hidden
        for row in write.rows
        for cell, column in zip(row, write.columns, strict=True)
    )


def execute(
    write: KeyWrite,
    txn: Transaction,
    params: list[Any],
    sequences: SessionSequences,
    now: object = None,
) -> int | None:
    """Apply the write; return its row count, or None when the general path must run it."""
    if write.reads:
        if write.row_update is None:
            return None
        return update_from_row(write.row_update, txn, Values(params, now))
    try:
        batch = _batch(write, [params], now, sequences)
    except Fallback:
        return None
    return _apply(write, txn, batch)


def _apply(write: KeyWrite, txn: Transaction, batch: pa.RecordBatch) -> int:
    count = 0
    table = write.table
    for tablet_id, part in by_tablet(table, batch):
        if write.kind == "INSERT":
            count += txn.insert(tablet_id, part, constraint_name=f"{table.name}_pkey")
            continue
        while True:
            conflicts: list[int] = []
            if write.kind == "UPDATE":
                count += txn.update(tablet_id, part, conflicts=conflicts)
            else:
                count += txn.delete(tablet_id, part, conflicts=conflicts)
            if not conflicts:
                break
            # READ COMMITTED: the row changed after the snapshot.  The WHERE names only the key
            # and the SET only constants, so re-evaluating against the newest version gives the
            # same row again: apply it at a fresh snapshot.
            txn.refresh_snapshot()
            part = part.take(pa.array(conflicts))
    return count


def insert_many(
    write: KeyWrite,
    txn: Transaction,
    param_rows: list[list[Any]],
    sequences: SessionSequences,
    now: object = None,
) -> bool:
    """Apply an INSERT once per parameter row, as one vectorised write (a pipelined batch:
    psycopg's executemany sends one-row INSERTs, pgjdbc's reWriteBatchedInserts multi-row
    ones); False when the general path must run them.  Raises the first DbError a row hits,
    leaving the caller to undo what was written and find that row one by one."""
    try:
        batch = _batch(write, param_rows, now, sequences)
    except Fallback:
        return False
    table = write.table
    for tablet_id, part in by_tablet(table, batch):
        txn.insert(tablet_id, part, constraint_name=f"{table.name}_pkey")
    return True


def write_many(
    write: KeyWrite,
    txn: Transaction,
    param_rows: list[list[Any]],
    sequences: SessionSequences,
    now: object = None,
) -> list[int] | None:
    """Apply a by-key UPDATE or DELETE once per parameter row (a pipelined batch); the row
    count of each, or None when the general path must run them.  Raises the first DbError a
    row hits, leaving the caller to undo what was written and find that row one by one.

    Rows with distinct keys go as one vectorised write when every row is found (one point
    read of them all first when the SET reads the row); otherwise (or when they are not all
    found) each row is applied in turn, as one statement after another would be, all
    within this one call."""
    if not write.reads:
        counts = _write_whole(write, txn, param_rows, sequences, now)
    elif write.row_update is not None and len(param_rows) > 1:
        counts = _update_whole(write.row_update, txn, param_rows, now)
    else:
        counts = None
    if counts is not None:
        return counts
    counts = []
    for params in param_rows:
        count = execute(write, txn, params, sequences, now)
        if count is None:
            return None
        counts.append(count)
    return counts


_WHOLE_SAVEPOINT = "nyala key write batch"


def _write_whole(
    write: KeyWrite,
    txn: Transaction,
    param_rows: list[list[Any]],
    sequences: SessionSequences,
    now: object,
) -> list[int] | None:
    """Every row as one write, if their keys are distinct and each finds its row; else
    nothing written and None."""
    try:
        batch = _batch(write, param_rows, now, sequences)
    except Fallback:
        return None
    keys = len(param_rows) * len(write.rows)
    if _distinct_keys(write, param_rows) != keys:
        return None  # the same row twice: its second write must see the first
    txn.savepoint(_WHOLE_SAVEPOINT)
    try:
        count = _apply(write, txn, batch)
    except BaseException:
        txn.rollback_to(_WHOLE_SAVEPOINT)
        txn.release(_WHOLE_SAVEPOINT)
        raise
    if count != keys:
        txn.rollback_to(_WHOLE_SAVEPOINT)
    txn.release(_WHOLE_SAVEPOINT)
    return [1] * keys if count == keys else None


def _update_whole(
    plan: RowUpdate, txn: Transaction, param_rows: list[list[Any]], now: object
) -> list[int] | None:
    """Every row of an UPDATE that reads its row as one read and one write
    (``update_rows``), if each finds its row unchanged; else nothing written and None."""
    txn.savepoint(_WHOLE_SAVEPOINT)
    try:
        count = update_rows(plan, txn, [Values(params, now) for params in param_rows])
    except BaseException:
        txn.rollback_to(_WHOLE_SAVEPOINT)
        txn.release(_WHOLE_SAVEPOINT)
        raise
    if count != len(param_rows):
        txn.rollback_to(_WHOLE_SAVEPOINT)
    txn.release(_WHOLE_SAVEPOINT)
    return [1] * len(param_rows) if count == len(param_rows) else None


def _distinct_keys(write: KeyWrite, param_rows: list[list[Any]]) -> int:
    """How many distinct keys the rows of ``_batch(write, param_rows)`` name, from the
    parameters themselves: a key cell is a parameter or a literal (``_key_cells``), and
    ``compared_all`` let through only values stored as they are, so equal parameters are
    equal keys, without converting the batch's key columns back to Python."""
    key_cells = [row[: write.key_count] for row in write.rows]
    if len(key_cells) == 1 and all(c.param is not None for c in key_cells[0]):
        take = operator.itemgetter(*(c.param for c in key_cells[0]))
        return len(set(map(take, param_rows)))
    return len(
        {
            tuple(params[c.param] if c.param is not None else c.value for c in cells)
            for params in param_rows
            for cells in key_cells
        }
    )


def _batch(
    write: KeyWrite, param_rows: list[list[Any]], now: object, sequences: SessionSequences
) -> pa.RecordBatch:
    """The rows of ``write`` once per parameter row, in that order, as one batch."""
    if len(param_rows) == 1 and len(write.rows) == 1:
        return _row_batch(write, param_rows[0], now, sequences)
    arrays: list[pa.Array | None] = []
    drawn: list[int] = []
    null: NotNullViolation | None = None  # raised after the draws (``_row_batch``)
    key_count = len(write.table.schema.key_columns)
    for position, column in enumerate(write.columns):
        cells = [row[position] for row in write.rows]
        if any(cell.sequence is not None for cell in cells):
            drawn.append(position)
            arrays.append(None)
            continue
        column_values = _column_values(cells, param_rows, now)
        if write.kind != "INSERT" and position < key_count:
            column_values = compared_all(column_values, column, write.table)
        try:
            arrays.append(assigned(column_values, column, write.table))
        except NotNullViolation as exc:
            null = null or exc
            arrays.append(None)
    # Sequence values last: a value the checks above would have made us fall back from is
    # never drawn (a drawn value is gone even if the statement fails, as in PostgreSQL).
    for position in drawn:
        column = write.columns[position]
        cells = [row[position] for row in write.rows] * len(param_rows)
        values = [Values(params, now) for params in param_rows for _ in write.rows]
        names = {c.sequence for c in cells if c.sequence is not None}
        fresh = {name: iter(sequences.nextval(name, sum(c.sequence == name for c in cells)))
                 for name in names}  # fmt: skip
        column_values = [
            int(next(fresh[c.sequence])) if c.sequence is not None else v.of(c)
            for c, v in zip(cells, values, strict=True)
        ]
        arrays[position] = assigned(column_values, column, write.table)
    if null is not None:
        raise null
    return pa.RecordBatch.from_arrays(arrays, names=[str(c.id) for c in write.columns])


def _row_batch(
    write: KeyWrite, params: list[Any], now: object, sequences: SessionSequences
) -> pa.RecordBatch:
    """``_batch`` of one row (the usual statement): its values checked one by one, sequence
    values drawn last as there, and the row converted to Arrow at once.

    A value PostgreSQL cannot convert (too long, out of range) fails before any draw, as
    its planner folds the constant; a NULL for a NOT NULL column fails after the draws, as
    PostgreSQL checks the row it built with them (the sequence advances)."""
    (cells,) = write.rows
    table = write.table
    compares = 0 if write.kind == "INSERT" else len(table.schema.key_columns)
    values: list[object] = []
    drawn: list[int] = []
    null: NotNullViolation | None = None
    for position, (cell, column) in enumerate(zip(cells, write.columns, strict=True)):
        if cell.sequence is not None:
            drawn.append(position)
            values.append(None)
            continue
        value = params[cell.param] if cell.param is not None else Values(params, now).of(cell)
        if position < compares:
            value = compared(value, column, table)
        try:
            values.append(checked_value(value, column, table))
        except NotNullViolation as exc:
            null = null or exc
            values.append(None)
    for position in drawn:
        name = cells[position].sequence
        assert name is not None, "drawn: a sequence's cell"
        value = int(sequences.nextval(name, 1)[0])
        values[position] = checked_value(value, write.columns[position], table)
    if null is not None:
        raise null
    return row_batch(tuple(values), write.struct)


def check_constants(write: KeyWrite, params: list[Any], now: object) -> None:
    """22001 for a text value too long for its varchar(n) column, before the general path
    draws SERIAL values: PostgreSQL folds such a constant (or a custom plan's parameter)
    when it plans the INSERT, so its sequences do not advance.  NOT NULL is checked after
    the draws, on the row they built, there as here (``write_batches``)."""
    values = Values(params, now)
    for cells in write.rows:
        for cell, column in zip(cells, write.columns, strict=True):
            if cell.sequence is not None or column.type.kind is not TypeKind.VARCHAR:
                continue
            value = values.of(cell) if cell.param is not None or not cell.is_now else None
            if isinstance(value, str):
                checked([value], column, write.table)


def _column_values(cells: list[Cell], param_rows: list[list[Any]], now: object) -> list[object]:
    """One column's values: its cell in each of the write's rows, once per parameter row."""
    if len(cells) == 1 and cells[0].param is not None:
        index = cells[0].param
        return [params[index] for params in param_rows]  # the usual: one row, a parameter
    return [
        params[cell.param] if cell.param is not None else Values(params, now).of(cell)
        for params in param_rows
        for cell in cells
    ]
