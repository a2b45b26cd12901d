"""Which of its target's columns a write inserts, updates and reads, for column privileges.

PostgreSQL checks a write against the columns it names, as its parser marks
them (RTEPermissionInfo's insertedCols, updatedCols, selectedCols): INSERT
the listed columns (or the leading columns the values fill), UPDATE the SET
columns and ON CONFLICT DO UPDATE's, and SELECT every target column read by
WHERE, SET expressions, RETURNING, the conflict target and DO UPDATE (where
``excluded.c`` reads ``c`` too).  The columns read are found by binding a
query made of exactly those expressions over the target, so names resolve
as in the statement (a subquery's own tables keep their columns).  Columns
are pg_attribute numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.names import identifier_name, listed_columns
from sql.dml.conflict import EXCLUDED
from sql.frontend.dialect import Upsert
from sql.planner.binder import bind_query

Columns = tuple[int, ...] | None
"""Column numbers a privilege is needed on; () for any one column, None for none at all."""


@dataclass(frozen=True, slots=True)
class ColumnUse:
    inserted: Columns = None
    updated: Columns = None
    selected: Columns = None


def column_use(ast: exp.Expr, table: TableInfo, catalog: Catalog) -> ColumnUse:
    """What the INSERT, UPDATE or DELETE ``ast`` on ``table`` does to each of its columns."""
    if isinstance(ast, exp.Insert):
        return _insert(ast, table, catalog)
    target = ast.this
    alias = target.alias_or_name
    reads: list[exp.Expr] = []
    updated: Columns = None
    if isinstance(ast, exp.Update):
        updated = tuple(_attnums(table, [identifier_name(e.this) for e in ast.expressions]))
        reads += [e.expression for e in ast.expressions if isinstance(e, exp.EQ)]
    reads += _returning(ast)
    joined = [
        *(
            ast.args["from_"].expressions or [ast.args["from_"].this]
            if ast.args.get("from_")
            else []
        ),
        *(ast.args.get("using") or []),
    ]
    where = ast.args.get("where")
    where_node = where.this if where else None
    selected = _read(
        table, catalog, target, alias, reads, joined, where_node, ast.args.get("with_")
    )
    return ColumnUse(None, updated, selected)


def _insert(ast: exp.Insert, table: TableInfo, catalog: Catalog) -> ColumnUse:
    target, names = listed_columns(ast.this)
    if names is None:
        width = _width(ast.expression, bool(ast.args.get("default")))
        names = [c.name for c in table.columns][:width]
    inserted = tuple(_attnums(table, names))
    alias = target.alias_or_name
    reads = _returning(ast)
    updated: Columns = None
    where = None
    conflict = ast.args.get("conflict")
    if isinstance(ast, Upsert):  # Impala's UPSERT updates the listed non-key columns
        keys = {table.attnum(c.id) for c in table.schema.key_columns}
        updated = tuple(n for n in inserted if n not in keys) or None
    elif isinstance(conflict, exp.OnConflict):
        reads += [k.this if isinstance(k, exp.Ordered) else k for k in conflict.args.get(
            "conflict_keys") or []]  # fmt: skip
        sets = [e for e in conflict.expressions if isinstance(e, exp.EQ)]
        if sets:
            updated = tuple(_attnums(table, [identifier_name(e.this) for e in sets]))
        reads += [e.expression for e in sets]
        if conflict.args.get("where") is not None:
            where = conflict.args["where"].this
    reads = [_excluded_as(node.copy(), alias) for node in reads]
    where = _excluded_as(where.copy(), alias) if where is not None else None
    selected = _read(table, catalog, target, alias, reads, [], where, ast.args.get("with_"))
    return ColumnUse(inserted, updated, selected)


def _width(source: exp.Expr | None, default_values: bool) -> int | None:
    """How many leading columns an INSERT with no column list fills (None: all of them)."""
    if default_values:
        return 0
    if isinstance(source, exp.Values):
        return max((len(row.expressions) for row in source.expressions), default=0)
    first = source
    while isinstance(first, exp.SetOperation):
        first = first.this
    if isinstance(first, exp.Select) and not any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in first.expressions
    ):
        return len(first.expressions)
    return None


def _returning(ast: exp.Expr) -> list[exp.Expr]:
    returning = ast.args.get("returning")
    return list(returning.expressions) if returning is not None else []


def _excluded_as(node: exp.Expr, alias: str) -> exp.Expr:
    """``excluded.c`` reads the target's column ``c`` as far as privileges go."""
    for column in list(node.find_all(exp.Column)):
        if column.table == EXCLUDED:
            column.set("table", exp.to_identifier(alias, quoted=True))
    return node


def _read(
    table: TableInfo,
    catalog: Catalog,
    target: exp.Expr,
    alias: str,
    reads: list[exp.Expr],
    joined: list[exp.Expr],
    where: exp.Expr | None,
    with_: exp.Expr | None,
) -> Columns:
    if not reads and where is None:
        return None
    node = exp.Table(
        this=exp.to_identifier(table.name, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
    )
    query = exp.select(*[e.copy() for e in reads] or [exp.Literal.number(1)]).from_(node)
    for source in joined:
        query = query.join(source.copy(), join_type="cross")
    if where is not None:
        query = query.where(where.copy())
    if with_ is not None:  # the statement's CTEs, which its FROM, USING or subqueries name
        query.set("with_", with_.copy())
    bound = bind_query(query, catalog)
    used = next(
        (
            r.columns
            for r in bound.tables
            if r.table.table_id == table.table_id and r.alias == alias
        ),
        [],
    )
    attnums = [n for c in used if (n := table.attnum(c.id))]
    return tuple(attnums) or None


def _attnums(table: TableInfo, names: list[str]) -> list[int]:
    out = []
    for name in names:
        column = table.schema.find(name)
        if column is not None and table.attnum(column.id):
            out.append(table.attnum(column.id))
    return out
