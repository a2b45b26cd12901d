"""Catalog function calls inside INSERT, UPDATE and DELETE, computed by a catalog query.

Writes are planned as user queries (``dml.writes``) and run on the user
DuckDB, which lacks the catalog functions (``format_type``,
``has_table_privilege``, ``current_setting``, ``pg_size_pretty``,
``to_regclass`` ...); DuckDB's own functions of some of those names answer
differently.  So each outermost catalog call whose arguments are constants
(in VALUES, SET, WHERE, RETURNING, the SELECT of INSERT ... SELECT, ON
CONFLICT DO UPDATE) is computed by one catalog query, ``SELECT call, ...``,
and the write is planned with the values in place, typed as that query
types them.  The values are computed at every execution, as PostgreSQL
computes a stable function per statement; planning only asks for their
types, so a call with effects (``set_config``, ``pg_advisory_lock``) runs
once.  ``pg_typeof`` of a column becomes PostgreSQL's name of the type
DuckDB's ``typeof`` gives, and ``quote_ident`` of one is the planner's; another
catalog call over a column is 0A000 rather than DuckDB's answer.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from sql.pg_catalog import functions
from sql.pg_catalog.builtin_types import TYPE_BY_OID
from sql.pg_catalog.system_query import is_catalog_call
from storage.errors import FeatureNotSupported

Evaluate = Callable[[str], tuple[Sequence[Any], Sequence[int]]]
"""Runs a one-row catalog query: its values and their type OIDs."""

_WRITES = (exp.Insert, exp.Update, exp.Delete)
_PLANNER_COMPUTES = functions.USER_QUERY_FUNCTIONS | {"quote_ident"}
"""Catalog functions the user-query planner also computes (``planner.transpile``), over
columns too."""
_NOT_CONSTANT = (exp.Column, exp.Placeholder, exp.Parameter, exp.Select, exp.Star)


def _constant(node: exp.Expr) -> bool:
    return not any(isinstance(n, _NOT_CONSTANT) for n in node.walk())


def _typeof(arg: exp.Expr) -> exp.Expr:
    """PostgreSQL's type name for DuckDB's ``typeof(arg)``, as ``pg_typeof(arg)::text``."""
    duck_type = exp.Anonymous(this="typeof", expressions=[arg.copy()])
    case = exp.Case(this=duck_type)
    for duck_name, pg_name in functions.TYPEOF_NAMES.items():
        case = case.when(exp.Literal.string(duck_name), exp.Literal.string(pg_name))
    decimal_or_lower = exp.If(
        this=exp.Like(this=duck_type.copy(), expression=exp.Literal.string("DECIMAL%")),
        true=exp.Literal.string("numeric"),
        false=exp.Lower(this=duck_type.copy()),
    )
    return case.else_(exp.Case(ifs=[decimal_or_lower]))


def _calls(ast: exp.Expr) -> list[exp.Expr]:
    """The outermost constant catalog calls of a write (each with the casts around it),
    after turning ``pg_typeof`` of a column into a plain expression."""
    found: list[exp.Expr] = []
    taken: set[int] = set()
    for node in list(ast.walk()):
        if any(id(a) in taken for a in _ancestors(node)) or not is_catalog_call(node):
            continue
        if not _constant(node):
            if isinstance(node, exp.Anonymous) and node.name.lower() in _PLANNER_COMPUTES:
                continue
            if isinstance(node, exp.Anonymous) and node.name.lower() == "pg_typeof":
                node.replace(_typeof(node.expressions[0]))
                continue
            raise FeatureNotSupported(
                f"{node.sql(dialect='postgres')} over a column is not supported in"
                " INSERT, UPDATE or DELETE"
            )
        while isinstance(node.parent, exp.Cast) and _constant(node.parent):
            node = node.parent
        taken.add(id(node))
        found.append(node)
    return found


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _type_name(oid: int) -> str:
    found = TYPE_BY_OID.get(oid)
    if found is None or found.name in ("unknown", "name"):
        return "text"
    return found.name[1:] + "[]" if found.name.startswith("_") else found.name


def _literal(value: Any, oid: int) -> exp.Expr:
    to = exp.DataType.build(_type_name(oid), dialect="postgres")
    if value is None:
        return exp.cast(exp.null(), to)
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return exp.cast(exp.Literal.number(value), to)
    return exp.cast(exp.Literal.string(str(value)), to)


def fold(ast: exp.Expr, describe: Evaluate, evaluate: Evaluate | None) -> exp.Expr | None:
    """The write with its catalog calls replaced by their values (``evaluate``), or by typed
    NULLs when only planning (``evaluate`` None: ``describe`` gives the types); None when
    ``ast`` is no write or calls none."""
    if not isinstance(ast, _WRITES):
        return None
    if not any(is_catalog_call(node) for node in ast.walk()):
        return None
    ast = ast.copy()
    calls = _calls(ast)
    if calls:
        query = exp.select(*(exp.alias_(c.copy(), f"c{i}") for i, c in enumerate(calls)))
        sql = query.sql(dialect="postgres")
        if evaluate is None:
            _, oids = describe(sql)
            values: Sequence[Any] = [None] * len(calls)
        else:
            values, oids = evaluate(sql)
        for call, value, oid in zip(calls, values, oids, strict=True):
            call.replace(_literal(value, oid))
    return ast
