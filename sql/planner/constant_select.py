"""Constant SELECTs: a query with no FROM whose every value is fixed by its text.

Pools ping with ``select 1`` and drivers probe with such statements constantly;
running DuckDB for each costs far more than the answer.  A query is constant
when it reads nothing (no FROM, no subquery, no parameter) and is built only
of literals, casts to types whose values and text do not depend on a session
setting (TimeZone, DateStyle, IntervalStyle, extra_float_digits are read
later, by ``to_wire`` and the server, or not at all), and immutable operators.
Its rows are then the same every time it runs, so ``QueryRunner`` keeps the
first answer DuckDB gives (never an error: a statement that fails runs again
each time, and fails as it did).  Volatile and stable functions (now(),
random(), nextval(), current_user, version(), current_setting()) are not
among the nodes allowed, so a query using them is never constant.
"""

from __future__ import annotations

from sqlglot import exp

from sql.planner.binder import BoundQuery, sqlglot_type_oid
from storage.type_oids import TypeOid

_CAST_TYPES = frozenset(
    (
        exp.DataType.Type.BOOLEAN,
        exp.DataType.Type.SMALLINT,
        exp.DataType.Type.INT,
        exp.DataType.Type.BIGINT,
        exp.DataType.Type.DECIMAL,
        exp.DataType.Type.TEXT,
        exp.DataType.Type.VARCHAR,
    )
)
"""Types a constant may be cast to: their values and text depend on no setting."""

_NODES: tuple[type[exp.Expr], ...] = (
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Alias,
    exp.Identifier,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.IntDiv,
    exp.Mod,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.And,
    exp.Or,
    exp.Not,
    exp.Is,
    exp.DPipe,
    exp.Cast,
    exp.DataType,
    exp.DataTypeParam,
)
"""Immutable operators and the leaves they take (``Cast`` checked for its type)."""


def is_constant(bound: BoundQuery) -> bool:
    """Whether ``bound`` gives the same rows each time it runs (see the module's note)."""
    ast = bound.ast
    if bound.tables or bound.param_oids or not isinstance(ast, exp.Select):
        return False
    if any(value for arg, value in ast.args.items() if arg not in _KEPT):
        return False
    for select in ast.expressions:
        for node in select.walk():
            if type(node) not in _ALLOWED:
                return False
            if isinstance(node, exp.Cast | exp.TryCast):
                to = node.args.get("to")
                if not isinstance(to, exp.DataType) or to.this not in _CAST_TYPES:
                    return False
                if to.expressions and to.this is not exp.DataType.Type.DECIMAL:
                    return False
    return bool(ast.expressions)


def echoed_parameters(bound: BoundQuery) -> tuple[int, ...] | None:
    """The ``$n`` each output of ``bound`` gives back unchanged, when that is all it does
    (``select $1``, ``select $1::int8`` with ``$1`` an int2, int4 or int8): a query whose rows are its
    parameters' values, of the types ``ECHOED_TYPES`` holds; None for any other."""
    ast = bound.ast
    if bound.tables or not bound.param_oids or not isinstance(ast, exp.Select):
        return None
    if any(value for arg, value in ast.args.items() if arg not in _KEPT):
        return None
    numbers = []
    for select in ast.expressions:
        node = select.this if isinstance(select, exp.Alias) else select
        to = None
        if isinstance(node, exp.Cast):
            to = node.args.get("to")
            if not isinstance(to, exp.DataType) or to.expressions:
                return None
            node = node.this
        if not isinstance(node, exp.Parameter) or not isinstance(node.this, exp.Literal):
            return None
        number = int(node.this.name)
        oid = bound.param_oids[number - 1] if 0 < number <= len(bound.param_oids) else None
        if oid not in ECHOED_TYPES or (to is not None and not _keeps(oid, sqlglot_type_oid(to))):
            return None
        numbers.append(number)
    return tuple(numbers) or None


ECHOED_TYPES: frozenset[int] = frozenset(
    (TypeOid.BOOL, TypeOid.INT2, TypeOid.INT4, TypeOid.INT8, TypeOid.TEXT)
)
"""Parameter types an echoed parameter may have: their decoded values are what DuckDB
gives back for them (checked against DuckDB side by side)."""


def _keeps(oid: int, to: int) -> bool:
    """Whether a cast from ``oid`` to ``to`` keeps every value as it is: the same type, or
    a wider integer (drivers send a small int as int2 or int4, cast to int8)."""
    if oid == to:
        return True
    widths = _INTEGER_WIDTHS
    return oid in widths and to in widths and widths[oid] <= widths[to]


_INTEGER_WIDTHS: dict[int, int] = {TypeOid.INT2: 2, TypeOid.INT4: 4, TypeOid.INT8: 8}

_ALLOWED = frozenset(_NODES)
_KEPT = frozenset(("expressions",))
"""The only SELECT argument a constant has: its select list."""
