"""Bind a query against the catalog: resolve tables and columns, annotate types, type parameters.

sqlglot's ``qualify`` resolves every column to its source and expands ``*``;
``annotate_types`` then gives each expression its type, which later rewrites
need (integer division, ``sum`` of integers) and from which ``$n`` parameters
the client left untyped take their type, as PostgreSQL infers them from
context.  Unknown tables raise 42P01 and unknown columns 42703, each with the
position of the name in the query text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from catalog.table import TableInfo
from sql.common.datatypes import oid_for_sqlglot_type
from sql.common.names import SCHEMA, identifier_name, strip_schema
from sql.frontend.parser import DIALECT
from sql.planner import system_views
from sql.planner.blank_padding import mark_blank_padded_parameters, trim_blank_padded_literals
from sql.planner.literal_casts import (
    check_literal_casts,
    read_any_array_literals,
    spell_compared_dates,
)
from sql.planner.query_checks import (
    check_distinct_on,
    check_oid_arithmetic,
    check_set_operations,
    check_tablesample,
)
from sql.planner.tablet_selection import selected_tablets
from sql.planner.time_travel import snapshot_of
from sql.planner.values_lists import shape_values
from sql.planner.views import VIA_VIEW, VIEW_ALIASES, VIEWS_READ, expand_views
from storage.data_type import TabletId
from storage.errors import AmbiguousColumn, UndefinedColumn, UndefinedParameter
from storage.schema import ColumnSchema
from storage.type_oids import ARRAY_OID, TypeOid

if TYPE_CHECKING:
    from catalog.catalog import Catalog

DT = exp.DataType.Type

_OID_BY_SQLGLOT = {
    DT.BOOLEAN: TypeOid.BOOL,
    DT.TINYINT: TypeOid.INT2,
    DT.SMALLINT: TypeOid.INT2,
    DT.INT: TypeOid.INT4,
    DT.BIGINT: TypeOid.INT8,
    DT.FLOAT: TypeOid.FLOAT4,
    DT.DOUBLE: TypeOid.FLOAT8,
    DT.DECIMAL: TypeOid.NUMERIC,
    DT.TEXT: TypeOid.TEXT,
    DT.VARCHAR: TypeOid.VARCHAR,
    DT.CHAR: TypeOid.BPCHAR,
    DT.BPCHAR: TypeOid.BPCHAR,
    DT.NCHAR: TypeOid.BPCHAR,
    DT.VARBINARY: TypeOid.BYTEA,
    DT.BINARY: TypeOid.BYTEA,
    DT.DATE: TypeOid.DATE,
    DT.TIMESTAMP: TypeOid.TIMESTAMP,
    DT.TIMESTAMPTZ: TypeOid.TIMESTAMPTZ,
    DT.UUID: TypeOid.UUID,
    DT.JSON: TypeOid.JSON,
    DT.JSONB: TypeOid.JSONB,
}


@dataclass(slots=True)
class TableRef:
    """One base-table reference in a query and the columns the query reads from it."""

    table: TableInfo
    node: exp.Table
    alias: str
    columns: list[ColumnSchema] = field(default_factory=list)
    snapshot: int | None = None
    tablets: tuple[TabletId, ...] | None = None
    via_view: str | None = None
    """The view whose query named the table (read with that view owner's privileges)."""


@dataclass(slots=True)
class BoundQuery:
    """A qualified, type-annotated query and what it reads."""

    ast: exp.Expr
    tables: list[TableRef]
    param_oids: list[int]
    views_read: list[tuple[str, str | None]] = field(default_factory=list)
    """Each view the query reads and the view it was read through (None: the query)."""
    view_columns: list[frozenset[str]] = field(default_factory=list)
    """The columns read from each view in ``views_read`` (for column privileges)."""


def sqlglot_type_oid(dtype: exp.DataType | None) -> int:
    if dtype is None:
        return 0
    return _OID_BY_SQLGLOT.get(dtype.this, 0)


def cte_names(ast: exp.Expr) -> set[str]:
    return {cte.alias_or_name for cte in ast.find_all(exp.CTE)}


def base_tables(ast: exp.Expr) -> list[exp.Table]:
    """Table nodes that name catalog tables (not CTEs, not table functions)."""
    ctes = cte_names(ast)
    return [
        t
        for t in ast.find_all(exp.Table)
        if isinstance(t.this, exp.Identifier) and t.name not in ctes
    ]


def _name_position(node: exp.Expr) -> int | None:
    ident = node if isinstance(node, exp.Identifier) else node.find(exp.Identifier)
    if ident is not None and "start" in ident.meta:
        return int(ident.meta["start"]) + 1
    return None


_OPTIMIZE_COLUMN = re.compile(r"Column '([^']*)' could not be resolved")
_AMBIGUOUS = re.compile(r"Ambiguous column '([^']*)'|is ambiguous")


def _find_identifier_position(ast: exp.Expr, name: str) -> int | None:
    for ident in ast.find_all(exp.Identifier):
        if ident.name == name and "start" in ident.meta:
            return int(ident.meta["start"]) + 1
    return None


def _readable(table: Any) -> tuple[Any, ...]:
    """The columns a query may name: a catalog table's hidden key too (system views have none)."""
    return getattr(table, "readable_columns", table.columns)


def bind_query(
    ast: exp.Expr,
    catalog: Catalog,
    declared_param_oids: list[int] | tuple[int, ...] = (),
    date_order: str = "MDY",
    interval_style: str = "postgres",
) -> BoundQuery:
    """Resolve and annotate a SELECT-like statement; raise 42P01/42703 with positions."""
    views_read: list[tuple[str, str | None]] = []
    view_aliases: list[str] = []
    if catalog.views():
        ast = expand_views(ast.copy(), catalog)
        views_read = ast.meta.get(VIEWS_READ, [])
        view_aliases = ast.meta.get(VIEW_ALIASES, [])
    original = ast
    ast = shape_values(ast.copy())
    check_literal_casts(ast, date_order, interval_style)
    for node in base_tables(ast):
        strip_schema(node)
        if not node.alias:
            # sqlglot would alias it with an unquoted, then folded, copy of a quoted name.
            node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name, quoted=True)))
    for column in ast.find_all(exp.Column):
        if column.args.get("db") is not None and identifier_name(column.args["db"]) == SCHEMA:
            column.set("db", None)
    refs: list[TableRef] = []
    mapping: dict[str, object] = {}
    # A hidden key column can be named but is not part of ``*`` (sqlglot's visible columns).
    visible: dict[str, object] = {}
    for node, orig_node in zip(base_tables(ast), base_tables(original), strict=True):
        position = _name_position(orig_node)
        table = (
            catalog.find_table(node.name)
            or catalog.partition_view(node.name)
            or system_views.find(node.name)
            or catalog.get_table(node.name, position=position)
        )
        mapping[table.name] = {c.name: c.type.pg_name() for c in _readable(table)}
        visible[table.name] = {c.name for c in table.columns}
        refs.append(
            TableRef(
                table, node, node.alias_or_name, snapshot=snapshot_of(node),
                tablets=selected_tablets(node, table), via_view=orig_node.meta.get(VIA_VIEW),
            )
        )  # fmt: skip
    schema = (
        # Catalog names are exact (folded when they were created), never normalised again.
        MappingSchema(mapping, visible=visible, dialect=DIALECT, normalize=False)
        if mapping
        else MappingSchema(dialect=DIALECT, normalize=False)
    )
    try:
        ast = qualify(
            ast,
            schema=schema,
            dialect=DIALECT,
            quote_identifiers=True,
            validate_qualify_columns=True,
            identify=False,
        )
    except OptimizeError as exc:
        message = str(exc)
        match = _OPTIMIZE_COLUMN.search(message)
        if match:
            name = match.group(1)
            raise UndefinedColumn(
                f'column "{name}" does not exist',
                position=_find_identifier_position(original, name),
            ) from exc
        if "mbiguous" in message:
            raise AmbiguousColumn(message) from exc
        raise UndefinedColumn(message) from exc
    ast = annotate_types(ast, schema=schema, dialect=DIALECT)
    spell_compared_dates(ast, date_order)
    read_any_array_literals(ast)
    trim_blank_padded_literals(ast)
    check_set_operations(ast)
    check_distinct_on(ast)
    check_tablesample(ast)
    check_oid_arithmetic(ast)
    by_alias: dict[str, set[str]] = {}
    for column in ast.find_all(exp.Column):
        if column.table:
            by_alias.setdefault(column.table, set()).add(column.name)
    for ref, node in zip(refs, base_tables(ast), strict=True):
        ref.node = node
        ref.alias = node.alias_or_name
        wanted = by_alias.get(ref.alias, set())
        ref.columns = [c for c in _readable(ref.table) if c.name in wanted]
    param_oids = infer_parameter_types(ast, declared_param_oids)
    mark_blank_padded_parameters(ast, param_oids)
    view_columns = [frozenset(by_alias.get(alias, ())) for alias in view_aliases]
    return BoundQuery(ast, refs, param_oids, views_read, view_columns)


