"""Checks PostgreSQL makes on a query's shape that DuckDB would let through (or refuse
with another SQLSTATE).

DuckDB unions an integer column with a text column by casting both to text, and
takes DISTINCT ON with any ORDER BY; PostgreSQL refuses both (42804, 42P10).  A
string literal meeting a typed column in a set operation is coerced to that
column's type, as PostgreSQL resolves an ``unknown`` literal, so ``select 1
union select 'a'`` fails converting ``'a'`` (22P02) as it does there.
"""

from __future__ import annotations

from sqlglot import exp

from storage.errors import (
    DatatypeMismatch,
    InvalidColumnReference,
    InvalidTablesampleArgument,
    InvalidTablesampleRepeat,
    UndefinedFunction,
)

DT = exp.DataType.Type

_CATEGORIES: dict[object, str] = {
    **dict.fromkeys(
        (DT.TINYINT, DT.SMALLINT, DT.INT, DT.BIGINT, DT.FLOAT, DT.DOUBLE, DT.DECIMAL), "numeric"
    ),
    **dict.fromkeys((DT.TEXT, DT.VARCHAR, DT.CHAR, DT.NCHAR, DT.NVARCHAR), "string"),
    DT.BOOLEAN: "boolean",
    **dict.fromkeys((DT.DATE, DT.TIMESTAMP, DT.TIMESTAMPTZ), "datetime"),
    **dict.fromkeys((DT.VARBINARY, DT.BINARY), "binary"),
}
_OPERATION_NAMES = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def _leftmost_select(node: exp.Expr) -> exp.Select | None:
    while isinstance(node, (exp.SetOperation, exp.Subquery)):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def _category(node: exp.Expr) -> str | None:
    dtype = node.type
    return _CATEGORIES.get(dtype.this) if dtype is not None else None


def _is_unknown_literal(node: exp.Expr) -> bool:
    inner = node.this if isinstance(node, exp.Alias) else node
    return isinstance(inner, exp.Literal) and inner.is_string


def _coerce(node: exp.Expr, to: exp.DataType) -> None:
    literal = node.this if isinstance(node, exp.Alias) else node
    literal.replace(exp.Cast(this=literal.copy(), to=to.copy()))


def check_set_operations(ast: exp.Expr) -> None:
    """42804 when a set operation pairs columns of different type categories."""
    for operation in ast.find_all(exp.SetOperation):
        left, right = _leftmost_select(operation.this), _leftmost_select(operation.expression)
        if left is None or right is None:
            continue
        for a, b in zip(left.expressions, right.expressions, strict=False):
            ca, cb = _category(a), _category(b)
            if ca is None or cb is None or ca == cb:
                continue
            if _is_unknown_literal(b) and a.type is not None:
                _coerce(b, a.type)
            elif _is_unknown_literal(a) and b.type is not None:
                _coerce(a, b.type)
            else:
                name = _OPERATION_NAMES.get(type(operation), "UNION")
                left_type, right_type = (
                    t.sql(dialect="postgres").lower() if t is not None else "unknown"
                    for t in (a.type, b.type)
                )
                raise DatatypeMismatch(
                    f"{name} types {left_type} and {right_type} cannot be matched"
                )


def _key(node: exp.Expr) -> str:
    inner = node.this if isinstance(node, (exp.Alias, exp.Ordered)) else node
    return inner.sql()


def check_distinct_on(ast: exp.Expr) -> None:
    """42P10 when DISTINCT ON's expressions are not the leading ORDER BY expressions."""
    for select in ast.find_all(exp.Select):
        distinct = select.args.get("distinct")
        on = distinct.args.get("on") if distinct is not None else None
        order = select.args.get("order")
        if on is None or order is None:
            continue
        on_exprs = on.expressions if isinstance(on, exp.Tuple) else [on]
        wanted = {_key(e) for e in on_exprs}
        for ordered in order.expressions[: len(wanted)]:
            if _key(ordered) not in wanted:
                raise InvalidColumnReference(
                    "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
                )
            wanted.discard(_key(ordered))


_NOT_CONSTANT = object()


def _constant(node: exp.Expr | None) -> object:
    """A numeric literal's value (None for NULL); ``_NOT_CONSTANT`` for anything else."""
    negative = isinstance(node, exp.Neg)
    inner = node.this if isinstance(node, (exp.Neg, exp.Paren)) else node
    if isinstance(inner, exp.Literal) and not inner.is_string:
        value = float(inner.this)
        return -value if negative else value
    return None if isinstance(inner, exp.Null) else _NOT_CONSTANT


def check_tablesample(ast: exp.Expr) -> None:
    """2202H for a TABLESAMPLE percentage outside 0..100 (or NULL), 2202G for a NULL seed."""
    for sample in ast.find_all(exp.TableSample):
        value = _constant(sample.args.get("percent") or sample.args.get("size"))
        if value is None or (isinstance(value, float) and not 0 <= value <= 100):
            raise InvalidTablesampleArgument("sample percentage must be between 0 and 100")
        seed = sample.args.get("seed")
        if seed is not None and _constant(seed) is None:
            raise InvalidTablesampleRepeat("TABLESAMPLE REPEATABLE parameter cannot be null")


_ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
_PG_NAMES = {
    DT.SMALLINT: "smallint", DT.INT: "integer", DT.BIGINT: "bigint", DT.DECIMAL: "numeric",
    DT.FLOAT: "real", DT.DOUBLE: "double precision", DT.TEXT: "text", DT.VARCHAR: "text",
}  # fmt: skip


def is_oid_cast(node: exp.Expr) -> bool:
    """An explicit ``::oid`` (through parentheses)."""
    while isinstance(node, exp.Paren):
        node = node.this
    return (
        isinstance(node, exp.Cast)
        and isinstance(node.to, exp.ObjectIdentifier)
        and node.to.name.lower() == "oid"
    )


def _pg_type_name(node: exp.Expr) -> str:
    if is_oid_cast(node):
        return "oid"
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "unknown"
        return "integer" if node.name.isdigit() and int(node.name) < 2**31 else "numeric"
    dtype = node.type
    if dtype is None:
        return "unknown"
    return _PG_NAMES.get(dtype.this) or dtype.sql(dialect="postgres").lower()


def check_oid_arithmetic(ast: exp.Expr) -> None:
    """42883 for arithmetic on an ``x::oid``, as PostgreSQL has no such operator; DuckDB holds
    the oid as an integer and would compute it."""
    for node in ast.find_all(*_ARITHMETIC):
        if is_oid_cast(node.this) or is_oid_cast(node.expression):
            left, right = _pg_type_name(node.this), _pg_type_name(node.expression)
            raise UndefinedFunction(
                f"operator does not exist: {left} {_ARITHMETIC[type(node)]} {right}",
                hint="No operator matches the given name and argument types. "
                "You might need to add explicit type casts.",
            )
