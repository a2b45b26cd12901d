"""Run queries over pg_catalog and information_schema on a per-session DuckDB of catalog rows.

A statement that reads a system relation (``pg_catalog.pg_class``, ``pg_type``,
``information_schema.columns`` ...) or calls a catalog function
(``format_type``, ``pg_get_indexdef``, ``pg_sleep`` ...) is rewritten for
DuckDB (schemas renamed, reg* casts and PostgreSQL-only operators turned into
macro calls) and run on a small in-memory DuckDB whose ``pgc`` schema is
refilled from the nyala catalog whenever the catalog, the comments or the
session's settings changed since the last such statement.  User tables it
also reads (``SELECT pg_sleep(1) FROM t``, a join of ``pg_class`` with a
table) become ``ScanSource`` streams at the statement's snapshot registered
beside the catalog views, so one DuckDB query answers both.
"""

from __future__ import annotations

import atexit
import datetime as dt
import decimal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb
import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.privileges import PrivilegeStore, database_owner
from catalog.roles import RoleStore
from catalog.table import TableInfo
from sql.common import array_input
from sql.common.datatypes import (
    INT2VECTOR_DUCKDB,
    array_literal,
    duckdb_type,
    to_wire,
    wire_oid,
)
from sql.common.duckdb_errors import translate
from sql.common.names import identifier_name
from sql.common.result import ResultColumn
from sql.common.time_zones import UTC_ZONE, SessionZone
from sql.execution import clock_functions, number_formatting, numeric_arithmetic, system_view_rows
from sql.execution.advisory_locks import SessionAdvisoryLocks
from sql.execution.context import DatabaseContext
from sql.execution.executor import ScanSource
from sql.execution.notifications import Listener
from sql.pg_catalog import (
    activity,
    array_output,
    catalog_numeric,
    functions,
    privilege_rows,
    reg_arrays,
    reg_casts,
    sequences,
    statement_statistics,
    system_columns,
    table_statistics,
)
from sql.pg_catalog.catalog_rows import CatalogRows, catalog_rows
from sql.pg_catalog.catalog_views import VIEWS as CATALOG_VIEWS
from sql.pg_catalog.information_schema import VIEWS as INFORMATION_SCHEMA_VIEWS
from sql.pg_catalog.reg_oids import RegOids
from sql.pg_catalog.relations import DESCRIBED_COLUMN_TYPES, RELATIONS
from sql.planner import system_views
from sql.planner.array_dimensions import macro_statements as array_macro_statements
from sql.planner.array_dimensions import rewrite_array_dimensions
from sql.planner.binder import infer_parameter_types, parameter_number, parameters
from sql.planner.query_checks import check_oid_arithmetic
from sql.planner.sequence_calls import FUNCTIONS as SEQUENCES
from sql.planner.series import rewrite_generate_series
from sql.planner.transpile import SessionFacts, clock_function, output_name, scan_view_table
from storage.errors import FeatureNotSupported, UndefinedParameter, UndefinedTable
from storage.predicate import ScanSpec
from storage.transaction import Transaction
from storage.type_oids import ARRAY_OID, TypeOid

SYSTEM_SCHEMA = "pgc"
INFO_SCHEMA = "infos"