def parameter_number(node: exp.Expr) -> int:
    """The n of a ``$n`` node."""
    inner = node.this
    text = inner.name if isinstance(inner, exp.Expression) else str(inner)
    return int(text)


def parameters(ast: exp.Expr) -> list[exp.Parameter]:
    return [
        p
        for p in ast.find_all(exp.Parameter)
        if isinstance(p.this, exp.Literal) and not p.this.is_string
    ]


def _context_oid(param: exp.Expr) -> int:
    parent = param.parent
    while isinstance(parent, exp.Paren):
        param, parent = parent, parent.parent
    if isinstance(parent, exp.Cast):
        if parent.to.this is exp.DataType.Type.ARRAY and parent.to.expressions:
            return _ARRAY_OIDS.get(oid_for_sqlglot_type(parent.to.expressions[0]), 0)
        return oid_for_sqlglot_type(parent.to)
    if parent is not None and _is_any_or_all(parent):
        comparison = parent.parent
        if isinstance(comparison, exp.Binary) and comparison.expression is parent:
            element = sqlglot_type_oid(comparison.this.type) or TypeOid.TEXT
            return _ARRAY_OIDS.get(element, 0)
        return 0
    if isinstance(parent, (exp.Like, exp.ILike)):
        return TypeOid.TEXT
    if isinstance(parent, (exp.Limit, exp.Offset)):
        return TypeOid.INT8
    if isinstance(parent, exp.Between):
        other = parent.this if param is not parent.this else parent.args.get("low")
        return sqlglot_type_oid(other.type if other is not None else None)
    if isinstance(parent, exp.In):
        if param is parent.this:
            exprs = parent.expressions
            return sqlglot_type_oid(exprs[0].type) if exprs else 0
        return sqlglot_type_oid(parent.this.type)
    if isinstance(parent, _TEXT_ARRAY_OPERANDS) and param is parent.expression:
        return _ARRAY_OIDS[TypeOid.TEXT]  # jsonb #> $1, #- $1, ?| $1, ?& $1 take a text[]
    if isinstance(parent, exp.Binary):
        other = parent.right if parent.left is param else parent.left
        oid = sqlglot_type_oid(other.type)
        if isinstance(parent, (exp.And, exp.Or)):
            return TypeOid.BOOL
        if oid in _OWN_OPERAND_TYPES and not isinstance(parent, _SAME_TYPE_OPERATORS):
            return 0  # jsonb -> $1 takes text, as PostgreSQL reads an untyped operand there
        return oid
    if isinstance(parent, (exp.Not, exp.Where)):
        return TypeOid.BOOL
    return 0


