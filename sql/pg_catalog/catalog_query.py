"""A catalog query compiled for the catalog DuckDB: ``SystemQuery`` and ``compile_system_query``.

Compiling finds the output names PostgreSQL gives, the parameter types, the user tables
the query reads (``catalog_user_tables``), its rewrite (``catalog_rewrite``), which output
columns are reg* or name-typed rather than text, and the live relations it reads.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from catalog.table import TableInfo
from sql.common import array_input
from sql.common.datatypes import duckdb_type
from sql.common.result import ResultColumn
from sql.pg_catalog import catalog_numeric, reg_arrays
from sql.pg_catalog.catalog_rewrite import (
    LIVE,
    REG_COLUMNS,
    rewrite,
)
from sql.pg_catalog.catalog_user_tables import UserTable, replace_user_tables
from sql.pg_catalog.relations import DESCRIBED_COLUMN_TYPES
from sql.pg_catalog.system_columns import names_tableoid
from sql.planner.binder import infer_parameter_types, parameter_number, parameters
from sql.planner.query_checks import check_oid_arithmetic
from sql.planner.transpile import SessionFacts, output_name
from storage.errors import UndefinedParameter
from storage.type_oids import TypeOid


def _output_name(projection: exp.Expr) -> str:
    """PostgreSQL's column name, seeing through ``pg_catalog.f(...)`` and ``(record).field``."""
    if isinstance(projection, exp.Dot):
        if isinstance(projection.this, exp.Identifier):
            return output_name(projection.expression)
        return projection.expression.name
    return output_name(projection)


_TEXTS_KEPT = 16
"""How many parameter sets' SQL one prepared catalog query keeps."""


@dataclass(slots=True)
class SystemQuery:
    """A compiled system-catalog query: its rewritten AST, output names and parameter types.

    Parameters become literals when it runs (``sql``): catalog queries are
    small, and a literal takes its type from where it stands, as PostgreSQL's
    untyped parameters do (``attrelid = '16398'``), which DuckDB's typed
    bound values would not.
    """

    ast: exp.Expr
    names: list[str | None]
    param_oids: list[int]
    columns: tuple[ResultColumn, ...] | None = None
    user_tables: tuple[UserTable, ...] = ()
    live: frozenset[str] = frozenset()
    """The activity relations it reads, whose rows are built afresh at every run."""
    reg_columns: dict[int, int] = field(default_factory=dict)
    """The type OID of each VARCHAR output column (by position) that is no text: a reg*
    value (shown by name) or a catalog column of type name."""

    _texts: dict[tuple[str, ...], str] = field(default_factory=dict)
    """The DuckDB SQL made for each set of parameter values (by ``repr``, which tells
    ``1`` from ``True`` and ``1.0`` from ``1.00``): a catalog query run again costs
    no AST copy and SQL generation."""

    def sql(self, params: Sequence[Any] | None) -> str:
        values = list(params) if params is not None else [None] * len(self.param_oids)
        if len(values) < len(self.param_oids):
            raise UndefinedParameter(f"there is no parameter ${len(values) + 1}")
        key = tuple(map(repr, values))
        text = self._texts.get(key)
        if text is None:
            text = self._text(values)
            if len(self._texts) < _TEXTS_KEPT:
                self._texts[key] = text
        return text

    def _text(self, values: list[Any]) -> str:
        ast = self.ast.copy()
        for param in parameters(ast):
            value = values[parameter_number(param) - 1]
            if param.meta.get(reg_arrays.ARRAY_TEXT) and isinstance(value, str):
                value = array_input.flatten(array_input.parse_array(value))
            param.replace(_literal(value))
        return ast.sql(dialect="duckdb", copy=False)  # a copy of its own already