_ARROW_TYPES = {
    "UINTEGER": pa.uint32(),
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "USMALLINT": pa.uint16(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "REAL": pa.float32(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "DOUBLE": pa.float64(),
    "DECIMAL(38,0)": pa.decimal128(38, 0),
}

_FUNCTIONS = (
    functions.names()
    | activity.names()
    | privilege_rows.names()
    | statement_statistics.names()
    | table_statistics.names()
)
_LIVE_RELATIONS = (
    activity.DYNAMIC_RELATIONS | statement_statistics.RELATIONS | table_statistics.RELATIONS
)
_EXTENSION_RELATIONS = statement_statistics.RELATIONS
"""Relations PostgreSQL's extensions create in public, where clients may name them."""
_CATALOG_ONLY_FUNCTIONS = _FUNCTIONS - functions.USER_QUERY_FUNCTIONS
# PostgreSQL functions DuckDB has under another name.
_RENAMED = {
    "json_build_object": "json_object",
    "jsonb_build_object": "json_object",
    "every": "bool_and",
}


class LiveRows(Protocol):
    """What fills a relation built afresh at each query that reads it."""

    def rows(self, relation: str) -> list[tuple[Any, ...]]: ...


def _rows_name(relation: str) -> str:
    return f"__nyala_{relation}_rows"


_ARROW_MADE: dict[str, tuple[list[tuple[Any, ...]], pa.Table]] = {}
"""The Arrow table last made for each relation, with its rows: sessions whose rows are the
same (the system relations' own, and most catalogs between DDL) share it."""


def _arrow_rows_of(relation: str, data: list[tuple[Any, ...]]) -> pa.Table:
    """``relation``'s rows as an Arrow table, made again only when they differ."""
    made = _ARROW_MADE.get(relation)
    if made is not None and made[0] == data:
        return made[1]
    table = _arrow_rows(RELATIONS[relation], data)
    _ARROW_MADE[relation] = (list(data), table)
    return table


def _arrow_rows(columns: Sequence[tuple[str, str]], data: list[tuple[Any, ...]]) -> pa.Table:
    return pa.table(
        {
            col: pa.array([r[i] for r in data], _arrow_type(dtype))
            for i, (col, dtype) in enumerate(columns)
        }
    )


def _arrow_type(duck_type: str) -> pa.DataType:
    if duck_type.endswith("[]"):
        return pa.list_(_arrow_type(duck_type[:-2]))
    return _ARROW_TYPES[duck_type]


def _schema_of(node: exp.Table) -> str | None:
    db = node.args.get("db")
    return identifier_name(db) if db is not None else None


def _system_table(node: exp.Table, has_user_table: Callable[[str], bool]) -> str | None:
    """The schema (pgc or infos) a table reference resolves to, or None for a user table."""
    if not isinstance(node.this, exp.Identifier):
        return None
    schema = _schema_of(node)
    name = identifier_name(node)
    if schema == "pg_catalog":
        return SYSTEM_SCHEMA
    if schema == "information_schema":
        return INFO_SCHEMA
    if schema is None and (name in RELATIONS or name in CATALOG_VIEWS) and not has_user_table(name):
        return SYSTEM_SCHEMA
    if schema == "public" and name in _EXTENSION_RELATIONS and not has_user_table(name):
        return SYSTEM_SCHEMA
    return None


def _function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return ""


def is_system_query(ast: exp.Expr, has_user_table: Callable[[str], bool]) -> bool:
    """True when the statement reads a system relation or calls a catalog function."""
    ctes = {cte.alias_or_name for cte in ast.find_all(exp.CTE)}
    for table in ast.find_all(exp.Table):
        if table.name in ctes and _schema_of(table) is None:
            continue
        if _system_table(table, has_user_table) is not None:
            return True
        if isinstance(table.this, exp.Anonymous) and _function_name(table.this) in _FUNCTIONS:
            return True
    if system_columns.names_tableoid(ast):
        return True
    for dot in ast.find_all(exp.Dot):
        if isinstance(dot.this, exp.Identifier) and identifier_name(dot.this) in (
            "pg_catalog",
            "information_schema",
        ):
            return True
    for node in ast.find_all(exp.Anonymous, exp.Cast, exp.CurrentSchemas):
        if isinstance(node, exp.CurrentSchemas) or _function_name(node) in _CATALOG_ONLY_FUNCTIONS:
            return True
        if isinstance(node, exp.Cast) and reg_casts.is_reg_cast(node):
            parent = node.parent
            if not (isinstance(parent, exp.Anonymous) and _function_name(parent) in SEQUENCES):
                return True
    return False


def is_catalog_call(node: exp.Expr) -> bool:
    """Whether ``node`` is a call only the catalog DuckDB answers: a catalog function or a
    reg* cast (``is_system_query`` looks for these)."""
    if isinstance(node, exp.CurrentSchemas) or _function_name(node) in _CATALOG_ONLY_FUNCTIONS:
        return True
    if isinstance(node, exp.Cast) and reg_casts.is_reg_cast(node):
        parent = node.parent
        return not (isinstance(parent, exp.Anonymous) and _function_name(parent) in SEQUENCES)
    return False


def _session_value(node: exp.Expr, facts: SessionFacts) -> exp.Expr | None:
    clock = clock_function(node)
    if clock is not None:
        return clock
    name = _function_name(node)
    if isinstance(node, exp.CurrentSchema) or name == "current_schema":
        return exp.Literal.string("public")
    if isinstance(node, exp.CurrentSchemas):
        arg = node.this
        implicit = isinstance(arg, exp.Boolean) and arg.this is True
        names = ["pg_catalog", "public"] if implicit else ["public"]
        return exp.Array(expressions=[exp.Literal.string(n) for n in names])
    if isinstance(node, exp.SessionUser) or name == "session_user":
        return exp.Literal.string(facts.session_user or facts.user)
    if isinstance(node, exp.CurrentUser) or name in ("current_user", "user", "current_role"):
        return exp.Literal.string(facts.user)
    if isinstance(node, exp.CurrentVersion) or name == "version":
        return exp.Literal.string(facts.version)
    if isinstance(node, (exp.CurrentDatabase, exp.CurrentCatalog)) or name == "current_database":
        return exp.Literal.string(facts.database)
    return None


def _ancestors_table(node: exp.Table) -> exp.Expr:
    """``pg_partition_ancestors(r) [WITH ORDINALITY] AS a(relid[, depth])``: r, then the
    partitions and the table above it (a table that is no partition is its only ancestor)."""
    arg = node.this.expressions[0]
    alias = node.args.get("alias")
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    names = (names + ["relid", "ordinality"])[:2] if node.args.get("ordinality") else names[:1]
    names = names or ["relid"]
    oid = exp.Anonymous(this=functions.PREFIX + "regclass_arg", expressions=[arg.copy()])
    source = exp.Anonymous(this=functions.PREFIX + "pg_partition_ancestors", expressions=[oid])
    select = exp.select(exp.alias_(exp.column("relid"), names[0])).from_(
        exp.Table(this=source, alias=exp.TableAlias(this=exp.to_identifier("up")))
    )
    if len(names) > 1:
        select = select.select(exp.alias_(exp.column("depth") + 1, names[1]))
    return select.subquery(alias.name if alias is not None and alias.name else "ancestors")


_COMPARISON_OPERATORS: dict[str, type[exp.Binary]] = {
    "=": exp.EQ, "<>": exp.NEQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT,
    ">=": exp.GTE,
}  # fmt: skip


def _rewrite_node(
    node: exp.Expr, facts: SessionFacts, has_user_table: Callable[[str], bool]
) -> exp.Expr | None:
    series = rewrite_generate_series(node)
    if series is not node:
        return series
    if isinstance(node, exp.Table):
        schema = _system_table(node, has_user_table)
        if schema is not None:
            node.set("db", exp.to_identifier(schema))
            node.set("catalog", None)
            return node
        if _function_name(node.this).removeprefix(functions.PREFIX) == "pg_partition_ancestors":
            return _ancestors_table(node)
        if not isinstance(node.this, exp.Identifier) and _schema_of(node) in (
            "pg_catalog",
            "information_schema",
        ):
            node.set("db", None)
        return None
    if isinstance(node, exp.Column) and node.args.get("db") is not None:
        schema = {"pg_catalog": SYSTEM_SCHEMA, "information_schema": INFO_SCHEMA}.get(
            identifier_name(node.args["db"])
        )
        if schema is not None:
            node.set("db", exp.to_identifier(schema))
        return None
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier):
        if identifier_name(node.this) in ("pg_catalog", "information_schema"):
            return node.expression
        return None
    dimensions = rewrite_array_dimensions(node)
    if dimensions is not node:
        return dimensions
    if isinstance(node, exp.Anonymous) and _function_name(node) in _RENAMED:
        node.set("this", _RENAMED[_function_name(node)])
        return node
    if isinstance(node, exp.Anonymous) and _function_name(node) in _FUNCTIONS:
        kind = reg_casts.REG_RESULTS.get(_function_name(node))
        node.set("this", functions.PREFIX + _function_name(node))
        return node if kind is None else reg_casts.as_reg(node, kind)
    if isinstance(node, exp.Cast):
        return reg_casts.rewrite_cast(node)
    if isinstance(node, exp.Format):
        return array_output.format_call(node)
    if isinstance(node, exp.Operator):
        op = node.args.get("operator", "").split(".")[-1].strip()
        if op in ("~", "!~"):
            match = exp.RegexpLike(this=node.this, expression=node.expression)
            return match if op == "~" else exp.Not(this=match)
        comparison = _COMPARISON_OPERATORS.get(op)
        if comparison is not None:  # OPERATOR(pg_catalog.=): the built-in comparison
            return comparison(this=node.this, expression=node.expression)
        return None
    if isinstance(node, exp.Collate):
        return node.this
    return _session_value(node, facts)


_REG_COLUMNS = "reg_columns"
"""Where ``rewrite`` leaves ``reg_casts.show_reg_outputs``' reg* output columns."""


def rewrite(
    ast: exp.Expr,
    facts: SessionFacts,
    has_user_table: Callable[[str], bool],
    user_tables: Sequence[UserTable] = (),
) -> exp.Expr:
    """The statement as DuckDB SQL over the ``pgc`` and ``infos`` schemas."""
    ast = ast.copy()
    if system_columns.names_tableoid(ast):
        system_columns.replace_tableoid(
            ast,
            lambda t: _system_table(t, has_user_table) is not None,
            {u.view: u.table for u in user_tables if not u.in_union},
        )
        system_columns.hide_tableoid_from_stars(ast)
    for node in reversed(list(ast.walk(bfs=False))):
        replaced = _rewrite_node(node, facts, has_user_table)
        if replaced is not None and replaced is not node:
            if node is ast:
                ast = replaced
            else:
                node.replace(replaced)
    ast.meta[_REG_COLUMNS] = reg_casts.show_reg_outputs(ast)
    return ast


def _output_name(projection: exp.Expr) -> str:
    """PostgreSQL's column name, seeing through ``pg_catalog.f(...)`` and ``(record).field``."""
    if isinstance(projection, exp.Dot):
        if isinstance(projection.this, exp.Identifier):
            return output_name(projection.expression)
        return projection.expression.name
    return output_name(projection)


@dataclass(frozen=True, slots=True)
class UserTable:
    """A user table (or nyala system view) a catalog query reads, under its DuckDB view name."""

    view: str
    table: TableInfo
    in_union: bool = False
    """A leaf partition read in a partitioned table's union (its rows carry their tableoid)."""


@dataclass(frozen=True, slots=True)
class ScanContext:
    """What reading user tables in a catalog query needs: the transaction and its snapshot."""

    txn: Transaction
    catalog: Catalog
    check_cancel: Callable[[], None]
    snapshot: int | None = None


def _user_table_name(node: exp.Table) -> str:
    """The catalog name of a user table reference; 42P01 for another schema's."""
    schema = _schema_of(node)
    name = identifier_name(node)
    if schema not in (None, "public"):
        raise UndefinedTable(f'relation "{schema}.{name}" does not exist')
    return name


def _replace_user_tables(
    ast: exp.Expr, find_table: Callable[[str], TableInfo], has_user_table: Callable[[str], bool]
) -> tuple[UserTable, ...]:
    """Point each user table reference at a view of its own; the name stays as the alias.
    Where the query names ``tableoid``, a partitioned table becomes the union of its leaves'
    views, each row tagged with its leaf's OID."""
    per_row_tableoid = system_columns.names_tableoid(ast)
    ctes = {cte.alias_or_name for cte in ast.find_all(exp.CTE)}
    found: list[UserTable] = []
    for node in list(ast.find_all(exp.Table)):
        if not isinstance(node.this, exp.Identifier):
            continue
        if node.name in ctes and _schema_of(node) is None:
            continue
        if _system_table(node, has_user_table) is not None:
            continue
        name = _user_table_name(node)
        table = find_table(name)
        alias = node.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier(name))
        leaves = system_columns.leaf_partitions(table) if per_row_tableoid else []
        if leaves:
            views = []
            for leaf in leaves:
                views.append((f"__nyala_user_{len(found)}", find_table(leaf)))
                found.append(UserTable(*views[-1], in_union=True))
            union = system_columns.partitions_union(
                node, [(v, t.oid) for v, t in views], alias.copy()
            )
            if union is not None:
                node.replace(union)
                continue
            del found[-len(leaves) :]
        view = f"__nyala_user_{len(found)}"
        found.append(UserTable(view, table))
        node.replace(scan_view_table(node, view, alias.copy()))
    if found:
        for column in ast.find_all(exp.Column):
            db = column.args.get("db")
            if db is not None and identifier_name(db) == "public":
                column.set("db", None)  # public.t.c: the table is known by its alias t
    return tuple(found)


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
        return ast.sql(dialect="duckdb")


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
    user_tables = _replace_user_tables(ast, find_table, has_user_table)
    rewritten = rewrite(ast, facts, has_user_table, user_tables)
    reg_columns = {
        **_name_columns(projections, user_tables),
        **rewritten.meta.get(_REG_COLUMNS, {}),
    }
    if user_tables:
        user_columns = catalog_numeric.column_types(
            [(c.name, duckdb_type(c.type)) for c in u.table.schema.columns] for u in user_tables
        )
        types = {**catalog_numeric.CATALOG_COLUMN_TYPES, **user_columns}
    else:
        types = catalog_numeric.CATALOG_COLUMN_TYPES
    rewritten = catalog_numeric.rewrite_numerics(rewritten, types)
    live = frozenset(t.name for t in rewritten.find_all(exp.Table) if t.name in _LIVE_RELATIONS)
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
    return found


