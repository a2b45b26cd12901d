"""Exact numeric division, for the DuckDB that runs user queries.

DuckDB divides decimals in double precision; PostgreSQL's ``numeric / numeric`` is exact,
rounded half away from zero at the result's scale.  The planner
(``planner.numeric_casts``) sends numeric ``/`` and ``avg`` here as
``nyf_numeric_div(text, text, scale)``; the quotient comes back as text, which the planner
casts to ``DECIMAL(38, scale)``.  A quotient needing more than 38 digits is 22003.
``nyf_numeric_exact`` guards a value stored into an unconstrained ``numeric`` column.
"""

from __future__ import annotations

from decimal import Context, Decimal
from fractions import Fraction
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sql.planner.numeric_casts import DIVISION_FUNCTION, EXACT_FUNCTION
from storage.data_type import MAX_DECIMAL_PRECISION, UNCONSTRAINED_NUMERIC_SCALE
from storage.errors import DivisionByZero, NumericValueOutOfRange

_LIMIT = 10**MAX_DECIMAL_PRECISION


def divide(dividend: str, divisor: str, scale: int) -> str:
    """``dividend / divisor`` rounded half away from zero to ``scale`` fraction digits.

    Example:
        >>> divide("2", "3", 4)
        '0.6667'
    """
    below = Fraction(Decimal(divisor))
    if below == 0:
        raise DivisionByZero("division by zero")
    quotient = Fraction(Decimal(dividend)) / below * 10**scale
    whole, rest = divmod(abs(quotient.numerator), quotient.denominator)
    if 2 * rest >= quotient.denominator:
        whole += 1
    if whole >= _LIMIT:
        raise NumericValueOutOfRange("value overflows numeric format")
    exact = Context(prec=MAX_DECIMAL_PRECISION + 1)
    return format(Decimal(-whole if quotient < 0 else whole).scaleb(-scale, exact), "f")


def _divide_arrays(dividends: pa.Array, divisors: pa.Array, scales: pa.Array) -> pa.Array:
    # Per value: no Arrow kernel divides decimals exactly; divisions are rare beside scans.
    out = [
        None if a is None or b is None else divide(a, b, s)
        for a, b, s in zip(
            dividends.to_pylist(), divisors.to_pylist(), scales.to_pylist(), strict=True
        )
    ]
    return pa.array(out, pa.string())


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create ``nyf_numeric_div`` and ``nyf_numeric_exact`` on ``duck``."""
    options: dict[str, Any] = {"type": "arrow", "null_handling": "special"}
    duck.create_function(
        DIVISION_FUNCTION, _divide_arrays, ["VARCHAR", "VARCHAR", "INTEGER"], "VARCHAR", **options
    )
    duck.create_function(EXACT_FUNCTION, _exact_arrays, ["VARCHAR"], "VARCHAR", **options)


# A fraction with a non-zero digit beyond the unconstrained scale.
_TOO_FINE = rf"\.[0-9]{{{UNCONSTRAINED_NUMERIC_SCALE}}}[0-9]*[1-9]"


_EXPONENT = r"^\s*[+-]?[0-9]*\.?[0-9]*[eE][+-]?[0-9]+\s*$"


def _exact_arrays(texts: pa.Array) -> pa.Array:
    """The values unchanged, or 22003 when one has more fraction digits than an unconstrained
    numeric column holds (DuckDB's cast would round it silently)."""
    exponent = pc.fill_null(pc.match_substring_regex(texts, _EXPONENT), False)
    if pc.any(exponent).as_py():
        # Per value: only float spellings such as 1e-20 get here.
        values = [
            format(Decimal(v), "f") if e else v
            for v, e in zip(texts.to_pylist(), exponent.to_pylist(), strict=True)
        ]
        texts = pa.array(values, pa.string())
    if pc.any(pc.fill_null(pc.match_substring_regex(texts, _TOO_FINE), False)).as_py():
        raise NumericValueOutOfRange(
            "numeric field overflow",
            detail=f"An unconstrained numeric column holds at most "
            f"{UNCONSTRAINED_NUMERIC_SCALE} fraction digits in nyala.",
        )
    return texts
