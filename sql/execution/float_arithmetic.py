"""Float arithmetic with PostgreSQL's range checks, for the DuckDB that runs user queries.

DuckDB's ``DOUBLE``/``FLOAT`` arithmetic follows IEEE 754: ``1e300 * 1e300`` is
infinity and ``1e-300 * 1e-300`` is zero.  PostgreSQL's float operators raise
22003 instead ("value out of range: overflow" / "underflow") when a finite
operand pair gives an infinite result, or a product or quotient of non-zero
operands gives zero.  The planner sends float ``+ - * /`` here
(``planner.float_checks``); each function works on whole Arrow batches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sql.planner.float_checks import OPERATOR_NAMES, function_name
from storage.errors import NumericValueOutOfRange

OPERATORS = {"add": pc.add, "sub": pc.subtract, "mul": pc.multiply, "div": pc.divide}
assert set(OPERATORS) == set(OPERATOR_NAMES), "every operator the planner sends is computed here"


def _checked(op: str) -> Callable[[pa.Array, pa.Array], pa.Array]:
    compute = OPERATORS[op]

    def apply(a: pa.Array, b: pa.Array) -> pa.Array:
        result = compute(a, b)
        finite_inputs = pc.and_(pc.invert(pc.is_inf(a)), pc.invert(pc.is_inf(b)))
        if pc.any(pc.and_(pc.is_inf(result), finite_inputs)).as_py():
            raise NumericValueOutOfRange("value out of range: overflow")
        if op in ("mul", "div"):
            zero = pc.equal(result, 0)
            nonzero = pc.not_equal(a, 0)
            # PostgreSQL: x * y underflows if neither is 0; x / y if x is not 0 and y finite.
            other = pc.not_equal(b, 0) if op == "mul" else pc.invert(pc.is_inf(b))
            if pc.any(pc.and_(zero, pc.and_(nonzero, other))).as_py():
                raise NumericValueOutOfRange("value out of range: underflow")
        return result

    return apply


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create the ``nyf_float4_*`` and ``nyf_float8_*`` functions on ``duck``."""
    options: dict[str, Any] = {"type": "arrow"}
    for width, type_name in ((4, "FLOAT"), (8, "DOUBLE")):
        for op in OPERATORS:
            duck.create_function(
                function_name(width, op), _checked(op), [type_name, type_name], type_name, **options
            )