def _of_catalog(column: exp.Column, user_names: set[str], user_columns: set[str]) -> bool:
    """Whether ``column`` reads a catalog relation, not a user table: by its qualifier,
    else by no user table having a column of its name."""
    if not column.table:
        return column.name not in user_columns
    select = column.find_ancestor(exp.Select)
    tables = select.find_all(exp.Table) if select is not None else iter(())
    return any(t.alias_or_name == column.table and t.name not in user_names for t in tables)


def _expanded_names(names: list[str | None], duck_names: list[str]) -> list[str]:
    """The output names, with DuckDB's for the columns ``*`` (None in ``names``) became."""
    if not names:
        return duck_names
    if None not in names:
        return [n for n in names if n is not None]
    at = names.index(None)
    after = len(names) - at - 1
    star = duck_names[at : len(duck_names) - after]
    return (
        [n for n in names[:at] if n is not None]
        + star
        + [n for n in names[at + 1 :] if n is not None]
    )


def _pg_array_text(values: list[Any] | None) -> str | None:
    return None if values is None else array_literal(values)


def _wire_column(
    array: pa.ChunkedArray | pa.Array, duck_type: str, zone: str = "UTC", oid: int = 0
) -> tuple[Any, int]:
    if duck_type == INT2VECTOR_DUCKDB or oid == TypeOid.OIDVECTOR:
        text = [None if v is None else " ".join(map(str, v)) for v in array.to_pylist()]
        return pa.array(text, pa.string()), oid or TypeOid.INT2VECTOR
    if duck_type.endswith("[]"):
        oid = wire_oid(duck_type, catalog=True)
        return pa.array([_pg_array_text(v) for v in array.to_pylist()], pa.string()), oid
    if duck_type.startswith("STRUCT") or duck_type.startswith("MAP"):
        return pa.array([None if v is None else str(v) for v in array.to_pylist()]), TypeOid.TEXT
    if duck_type == "UINTEGER":
        return to_wire(array, TypeOid.INT8), TypeOid.OID
    oid = wire_oid(duck_type)
    return to_wire(array, oid, zone), oid


