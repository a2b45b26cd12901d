"""Row expressions of key writes: ``SET v = v + $1`` computed in Python with PostgreSQL's rules.

An UPDATE by key whose SET reads the row's own columns (a counter, a
balance) would otherwise go through DuckDB.  The expressions such statements
use are few: columns of the row, parameters, literals, ``+ - *``, unary minus
and ``COALESCE``.  ``compile_expression`` types them as PostgreSQL does
(int2/int4/int8 arithmetic in the wider operand's type, an integer literal
is int4 or int8, float8 when either operand is float8) and returns None for anything else, so
the statement takes the general path.  ``Computed.evaluate`` then follows
PostgreSQL at run time: NULL in, NULL out; an integer result outside its
type is 22003 "<type> out of range"; a float8 result that overflows is 22003
"value out of range: overflow", one that underflows to zero "... underflow".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from storage.data_type import TypeKind
from storage.errors import NumericValueOutOfRange
from storage.schema import ColumnSchema
from storage.type_oids import TypeOid

# PostgreSQL's integer types by width, with their names in overflow errors.
_INT_RANGES = {"int2": (2**15, "smallint"), "int4": (2**31, "integer"), "int8": (2**63, "bigint")}
_INT_ORDER = ("int2", "int4", "int8")
_COLUMN_TYPES = {
    TypeKind.INT16: "int2",
    TypeKind.INT32: "int4",
    TypeKind.INT64: "int8",
    TypeKind.DOUBLE: "float8",
}
_PARAM_TYPES: dict[int, str] = {TypeOid.INT2: "int2", TypeOid.INT4: "int4",
                                TypeOid.INT8: "int8", TypeOid.FLOAT8: "float8"}  # fmt: skip
_ARITHMETIC: dict[type[exp.Expr], Callable[[object, object], object]] = {
    exp.Add: lambda a, b: a + b,  # type: ignore[operator]  # numbers, by compile_expression's types
    exp.Sub: lambda a, b: a - b,  # type: ignore[operator]  # numbers, by compile_expression's types
    exp.Mul: lambda a, b: a * b,  # type: ignore[operator]  # numbers, by compile_expression's types
}

Row = Mapping[int, object]
"""A row's values by column id."""


@dataclass(frozen=True, slots=True)
class Computed:
    """A compiled row expression: its PostgreSQL type, the columns it reads, how to evaluate."""

    type: str
    reads: frozenset[int]
    evaluate: Callable[[Row, Sequence[object]], object]


def compile_expression(
    node: exp.Expr, columns: Callable[[exp.Column], ColumnSchema | None], oids: list[int]
) -> Computed | None:
    """``node`` compiled, or None when only the general path can evaluate it."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        column = columns(node)
        if column is None:
            return None
        column_id = column.id
        tag = _COLUMN_TYPES.get(column.type.kind, f"kind:{column.type.kind.name}")
        return Computed(tag, frozenset({column_id}), lambda row, _: row[column_id])
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal):
        index = int(node.this.name) - 1
        if index >= len(oids) or oids[index] not in _PARAM_TYPES:
            return None
        return Computed(_PARAM_TYPES[oids[index]], frozenset(), lambda _, params: params[index])
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        value = int(node.this)
        if value >= 2**63:
            return None
        return Computed("int4" if value < 2**31 else "int8", frozenset(), lambda *_: value)
    if isinstance(node, exp.Neg):
        inner = compile_expression(node.this, columns, oids)
        if inner is None or not _is_number(inner.type):
            return None
        zero = 0.0 if inner.type == "float8" else 0
        return _arithmetic(inner.type, lambda a, b: b - a,  # type: ignore[operator]  # numbers
                           inner,
                           Computed(inner.type, frozenset(), lambda *_: zero))  # fmt: skip
    if type(node) in _ARITHMETIC:
        left = compile_expression(node.this, columns, oids)
        right = compile_expression(node.expression, columns, oids)
        if left is None or right is None:
            return None
        common = _common_number_type(left.type, right.type)
        if common is None:
            return None
        return _arithmetic(common, _ARITHMETIC[type(node)], left, right)
    if isinstance(node, exp.Coalesce):
        parts = [compile_expression(n, columns, oids) for n in [node.this, *node.expressions]]
        if any(p is None for p in parts):
            return None
        args = [p for p in parts if p is not None]
        result: str | None = args[0].type
        for arg in args[1:]:
            if result is not None and arg.type != result:
                result = _common_number_type(result, arg.type)
        if result is None:
            return None
        return Computed(result, frozenset().union(*(a.reads for a in args)), _coalesce(args))
    return None


def _is_number(tag: str) -> bool:
    return tag in _INT_RANGES or tag == "float8"


def _common_number_type(left: str, right: str) -> str | None:
    """The type PostgreSQL computes ``left <op> right`` in (None: not one this module does)."""
    if left in _INT_RANGES and right in _INT_RANGES:
        return max(left, right, key=_INT_ORDER.index)
    if {left, right} <= {"float8", *_INT_RANGES}:
        return "float8"  # an integer operand is cast to float8 first, as PostgreSQL does
    return None


def _arithmetic(
    tag: str, op: Callable[[object, object], object], left: Computed, right: Computed
) -> Computed:
    check = _int_check(tag) if tag in _INT_RANGES else _float_check(op)
    left_eval, right_eval = left.evaluate, right.evaluate

    def evaluate(row: Row, params: Sequence[object]) -> object:
        a, b = left_eval(row, params), right_eval(row, params)
        if a is None or b is None:
            return None
        return check(a, b, op(a, b))

    return Computed(tag, left.reads | right.reads, evaluate)


def _int_check(tag: str) -> Callable[[object, object, object], object]:
    limit, name = _INT_RANGES[tag]

    def check(_a: object, _b: object, result: object) -> object:
        if not -limit <= result < limit:  # type: ignore[operator]  # integer arithmetic gives ints
            raise NumericValueOutOfRange(f"{name} out of range")
        return result

    return check


def _float_check(
    op: Callable[[object, object], object],
) -> Callable[[object, object, object], object]:
    is_product = op is _ARITHMETIC[exp.Mul]

    def check(a: object, b: object, result: object) -> object:
        value = float(result)  # type: ignore[arg-type]  # float8 arithmetic gives numbers
        if math.isinf(value) and not (math.isinf(a) or math.isinf(b)):  # type: ignore[arg-type]  # float8 operands
            raise NumericValueOutOfRange("value out of range: overflow")
        if is_product and value == 0.0 and a != 0.0 and b != 0.0:
            raise NumericValueOutOfRange("value out of range: underflow")
        return value

    return check


def _coalesce(args: list[Computed]) -> Callable[[Row, Sequence[object]], object]:
    evaluators = [a.evaluate for a in args]

    def evaluate(row: Row, params: Sequence[object]) -> object:
        for evaluator in evaluators:
            value = evaluator(row, params)
            if value is not None:
                return value
        return None

    return evaluate


def assignable(computed: Computed, column: ColumnSchema) -> bool:
    """Whether the expression's value stores in ``column`` as PostgreSQL's assignment cast
    would store it (integers into integer columns, float8 into float columns, a column's
    own type into itself); the range checks of the write do the rest."""
    kind = column.type.kind
    if computed.type in _INT_RANGES:
        return kind in (TypeKind.INT16, TypeKind.INT32, TypeKind.INT64)
    if computed.type == "float8":
        return kind in (TypeKind.FLOAT, TypeKind.DOUBLE)
    return computed.type == _COLUMN_TYPES.get(kind, f"kind:{kind.name}")
