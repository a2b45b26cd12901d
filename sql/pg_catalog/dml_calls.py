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
DuckDB's ``typeof`` gives, and ``quote_ident`` of one is the planner's.  Another
catalog call over columns (``pg_size_pretty(n)``, ``format_type(typ, NULL)``,
``has_table_privilege(name_col, 'select')``) is computed per distinct argument tuple
while the write runs (``execution.catalog_calls``), typed by a catalog query over the
write's tables; a call with effects (``pg_sleep``, ``set_config``, advisory locks,
``pg_notify``) over a column is 0A000 naming the function.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
from sqlglot import exp

from sql.execution import catalog_calls
from sql.pg_catalog import functions
from sql.pg_catalog.builtin_types import TYPE_BY_OID
from sql.pg_catalog.catalog_rewrite import is_catalog_call
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


_EFFECTS = frozenset({
    "pg_sleep", "set_config", "pg_notify", "pg_cancel_backend", "pg_terminate_backend",
    "nextval", "setval", "currval", "lastval",
})  # fmt: skip
"""Calls with effects: computing them per distinct argument tuple would not be per row."""


def _function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else type(node).__name__


def _calls(ast: exp.Expr) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The outermost constant catalog calls of a write (each with the casts around it), and
    those over columns, after turning ``pg_typeof`` of a column into a plain expression."""
    found: list[exp.Expr] = []
    per_row: list[exp.Expr] = []
    taken: set[int] = set()
    for node in list(ast.walk()):
        if any(id(a) in taken for a in _ancestors(node)) or not is_catalog_call(node):
            continue
        if not _constant(node):
            name = _function_name(node)
            if isinstance(node, exp.Anonymous) and name in _PLANNER_COMPUTES:
                continue
            if isinstance(node, exp.Anonymous) and name == "pg_typeof":
                node.replace(_typeof(node.expressions[0]))
                continue
            if name in _EFFECTS or "advisory" in name or node.find(exp.Select, exp.Star):
                raise FeatureNotSupported(
                    f"{name}() over a column is not supported in INSERT, UPDATE or DELETE"
                )
            taken.add(id(node))
            per_row.append(node)
            continue
        while isinstance(node.parent, exp.Cast) and _constant(node.parent):
            node = node.parent
        taken.add(id(node))
        found.append(node)
    return found, per_row


def _tables(ast: exp.Expr, node: exp.Expr) -> list[exp.Table]:
    """The tables whose columns ``node`` may name: an INSERT's target only in RETURNING and
    ON CONFLICT, where its row is in scope."""
    target = (
        ast.this.this
        if isinstance(ast, exp.Insert) and isinstance(ast.this, exp.Schema)
        else ast.this
    )
    in_row = any(
        ancestor is ast.args.get("returning") or ancestor is ast.args.get("conflict")
        for ancestor in _ancestors(node)
    )
    if isinstance(ast, exp.Insert) and in_row:
        return [target]
    found: dict[str, exp.Table] = {}
    for table in ast.find_all(exp.Table):
        if isinstance(ast, exp.Insert) and table is target:
            continue
        found.setdefault(table.sql(dialect="postgres"), table)
    return list(found.values())


def _per_row_call(ast: exp.Expr, node: exp.Expr, describe: Evaluate, token: int) -> exp.Expr:
    """``node`` (a catalog call over columns) as ``nyf_catalog_call`` of its columns' text,
    cast to the call's type; the call and its columns are typed by a catalog query that
    reads the write's tables."""
    columns: dict[str, exp.Column] = {}
    for column in node.find_all(exp.Column):
        columns.setdefault(column.sql(dialect="postgres"), column)
    probe = exp.select(node.copy(), *(c.copy() for c in columns.values()))
    if isinstance(ast, exp.Insert):
        for column in probe.find_all(exp.Column):
            if column.table.lower() == "excluded":  # the proposed row: the target's columns
                column.set("table", None)
    for position, table in enumerate(_tables(ast, node)):
        if position == 0:
            probe = probe.from_(table.copy())
        else:
            probe = probe.join(table.copy(), join_type="cross")
    name = _function_name(node)
    try:
        _, oids = describe(probe.sql(dialect="postgres"))
    except Exception as exc:  # its columns cannot be typed from the write's tables alone
        raise FeatureNotSupported(
            f"{name}() over these columns is not supported in INSERT, UPDATE or DELETE"
        ) from exc
    template = node.copy()
    for position, (text, _) in enumerate(columns.items()):
        slot = exp.cast(
            exp.column(f"c{position}", table="v"),
            exp.DataType.build(_type_name(oids[position + 1]), dialect="postgres"),
        )
        for column in list(template.find_all(exp.Column)):
            if column.sql(dialect="postgres") == text:
                column.replace(slot.copy())
    call = exp.Anonymous(
        this=catalog_calls.FUNCTION,
        expressions=[
            exp.Literal.number(token),
            exp.Literal.string(template.sql(dialect="postgres")),
            exp.Array(
                expressions=[
                    exp.cast(c.copy(), exp.DataType.build("text")) for c in columns.values()
                ]
            ),
        ],
    )
    result = _type_name(oids[0])
    return exp.cast(call, exp.DataType.build(result, dialect="postgres"))


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _type_name(oid: int) -> str:
    found = TYPE_BY_OID.get(oid)
    if found is None or found.name in ("unknown", "name") or found.name.startswith("reg"):
        return "text"  # a reg* value (to_regclass(col)) is stored as its name, as text takes it
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


def fold(
    ast: exp.Expr, describe: Evaluate, evaluate: Evaluate | None, token: int = 0
) -> exp.Expr | None:
    """The write with its catalog calls replaced by their values (``evaluate``), or by typed
    NULLs when only planning (``evaluate`` None: ``describe`` gives the types); calls over
    columns by ``nyf_catalog_call`` of the session ``token`` names; None when ``ast`` is
    no write or calls none."""
    if not isinstance(ast, _WRITES):
        return None
    if not any(is_catalog_call(node) for node in ast.walk()):
        return None
    ast = ast.copy()
    calls, per_row = _calls(ast)
    for node in per_row:
        replacement = _per_row_call(ast, node, describe, token)
        if isinstance(node.parent, exp.Returning):  # RETURNING names it after the function
            replacement = exp.alias_(replacement, _function_name(node))
        node.replace(replacement)
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


def values_query(template: str, tuples: Sequence[tuple[str | None, ...]]) -> str:
    """``SELECT n, <call>`` over one VALUES row per argument tuple (``v.c0`` ... are the
    columns' text, cast in ``template`` to their types), numbered to keep their order."""
    width = len(tuples[0]) if tuples else 0
    rows = []
    for number, values in enumerate(tuples):
        cells = [str(number)] + [
            "NULL" if v is None else "'" + v.replace("'", "''") + "'" for v in values
        ]
        rows.append("(" + ", ".join(cells) + ")")
    names = ", ".join(["n", *(f"c{i}" for i in range(width))])
    return f"SELECT v.n, {template} FROM (VALUES {', '.join(rows)}) AS v({names})"


def values_text(batches: Iterable[pa.RecordBatch], count: int) -> list[str | None]:
    """The call's values (second column) as text a DuckDB cast reads, in tuple order."""
    out: list[str | None] = [None] * count
    for batch in batches:
        for number, value in zip(
            batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True
        ):
            out[number] = _text(value)
    return out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)