_CURRENT = threading.local()
_SHARED_LOCK = threading.Lock()
_SHARED: list[duckdb.DuckDBPyConnection] = []


def _current_functions() -> functions.CatalogFunctions:
    current: functions.CatalogFunctions = _CURRENT.functions
    return current


def _current_privileges() -> privilege_rows.PrivilegeLookup:
    current: privilege_rows.PrivilegeLookup = _CURRENT.privileges
    return current


def _current_activity() -> activity.Activity:
    current: activity.Activity | None = getattr(_CURRENT, "activity", None)
    if current is None:
        raise FeatureNotSupported("this session has no backend to report")
    return current


def _current_statements() -> statement_statistics.StatementStatistics:
    current: statement_statistics.StatementStatistics | None = getattr(_CURRENT, "statements", None)
    if current is None:
        raise FeatureNotSupported("this session keeps no statement statistics")
    return current


def _current_tables() -> table_statistics.TableStatistics:
    current: table_statistics.TableStatistics | None = getattr(_CURRENT, "tables", None)
    if current is None:
        raise FeatureNotSupported("this session keeps no table statistics")
    return current


def _shared_database() -> duckdb.DuckDBPyConnection:
    """The one in-memory DuckDB holding the catalog views, macros and functions.

    Each session works on a cursor of it with its own rows registered under
    the names the views read, so a session's first catalog query costs a
    cursor, not a database.  It runs on one thread, so the catalog functions
    run on the calling session's thread and find its lookups in ``_CURRENT``.
    """
    with _SHARED_LOCK:
        if not _SHARED:
            # integer_division: int / int truncates, as in PostgreSQL (user columns meet here).
            duck = duckdb.connect(
                config={"enable_external_access": False, "threads": 1, "integer_division": True}
            )
            ddl = [
                "SET TimeZone = 'UTC'",
                f"CREATE SCHEMA {SYSTEM_SCHEMA}",
                f"CREATE SCHEMA {INFO_SCHEMA}",
            ]
            for name, columns in RELATIONS.items():
                duck.register(_rows_name(name), _arrow_rows(columns, []))
                selected = sequences.LIVE_COLUMNS.get(name, "*")
                ddl.append(
                    f"CREATE VIEW {SYSTEM_SCHEMA}.{name} AS "
                    f"SELECT {selected} FROM {_rows_name(name)}"
                )
            ddl += [
                f"CREATE VIEW {INFO_SCHEMA}.{name} AS {body}"
                for name, body in INFORMATION_SCHEMA_VIEWS.items()
            ]
            late = [
                f"CREATE VIEW {SYSTEM_SCHEMA}.{name} AS {body}"
                for name, body in CATALOG_VIEWS.items()
            ]
            functions.register(duck, _current_functions)
            array_output.register(duck)
            number_formatting.register(duck)
            numeric_arithmetic.register(duck)
            clock_functions.register(duck)
            activity.register(duck, _current_activity)
            statement_statistics.register(duck, _current_statements)
            table_statistics.register(duck, _current_tables)
            privilege_rows.register(duck, _current_privileges)
            duck.execute(";\n".join(ddl + array_macro_statements()))
            duck.execute(";\n".join(functions.table_macro_statements()))
            duck.execute(";\n".join(late))  # they call the pgf_* macros
            _SHARED.append(duck)
            atexit.register(duck.close)
        return _SHARED[0]


