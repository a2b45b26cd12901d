"""INSERT ... ON CONFLICT and UPSERT: plan the new rows beside the rows they collide with.

The INSERT's rows (cast, defaults filled) become a derived table named
``excluded``, left-joined to the target table on the primary key, so one
DuckDB query yields each new row, whether its key is live, and for DO
UPDATE the updated image of the existing row (SET expressions see both
``excluded.col`` and the target's columns) and the WHERE condition.  Kudu's
operations then apply it: INSERT for new keys, UPDATE for DO UPDATE, nothing
for DO NOTHING (Kudu's INSERT_IGNORE).  Impala's ``UPSERT INTO`` is DO UPDATE
of the listed non-key columns (all of them without a column list).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.frontend.dialect import Upsert
from sql.planner.numeric_casts import assignment_cast
from sql.planner.pushdown import KEY_IN_META
from storage.errors import (
    CardinalityViolation,
    FeatureNotSupported,
    InvalidColumnReference,
    SqlSyntaxError,
    UndefinedColumn,
)
from storage.schema import ColumnSchema

EXCLUDED = "excluded"
EXISTS = "__nyala_exists"
DO_UPDATE = "__nyala_do_update"
_IMAGE = "__nyala_new_"


@dataclass(frozen=True, slots=True)
class ConflictAction:
    """What to do with rows whose key is live: nothing, or update them.

    ``arbiter`` names the unique index ``ON CONFLICT (cols)`` inferred when its columns
    are not the primary key's; ``columns`` are the arbiter's column names."""

    update: bool
    arbiter: str | None = None
    columns: tuple[str, ...] = ()
    any_unique: bool = False
    """``ON CONFLICT DO NOTHING`` with no target: a row colliding with any unique index is
    skipped too, as in PostgreSQL."""


def _cast(node: exp.Expr, column: ColumnSchema) -> exp.Expr:
    return assignment_cast(node, column.type)


def wrap(
    select: exp.Select,
    table: TableInfo,
    alias: str,
    ast: exp.Insert,
    targets: list[ColumnSchema],
    key_values: list[exp.Expr] | None = None,
) -> tuple[exp.Select, ConflictAction]:
    """The INSERT's row query rewritten to carry conflict information; see the module doc.

    ``key_values`` are the first key column's expressions of a VALUES list: when they
    are all constants, the target's scan reads only rows with those keys
    (``pushdown.KEY_IN_META``), instead of the whole table.
    """
    key_ids = set(table.schema.key_column_ids)
    arbiter: tuple[str | None, tuple[str, ...]] = (
        None, tuple(c.name for c in table.schema.key_columns)
    )  # fmt: skip
    if isinstance(ast, Upsert):
        sets = {
            c.id: exp.column(c.name, EXCLUDED, quoted=True) for c in targets if c.id not in key_ids
        }
        action, where = ConflictAction(update=True), None
    else:
        conflict = ast.args["conflict"]
        if conflict.args.get("constraint") is not None:
            raise FeatureNotSupported(
                "ON CONFLICT ON CONSTRAINT is not supported; name the key columns"
            )
        keys = conflict.args.get("conflict_keys") or []
        named = {_key_name(k) for k in keys}
        update = "UPDATE" in (conflict.args.get("action") or exp.Var(this="")).name.upper()
        if keys and named != {c.name for c in table.schema.key_columns}:
            arbiter = _arbiter_index(table, named)
        if update and not keys:
            raise SqlSyntaxError(
                "ON CONFLICT DO UPDATE requires inference specification or constraint name"
            )
        sets = {}
        for assignment in conflict.expressions if update else []:
            name = identifier_name(assignment.this)
            column = table.schema.find(name)
            if column is None:
                raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
            if column.id in key_ids:
                raise FeatureNotSupported(
                    f'ON CONFLICT DO UPDATE cannot change primary key column "{name}"'
                )
            sets[column.id] = assignment.expression.copy()
        where_node = conflict.args.get("where")
        where = where_node.this.copy() if where_node is not None else None
        action = ConflictAction(
            update=update, arbiter=arbiter[0], columns=arbiter[1], any_unique=not keys
        )
    columns = table.schema.columns
    projections: list[exp.Expr] = [
        exp.alias_(exp.column(c.name, EXCLUDED, quoted=True), c.name, quoted=True) for c in columns
    ]
    first_key = table.schema.key_columns[0]
    match_columns = [table.schema.find(n) for n in action.columns or arbiter[1]]
    projections.append(
        exp.alias_(
            exp.Not(
                this=exp.Is(
                    this=exp.column(first_key.name, alias, quoted=True), expression=exp.Null()
                )
            ),
            EXISTS,
            quoted=True,
        )
    )
    if action.update:
        for index, column in enumerate(columns):
            expr = sets.get(column.id)
            image = (
                _cast(expr, column)
                if expr is not None
                else exp.column(column.name, alias, quoted=True)
            )
            projections.append(exp.alias_(image, f"{_IMAGE}{index}", quoted=True))
        condition = where if where is not None else exp.true()
        projections.append(
            exp.alias_(exp.func("coalesce", condition, exp.false()), DO_UPDATE, quoted=True)
        )
    excluded = exp.Subquery(
        this=select, alias=exp.TableAlias(this=exp.to_identifier(EXCLUDED, quoted=True))
    )
    on = exp.and_(
        *[
            exp.EQ(
                this=exp.column(c.name, alias, quoted=True),
                expression=exp.column(c.name, EXCLUDED, quoted=True),
            )
            for c in match_columns
            if c is not None
        ]
    )
    target = exp.Table(
        this=exp.to_identifier(table.name, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
    )
    if key_values and arbiter[0] is None:
        target.meta[KEY_IN_META] = key_values
    wrapped = exp.select(*projections).from_(excluded).join(target, on=on, join_type="left")
    return wrapped, action


def _arbiter_index(table: TableInfo, named: set[str]) -> tuple[str | None, tuple[str, ...]]:
    """The unique index (not partial) over exactly the ``ON CONFLICT (cols)`` columns."""
    for index in table.indexes:
        columns = tuple(table.schema.column(c).name for c in index.columns)
        if index.unique and index.valid and index.predicate is None and set(columns) == named:
            return index.name, columns
    raise InvalidColumnReference(
        "there is no unique or exclusion constraint matching the ON CONFLICT specification"
    )


def _key_name(node: exp.Expr) -> str:
    while isinstance(node, exp.Ordered):
        node = node.this
    return identifier_name(node.this if isinstance(node, exp.Column) else node)


def split(
    table: TableInfo, rows: pa.Table, action: ConflictAction
) -> tuple[pa.Table, pa.Table | None]:
    """The rows to insert and (DO UPDATE) the new images of live rows to update.

    Several rows of one statement with the same key: DO NOTHING keeps the
    first (the later ones conflict with it); DO UPDATE fails with 21000, as in
    PostgreSQL.
    """
    names = [c.name for c in table.schema.columns]
    key_names = list(action.columns) or [c.name for c in table.schema.key_columns]
    numbered = (
        rows.select(names)
        .rename_columns(names)
        .append_column("__nyala_row", pa.array(np.arange(rows.num_rows)))
    )
    groups = numbered.group_by(key_names, use_threads=False).aggregate(
        [("__nyala_row", "min"), ("__nyala_row", "count")]
    )
    if action.update and pc.max(groups["__nyala_row_count"]).as_py() > 1:
        raise CardinalityViolation(
            "ON CONFLICT DO UPDATE command cannot affect row a second time",
            hint="Ensure that no rows proposed for insertion within the same command "
            "have duplicate constrained values.",
        )
    first = np.zeros(rows.num_rows, dtype=bool)
    first[groups["__nyala_row_min"].to_numpy()] = True
    exists = rows[EXISTS].to_numpy(zero_copy_only=False).astype(bool)
    inserts = rows.select(names).filter(pa.array(first & ~exists))
    if not action.update:
        return inserts, None
    do_update = rows[DO_UPDATE].to_numpy(zero_copy_only=False).astype(bool)
    images = rows.select([f"{_IMAGE}{i}" for i in range(len(names))]).rename_columns(names)
    return inserts, images.filter(pa.array(exists & do_update))
