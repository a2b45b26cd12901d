"""Give PostgreSQL's ``numeric`` exact DuckDB decimal types: casts, division and ``avg``.

DuckDB's ``DECIMAL`` without a typmod is ``DECIMAL(18,3)`` and it divides decimals in
double precision.  So a cast to ``numeric`` takes the operand's own exact type (a literal
``1.50`` is ``DECIMAL(3,2)``, an integer ``DECIMAL(38,0)``, anything else the
unconstrained storage type ``DECIMAL(38,10)``), and numeric ``/`` and ``avg`` go to the
exact ``nyf_numeric_div`` (``execution.numeric_arithmetic``).  The quotient's scale is
static: at least 16 digits as PostgreSQL gives a quotient of about 1, or the operands'
larger scale; PostgreSQL widens it per value for quotients far from 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from sql.common.datatypes import TRAILING_ZEROS, duckdb_type
from storage.data_type import (
    MAX_DECIMAL_PRECISION,
    UNCONSTRAINED_NUMERIC_SCALE,
    DataType,
    TypeKind,
)
from storage.errors import (
    FeatureNotSupported,
    InvalidTextRepresentation,
    NumericValueOutOfRange,
)

DT = exp.DataType.Type
DIVISION_FUNCTION = "nyf_numeric_div"
MIN_QUOTIENT_SCALE = 16  # PostgreSQL's NUMERIC_MIN_SIG_DIGITS
_INTEGERS = {DT.TINYINT, DT.SMALLINT, DT.INT, DT.BIGINT}
_FLOATS = {DT.FLOAT, DT.DOUBLE}


def _decimal_type(precision: int, scale: int) -> exp.DataType:
    return exp.DataType.build(f"DECIMAL({precision},{scale})", dialect="duckdb")


def _is_number_literal(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string


def _is_decimal_literal(node: exp.Expr) -> bool:
    return _is_number_literal(node) and any(c in node.name for c in ".eE")


def _scale(node: exp.Expr) -> int | None:
    """The fraction digits of a numeric or integer operand; None when it is neither."""
    if _is_number_literal(node):
        return max(0, -_literal_decimal(node.name).as_tuple().exponent)  # type: ignore[operator]
    dtype = node.type
    if dtype is None:
        return None
    if dtype.this in _INTEGERS:
        return 0
    if dtype.this is not DT.DECIMAL:
        return None
    params = dtype.expressions
    if len(params) == 2:
        return int(params[1].name)
    return 0 if params else UNCONSTRAINED_NUMERIC_SCALE


def _is_numeric(node: exp.Expr) -> bool:
    if _is_decimal_literal(node):
        return True
    if isinstance(node, exp.Paren):
        return _is_numeric(node.this)
    if isinstance(node, exp.Cast) and node.to.this is DT.DECIMAL:
        return True
    return (
        node.type is not None and node.type.this is DT.DECIMAL and not isinstance(node, exp.Literal)
    )


def _literal_decimal(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise InvalidTextRepresentation(
            f'invalid input syntax for type numeric: "{text}"'
        ) from None
    return value


def _literal_type(value: Decimal) -> exp.DataType:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    precision = max(len(digits) + max(exponent, 0), scale, 1)
    if precision > MAX_DECIMAL_PRECISION:
        raise NumericValueOutOfRange(
            "numeric field overflow",
            detail=f"nyala holds numeric values of up to {MAX_DECIMAL_PRECISION} digits.",
        )
    return _decimal_type(precision, scale)


def _numeric_cast(node: exp.Cast) -> exp.Expr:
    operand = node.this
    if isinstance(operand, exp.Literal):
        value = _literal_decimal(operand.name)
        if not value.is_finite():
            raise FeatureNotSupported(f"numeric value {operand.name.strip()!r} is not supported")
        cast = exp.Cast(this=exp.Literal.string(format(value, "f")), to=_literal_type(value))
    elif operand.type is not None and operand.type.this is DT.DECIMAL:
        return operand
    elif operand.type is not None and operand.type.this in _INTEGERS:
        cast = exp.Cast(this=operand, to=_decimal_type(MAX_DECIMAL_PRECISION, 0))
    else:
        cast = exp.Cast(
            this=operand, to=_decimal_type(MAX_DECIMAL_PRECISION, UNCONSTRAINED_NUMERIC_SCALE)
        )
    cast.type = node.type
    return cast


def exact_division(dividend: exp.Expr, divisor: exp.Expr, scale: int) -> exp.Expr:
    """``dividend / divisor`` rounded to ``scale`` digits, as ``DECIMAL(38, scale)``."""
    call = exp.Anonymous(
        this=DIVISION_FUNCTION,
        expressions=[
            exp.cast(dividend, exp.DataType.build("VARCHAR")),
            exp.cast(divisor, exp.DataType.build("VARCHAR")),
            exp.Literal.number(scale),
        ],
    )
    out = exp.Cast(this=call, to=_decimal_type(MAX_DECIMAL_PRECISION, scale))
    out.type = exp.DataType.build("DECIMAL")
    return out


def _is_unconstrained(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this is DT.DECIMAL and not node.type.expressions


def _unconstrained_text(node: exp.Cast) -> exp.Expr:
    """An unconstrained column's value as text at its own scale (``common.datatypes``)."""
    text = exp.Cast(this=node.this, to=exp.DataType.build("VARCHAR"))
    return exp.Anonymous(
        this="regexp_replace",
        expressions=[text, exp.Literal.string(TRAILING_ZEROS), exp.Literal.string("\\1")],
    )


