"""Send float ``+ - * /`` to functions that raise PostgreSQL's 22003 on overflow and underflow.

DuckDB's float arithmetic gives infinity or zero where PostgreSQL's raises
"value out of range" (the functions are ``execution.float_arithmetic``).  Only
an operator whose type is ``float8``/``real`` and whose operands are floats or
integers, one of them float in PostgreSQL's terms (``_is_float``), is rewritten: ``2.5 * 3.5``
and ``k * 1.5`` are numeric in PostgreSQL (DuckDB's decimal), and so is
anything with a numeric operand.  Arithmetic over literals alone that DuckDB
computes in floats (``1e300 * 1e300``: an exponent makes a double) is checked
too: PostgreSQL's numeric result would not fit a float either, and storing or
casting it is 22003 there, never infinity.
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


def _is_float(node: exp.Expr) -> bool:
    """Whether ``node`` is float in PostgreSQL, not only in sqlglot's typing: a literal such
    as 1.5 or 1e10 is numeric, and so is arithmetic over literals and integers
    (``k * 0.1 + 0.2`` stays numeric); a float column, cast or function makes it float."""
    if isinstance(node, exp.Literal):
        return False
    if isinstance(node, exp.Anonymous) and node.name.startswith("nyf_float"):
        return True
    if isinstance(node, (exp.Paren, exp.Neg)):
        return _is_float(node.this)
    if isinstance(node, exp.Case) and node.args.get("default") is not None:
        return _is_float(node.args["default"])  # a divisor checked for zero
    if isinstance(node, tuple(_OPS)):
        return _is_float(node.this) or _is_float(node.expression)
    return _type_of(node) in _WIDTHS


def _is_constant(node: exp.Expr) -> bool:
    """Whether ``node`` is arithmetic over number literals only, one of them one DuckDB reads
    as a double (``1e300``: an exponent); ``0.06 - 0.01`` stays DuckDB's exact decimal."""
    literals = list(node.find_all(exp.Literal))
    if not literals or any(lit.is_string for lit in literals):
        return False
    if any(not isinstance(n, (exp.Literal, exp.Paren, exp.Neg, *_OPS)) for n in node.walk()):
        return False
    return any("e" in lit.name.lower() for lit in literals)


def rewrite_float_arithmetic(node: exp.Expr) -> exp.Expr:
    """``node`` as a checked float function call, or ``node`` itself."""
    op = _OPS.get(type(node))
    node_type = _type_of(node)
    width = _WIDTHS.get(node_type) if op is not None else None
    if op is None or width is None:
        return node
    left, right = node.this, node.expression
    if not all(_type_of(side) in _OPERANDS for side in (left, right)):
        return node
    if not (_is_float(left) or _is_float(right) or _is_constant(node)):
        return node
    call = exp.Anonymous(this=function_name(width, op), expressions=[left, right])
    call.type = node.type
    return call