def _literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return exp.Literal.number(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return exp.Literal.string(bytes(value).decode("utf-8", "replace"))
    if isinstance(value, list):  # an array parameter: ``oid = ANY($1::regclass[])``
        return exp.Array(expressions=[_literal(v) for v in value])
    return exp.Literal.string(str(value))


def compile_system_query(
    ast: exp.Expr,
    facts: SessionFacts,
    has_user_table: Callable[[str], bool],
    find_table: Callable[[str], TableInfo],
    declared: Sequence[int] = (),
) -> SystemQuery:
    """Compile a query reading system relations or calling catalog functions, and any user
    tables beside them (``find_table`` resolves those, 42P01 when missing)."""
    select = ast
    while isinstance(select, exp.SetOperation):
        select = select.this
    projections = select.expressions if isinstance(select, exp.Select) else []
    # None stands for the columns ``*`` expands to, which DuckDB names.
    names: list[str | None] = [None if p.is_star else _output_name(p) for p in projections]
    if names.count(None) > 1:
        names = []
    param_oids = infer_parameter_types(ast, list(declared))
    check_oid_arithmetic(ast)
    ast = ast.copy()
    tableoid = names_tableoid(ast)
    user_tables = replace_user_tables(ast, find_table, has_user_table, per_row_tableoid=tableoid)
    views = {u.view: u.table for u in user_tables if not u.in_union}
    # Replacing user tables adds ``tableoid`` columns only where the query names one.
    rewritten = rewrite(
        ast, facts, has_user_table, views, copy=False, names_tableoid=None if tableoid else False
    )
    live = rewritten.meta.get(LIVE, frozenset())
    reg_columns = {
        **_name_columns(projections, user_tables),
        **rewritten.meta.get(REG_COLUMNS, {}),
    }
    if user_tables:
        user_columns = catalog_numeric.column_types(
            [(c.name, duckdb_type(c.type)) for c in u.table.schema.columns] for u in user_tables
        )
        types = {**catalog_numeric.CATALOG_COLUMN_TYPES, **user_columns}
    else:
        types = catalog_numeric.CATALOG_COLUMN_TYPES
    rewritten = catalog_numeric.rewrite_numerics(rewritten, types)
    return SystemQuery(
        rewritten, names, param_oids, user_tables=user_tables, live=live, reg_columns=reg_columns
    )


_NAME_FUNCTIONS = (
    exp.CurrentUser, exp.SessionUser, exp.CurrentDatabase, exp.CurrentCatalog, exp.CurrentSchema
)  # fmt: skip
"""The functions of type name: current_user, current_database() ..."""


def _name_columns(
    projections: Sequence[exp.Expr], user_tables: Sequence[UserTable]
) -> dict[int, int]:
    """The output columns (by position) that name a catalog column of type name, "char" or
    varchar, which PostgreSQL describes as such (19, 18, 1043), not text; a user table's
    column of that name is text."""
    user_names = {u.table.name for u in user_tables}
    user_columns = {c.name for u in user_tables for c in u.table.schema.columns}
    found = {}
    for position, projection in enumerate(projections):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, _NAME_FUNCTIONS):
            found[position] = int(TypeOid.NAME)
        elif (
            isinstance(inner, exp.Column)
            and inner.name in DESCRIBED_COLUMN_TYPES
            and _of_catalog(inner, user_names, user_columns)
        ):
            found[position] = DESCRIBED_COLUMN_TYPES[inner.name]
        if isinstance(inner, exp.Column) and _reads_relation(inner, _REGTYPE_COLUMNS):
            found[position] = int(TypeOid.REGTYPE)
    return found


_REGTYPE_COLUMNS = {"data_type": "pg_sequences"}
"""Catalog columns held as a type's name that PostgreSQL describes as regtype (2206), by
column name and the one relation whose column of that name is one (information_schema's
``data_type`` columns are character_data)."""


def _reads_relation(column: exp.Column, columns: Mapping[str, str]) -> bool:
    """Whether ``column`` is the column ``columns`` names in its relation: by its qualifier,
    else by that relation being the only one its SELECT reads."""
    relation = columns.get(column.name)
    select = column.find_ancestor(exp.Select)
    if relation is None or select is None:
        return False
    tables = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    if column.table:
        return any(t.alias_or_name == column.table and t.name == relation for t in tables)
    return len(tables) == 1 and tables[0].name == relation


def _of_catalog(column: exp.Column, user_names: set[str], user_columns: set[str]) -> bool:
    """Whether ``column`` reads a catalog relation, not a user table: by its qualifier,
    else by no user table having a column of its name."""
    if not column.table:
        return column.name not in user_columns
    select = column.find_ancestor(exp.Select)
    tables = select.find_all(exp.Table) if select is not None else iter(())
    return any(t.alias_or_name == column.table and t.name not in user_names for t in tables)