def rewrite_numeric(node: exp.Expr) -> exp.Expr:
    """``node`` with PostgreSQL's numeric semantics, or ``node`` itself."""
    if isinstance(node, exp.Cast) and node.to.this is DT.DECIMAL and not node.to.expressions:
        return _numeric_cast(node)
    if (
        isinstance(node, exp.Cast)
        and node.to.this in (DT.TEXT, DT.VARCHAR)
        and not node.to.expressions
        and isinstance(node.this, exp.Column)
        and _is_unconstrained(node.this)
    ):
        return _unconstrained_text(node)
    if isinstance(node, exp.Div):
        left, right = node.this, node.expression
        left_scale, right_scale = _scale(left), _scale(right)
        if left_scale is None or right_scale is None:
            return node
        if not (_is_numeric(left) or _is_numeric(right)):
            return node
        return exact_division(left, right, max(MIN_QUOTIENT_SCALE, left_scale, right_scale))
    if isinstance(node, exp.Avg) and not isinstance(node.parent, exp.Window):
        return _exact_avg(node, lambda f: f) or node
    if isinstance(node, exp.Window) and isinstance(node.this, exp.Avg):
        window = node

        def over(function: exp.Expr) -> exp.Expr:
            copy = window.copy()
            copy.set("this", function)
            return copy

        return _exact_avg(node.this, over) or node
    return node


def _exact_avg(avg: exp.Avg, over: Callable[[exp.Expr], exp.Expr]) -> exp.Expr | None:
    """``avg`` of integers or numerics as PostgreSQL's exact numeric: sum / count, each
    ``over`` the same window when it is a window function."""
    arg = avg.this
    scale = _scale(arg)
    if scale is None or isinstance(arg, exp.Distinct):
        return None
    return exact_division(
        over(exp.Sum(this=arg.copy())),
        over(exp.Count(this=arg.copy())),
        max(MIN_QUOTIENT_SCALE, scale),
    )


EXACT_FUNCTION = "nyf_numeric_exact"


@functools.lru_cache(maxsize=256)
def _duckdb_data_type(name: str) -> exp.DataType:
    """A DuckDB type name parsed once: a multi-row INSERT casts every cell to its column's."""
    return exp.DataType.build(name, dialect="duckdb")


def assignment_cast(node: exp.Expr, dtype: DataType) -> exp.Expr:
    """``node`` cast to a column's type for storing; a value an unconstrained ``numeric``
    column cannot hold exactly (more than its fixed scale of fraction digits) is 22003."""
    target = _duckdb_data_type(duckdb_type(dtype)).copy()
    if dtype.text_type == "jsonb":
        target = exp.DataType.build("JSONB")  # planner.json_operators normalises the text
    if dtype.kind is TypeKind.DECIMAL and dtype.precision is None:
        text = exp.cast(node, exp.DataType.build("VARCHAR"))
        node = exp.Anonymous(this=EXACT_FUNCTION, expressions=[text])
    return exp.Cast(this=node, to=target)
