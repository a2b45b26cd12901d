"""Send float ``+ - * /`` to functions that raise PostgreSQL's 22003 on overflow and underflow.

DuckDB's float arithmetic gives infinity or zero where PostgreSQL's raises
"value out of range" (the functions are ``execution.float_arithmetic``).  Only
an operator whose type is ``float8``/``real`` and whose operands are floats or
integers, at least one of them not a literal, is rewritten: ``2.5 * 3.5`` is
numeric in PostgreSQL (DuckDB's decimal), and so is anything with a numeric
operand.
"""

from __future__ import annotations

from sqlglot import exp

DT = exp.DataType.Type
_WIDTHS: dict[object, int] = {DT.DOUBLE: 8, DT.FLOAT: 4}
_OPERANDS: set[object] = {DT.DOUBLE, DT.FLOAT, DT.TINYINT, DT.SMALLINT, DT.INT, DT.BIGINT}
_OPS: dict[type[exp.Expr], str] = {exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div"}
OPERATOR_NAMES = tuple(_OPS.values())


def function_name(width: int, op: str) -> str:
    """The DuckDB function computing ``op`` on float4 (``width`` 4) or float8 values."""
    return f"nyf_float{width}_{op}"


def _type_of(node: exp.Expr) -> object:
    return node.type.this if node.type is not None else None


def rewrite_float_arithmetic(node: exp.Expr) -> exp.Expr:
    """``node`` as a checked float function call, or ``node`` itself."""
    op = _OPS.get(type(node))
    node_type = _type_of(node)
    width = _WIDTHS.get(node_type) if op is not None else None
    if op is None or width is None:
        return node
    left, right = node.this, node.expression
    types = (_type_of(left), _type_of(right))
    if not all(t in _OPERANDS for t in types) or not any(t in _WIDTHS for t in types):
        return node
    if isinstance(left, exp.Literal) and isinstance(right, exp.Literal):
        return node
    call = exp.Anonymous(this=function_name(width, op), expressions=[left, right])
    call.type = node.type
    return call
