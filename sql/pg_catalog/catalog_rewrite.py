"""Which statements read the emulated catalogs, and their rewrite for the catalog DuckDB.

A statement reads the catalogs when it names a system relation (``pg_catalog.pg_class``,
``information_schema.columns``, an unqualified ``pg_type`` no user table shadows) or calls a
catalog function or reg* cast.  ``rewrite`` turns it into DuckDB SQL over the ``pgc`` and
``infos`` schemas: schemas renamed, reg* casts and PostgreSQL-only operators made macro
calls, session values (``current_user`` ...) made literals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot import exp

from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.pg_catalog import (
    activity,
    array_output,
    ast_nodes,
    functions,
    privilege_rows,
    reg_casts,
    statement_statistics,
    system_columns,
    table_statistics,
)
from sql.pg_catalog.catalog_views import VIEWS as CATALOG_VIEWS
from sql.pg_catalog.relations import RELATIONS
from sql.planner.array_dimensions import rewrite_array_dimensions
from sql.planner.sequence_calls import FUNCTIONS as SEQUENCES
from sql.planner.series import rewrite_generate_series
from sql.planner.string_functions import with_default_escape
from sql.planner.transpile import SessionFacts, clock_function, session_literal

SYSTEM_SCHEMA = "pgc"
INFO_SCHEMA = "infos"

_FUNCTIONS = (
    functions.names()
    | activity.names()
    | privilege_rows.names()
    | statement_statistics.names()
    | table_statistics.names()
)
LIVE_RELATIONS = (
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


def schema_of(node: exp.Table) -> str | None:
    db = node.args.get("db")
    return identifier_name(db) if db is not None else None


def system_table(node: exp.Table, has_user_table: Callable[[str], bool]) -> str | None:
    """The schema (pgc or infos) a table reference resolves to, or None for a user table."""
    if not isinstance(node.this, exp.Identifier):
        return None
    schema = schema_of(node)
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
    nodes = ast_nodes.nodes_of(ast, exp.CTE, exp.Table, exp.Column, exp.Dot, *_CALLS)
    ctes = {cte.alias_or_name for cte in nodes[exp.CTE]}
    for table in nodes[exp.Table]:
        if not isinstance(table, exp.Table):
            continue
        if table.name in ctes and schema_of(table) is None:
            continue
        if system_table(table, has_user_table) is not None:
            return True
        if isinstance(table.this, exp.Anonymous) and _function_name(table.this) in _FUNCTIONS:
            return True
    if system_columns.any_tableoid(nodes[exp.Column]):
        return True
    for dot in nodes[exp.Dot]:
        if isinstance(dot.this, exp.Identifier) and identifier_name(dot.this) in (
            "pg_catalog",
            "information_schema",
        ):
            return True
    return any(is_catalog_call(node) for kind in _CALLS for node in nodes[kind])


_CALLS = (exp.Anonymous, exp.Cast, exp.CurrentSchemas)
"""The nodes ``is_catalog_call`` may find to be catalog calls."""


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
    if isinstance(node, exp.CurrentSchemas):
        arg = node.this
        implicit = isinstance(arg, exp.Boolean) and arg.this is True
        names = ["pg_catalog", "public"] if implicit else ["public"]
        return exp.Array(expressions=[exp.Literal.string(n) for n in names])
    return session_literal(node, facts)


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
    like = with_default_escape(node)
    if like is not node:
        return like
    if isinstance(node, exp.Table):
        schema = system_table(node, has_user_table)
        if schema is not None:
            node.set("db", exp.to_identifier(schema))
            node.set("catalog", None)
            return node
        if _function_name(node.this).removeprefix(functions.PREFIX) == "pg_partition_ancestors":
            return _ancestors_table(node)
        if not isinstance(node.this, exp.Identifier) and schema_of(node) in (
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
        if _function_name(node) in reg_casts.REG_NAMED_RESULTS:
            node.meta["reg_named"] = reg_casts.REG_NAMED_RESULTS[_function_name(node)]
        node.set("this", functions.PREFIX + _function_name(node))
        return node if kind is None else reg_casts.as_reg(node, kind)
    if isinstance(node, exp.Cast):
        return reg_casts.rewrite_cast(node)
    if isinstance(node, (exp.EQ, exp.NEQ)):
        return reg_casts.compared_by_name(node)
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


LIVE = "live"
"""Where ``rewrite`` leaves the names of the ``LIVE_RELATIONS`` the statement reads."""
REG_COLUMNS = "reg_columns"
"""Where ``rewrite`` leaves ``reg_casts.show_reg_outputs``' reg* output columns."""


def rewrite(
    ast: exp.Expr,
    facts: SessionFacts,
    has_user_table: Callable[[str], bool],
    user_views: Mapping[str, TableInfo] | None = None,
    *,
    copy: bool = True,
    names_tableoid: bool | None = None,
) -> exp.Expr:
    """The statement as DuckDB SQL over the ``pgc`` and ``infos`` schemas (``user_views``:
    the user tables it reads, by view name, whose rows carry their ``tableoid``); without
    ``copy``, ``ast`` itself is rewritten (a caller's own copy); ``names_tableoid``: whether
    it names ``tableoid``, when the caller has looked already."""
    if copy:
        ast = ast.copy()
    if names_tableoid is None:
        names_tableoid = system_columns.names_tableoid(ast)
    if names_tableoid:
        system_columns.replace_tableoid(
            ast,
            lambda t: system_table(t, has_user_table) is not None,
            user_views or {},
        )
        system_columns.hide_tableoid_from_stars(ast)
    live: set[str] = set()
    for node in reversed(list(ast.walk(bfs=False))):
        if isinstance(node, exp.Table) and node.name in LIVE_RELATIONS:
            live.add(node.name)
        replaced = _rewrite_node(node, facts, has_user_table)
        if replaced is not None and replaced is not node:
            if node is ast:
                ast = replaced
            else:
                node.replace(replaced)
    ast.meta[REG_COLUMNS] = reg_casts.show_reg_outputs(ast)
    ast.meta[LIVE] = frozenset(live)
    return ast