class SystemCatalog:
    """One session's in-memory DuckDB holding the emulated catalogs."""

    def __init__(
        self,
        is_cancelled: Callable[[], bool] = lambda: False,
        set_config: Callable[[str, str, bool], str] | None = None,
        advisory: SessionAdvisoryLocks | None = None,
        listener: Listener | None = None,
        backends: activity.Activity | None = None,
        statements: statement_statistics.StatementStatistics | None = None,
        tables: table_statistics.TableStatistics | None = None,
    ) -> None:
        self._duck: duckdb.DuckDBPyConnection | None = None
        self._registered: dict[str, pa.Table] = {}
        self._key: object = None
        self._functions = functions.CatalogFunctions(is_cancelled, set_config, advisory, listener)
        self._reg_oids = RegOids(self._functions)
        self.activity = backends
        self.statements = statements
        self.tables = tables
        self._privileges = privilege_rows.PrivilegeLookup()
        self.zone = UTC_ZONE
        """The session's TimeZone: casts, ``date_trunc`` and timestamptz output follow it."""
        self._zone_set: SessionZone | None = None

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._duck is None:
            self._duck = _shared_database().cursor()
            self._zone_set = None  # a new cursor starts in the machine's zone
        if not self._registered:
            self._register({name: _arrow_rows_of(name, []) for name in RELATIONS})
        _CURRENT.functions = self._functions
        _CURRENT.activity = self.activity
        _CURRENT.statements = self.statements
        _CURRENT.tables = self.tables
        _CURRENT.privileges = self._privileges
        if self.zone != self._zone_set:
            self._duck.execute(f"SET TimeZone = '{self.zone.duckdb}'")
            self._zone_set = self.zone
        return self._duck

    def refresh(self, key: object, build: Callable[[], CatalogRows]) -> None:
        """Swap in fresh rows when ``key`` (catalog version, settings ...) has changed.

        Each relation is a view over an Arrow table registered on the connection,
        so a refresh only registers new Arrow tables.
        """
        if key == self._key:
            self._connection()
            return
        if self._duck is None:
            self._duck = _shared_database().cursor()
            self._zone_set = None  # a new cursor starts in the machine's zone
        rows = build()
        self._functions.load(rows)
        self._reg_oids.forget()
        if self.activity is not None:
            role_columns = [c for c, _ in RELATIONS["pg_roles"]]
            name_at, oid_at = role_columns.index("rolname"), role_columns.index("oid")
            self.activity.role_oids = {r[name_at]: r[oid_at] for r in rows.rows.get("pg_roles", [])}
        self._register({name: _arrow_rows_of(name, rows.rows.get(name, [])) for name in RELATIONS})
        self._connection()
        self._key = key

    def _register(self, tables: dict[str, pa.Table]) -> None:
        """Register each relation's table on this session's cursor, skipping those already
        registered as that very table (a refresh after DDL changes a few)."""
        assert self._duck is not None
        for name, table in tables.items():
            if self._registered.get(name) is not table:
                self._duck.register(_rows_name(name), table)
                self._registered[name] = table

    def refresh_for(
        self,
        db: DatabaseContext,
        user: str,
        settings: Sequence[tuple[str, str, str, str, str, str]],
        cursors: tuple[tuple[str, str, bool], ...],
        prepared: tuple[tuple[int, str, dt.datetime, str, str], ...] = (),
        catalog: Catalog | None = None,
        statements: tuple[tuple[str, str, dt.datetime, tuple[str, ...], bool], ...] = (),
        access: tuple[RoleStore | None, PrivilegeStore] | None = None,
        custom_setting: Callable[[str], str | None] | None = None,
    ) -> None:
        """Refresh from the database's catalog (or ``catalog``, a transaction's own view of
        it), roles and privileges (or ``access``, a transaction's own copies) and comments,
        the session's state (``custom_setting`` gives its custom ``a.b`` settings) and the
        prepared transactions."""
        catalog = catalog if catalog is not None else db.catalog
        self._functions.custom_setting = custom_setting or (lambda name: None)
        role_store, privilege_store = access if access is not None else (db.roles, db.privileges)
        self._functions.sequence_state = catalog.sequence_state_of
        settings = tuple(settings)
        comments = db.comments
        roles = tuple(role_store.all()) if role_store is not None else ()
        memberships = role_store.memberships() if role_store is not None else []
        acls = privilege_store.all()
        key = (
            db.catalog_version, comments.version, user, settings, cursors, roles, prepared,
            privilege_store, privilege_store.version, tuple(memberships), catalog, statements,
        )  # fmt: skip

        def build() -> CatalogRows:
            rows = catalog_rows(
                catalog.tables(), db.name, user, settings, catalog.comments(comments.all()),
                cursors, roles, prepared, catalog.views(), memberships, statements,
                catalog.standalone_sequences(),
            )  # fmt: skip
            owner = database_owner(role_store, user)
            privilege_rows.with_privileges(rows, acls, owner)
            self._privileges.load(acls, list(roles), owner, user, rows, role_store)
            return rows

        self.refresh(key, build)

    def _register_live(self, duck: duckdb.DuckDBPyConnection, query: SystemQuery) -> None:
        for name in query.live:
            source: activity.Activity | LiveRows | None = self.activity
            if name in statement_statistics.RELATIONS:
                source = self.statements
            elif name in table_statistics.RELATIONS:
                source = self.tables
            data = source.rows(name) if source is not None else []
            duck.register(_rows_name(name), _arrow_rows(RELATIONS[name], data))

    def describe(self, query: SystemQuery, catalog: Catalog) -> tuple[ResultColumn, ...]:
        if query.columns is None:
            duck = self._connection()
            self._register_user_tables(duck, query, catalog, None)
            try:
                relation = duck.sql(query.sql(None))
                types = [str(t) for t in relation.types] if relation is not None else []
                duck_names = list(relation.columns) if relation is not None else []
            except duckdb.Error as exc:
                raise translate(exc) from exc
            finally:
                self._unregister_user_tables(duck, query)
            query.columns = self._columns(query, types, duck_names)
        return query.columns

    @staticmethod
    def _register_user_tables(
        duck: duckdb.DuckDBPyConnection,
        query: SystemQuery,
        catalog: Catalog,
        scan: ScanContext | None,
    ) -> None:
        """Register each user table the query reads: a scan at the statement's snapshot (or,
        with no transaction, just its schema, which describing needs)."""
        txn = scan.txn if scan is not None else None
        for user in query.user_tables:
            table = user.table
            if system_views.is_system_view(table):
                duck.register(user.view, system_view_rows.contents(table, catalog, txn))
                continue
            columns = list(table.columns)
            spec = ScanSpec(projection=tuple(c.id for c in columns))
            source = ScanSource(
                txn,
                table,
                columns,
                spec,
                scan.check_cancel if scan is not None else lambda: None,
                snapshot=scan.snapshot if scan is not None else None,
            )
            duck.register(user.view, source)

    @staticmethod
    def _unregister_user_tables(duck: duckdb.DuckDBPyConnection, query: SystemQuery) -> None:
        for user in query.user_tables:
            duck.unregister(user.view)

    def _columns(
        self, query: SystemQuery, types: list[str], duck_names: list[str]
    ) -> tuple[ResultColumn, ...]:
        out = []
        names = _expanded_names(query.names, duck_names)
        for i, duck_type in enumerate(types):
            name = names[i] if i < len(names) else "?column?"
            if duck_type == "VARCHAR[]" and name.endswith("acl"):
                oid = ARRAY_OID[TypeOid.ACLITEM]  # relacl, nspacl, ...: aclitem[], as pg_catalog's
            elif duck_type == "UINTEGER[]" and name in reg_casts.OIDVECTOR_COLUMNS:
                oid = TypeOid.OIDVECTOR
            elif duck_type.endswith("[]") or duck_type == "UINTEGER":
                oid = wire_oid(duck_type, catalog=True)
            elif duck_type.startswith(("STRUCT", "MAP")):
                oid = TypeOid.TEXT
            elif duck_type == "JSON":
                oid = TypeOid.JSON
            else:
                oid = wire_oid(duck_type)
            if duck_type == "VARCHAR" and i in query.reg_columns:
                oid = query.reg_columns[i]
            out.append(ResultColumn(name, oid))
        return tuple(out)

    def run(
        self, query: SystemQuery, params: list[Any] | None, scan: ScanContext | None = None
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]]:
        """Run the query to completion (user tables it reads at ``scan``'s snapshot)."""
        duck = self._connection()
        if query.user_tables:
            assert scan is not None, "a query reading user tables runs in a transaction"
            self._register_user_tables(duck, query, scan.catalog, scan)
        self._register_live(duck, query)
        try:
            relation = duck.sql(query.sql(params or []))
            table = relation.to_arrow_table() if relation is not None else pa.table({})
            types = [str(t) for t in relation.types] if relation is not None else []
        except duckdb.Error as exc:
            raise translate(exc) from exc
        finally:
            self._unregister_user_tables(duck, query)
        columns = self._columns(query, types, table.column_names)
        query.columns = columns
        zone = self.zone.arrow
        arrays = [
            _wire_column(table.column(i), t, zone, columns[i].type_oid)[0]
            for i, t in enumerate(types)
        ]
        arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
        fields = [
            self._reg_oids.field(pa.field(c.name, a.type), a, c.type_oid)
            for c, a in zip(columns, arrays, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
        return columns, iter([batch])

    def close(self) -> None:
        if self._duck is not None:
            self._duck.close()
            self._duck = None
            self._registered.clear()
            self._key = None