_ARRAY_OIDS = {int(element): array for element, array in ARRAY_OID.items()}
_OWN_OPERAND_TYPES = frozenset((TypeOid.UUID, TypeOid.JSON, TypeOid.JSONB))
"""Types whose operators mostly take another type: a parameter is of the type only beside
a comparison, ``||`` or containment."""
_SAME_TYPE_OPERATORS = (
    exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ,
    exp.DPipe, exp.ArrayContainsAll, exp.ArrayContainedBy,
)  # fmt: skip


_TEXT_ARRAY_OPERANDS = (
    exp.JSONBExtract, exp.JSONBExtractScalar, exp.JSONBDeleteAtPath,
    exp.JSONBContainsAnyTopKeys, exp.JSONBContainsAllTopKeys,
)  # fmt: skip


def _is_any_or_all(node: exp.Expr | None) -> bool:
    """``ANY(...)`` or ``ALL(...)``, which sqlglot parses either way."""
    if isinstance(node, (exp.Any, exp.All)):
        return True
    return isinstance(node, exp.Anonymous) and node.name.lower() in ("any", "all")


def infer_parameter_types(ast: exp.Expr, declared: list[int] | tuple[int, ...] = ()) -> list[int]:
    """One OID per ``$n``: as declared by the client, else from context, else text."""
    found: dict[int, int] = {}
    highest = len(declared)
    for param in parameters(ast):
        number = parameter_number(param)
        if number < 1:
            raise UndefinedParameter(f"there is no parameter ${number}")
        highest = max(highest, number)
        if number <= len(declared) and declared[number - 1]:
            continue
        oid = _context_oid(param)
        if oid and not found.get(number):
            found[number] = oid
    oids = []
    for number in range(1, highest + 1):
        if number <= len(declared) and declared[number - 1]:
            oids.append(declared[number - 1])
        else:
            oids.append(found.get(number) or TypeOid.TEXT)
    return oids
