"""PostgreSQL's ``format()``, and ``to_char``/``to_number`` of numbers, instead of DuckDB's.

DuckDB's ``format`` is fmt's ``{}`` and it has no numeric ``to_char``; sqlglot would pass
both through as if they agreed.  Each becomes a call of a Python function
(``execution.number_formatting``) over the arguments as text: a number keeps its digits
that way, and a boolean is written ``t``/``f`` as PostgreSQL's text of it is.
"""

from __future__ import annotations

from sqlglot import exp

from sql.planner.array_text import array_text, is_array
from storage.data_type import MAX_DECIMAL_PRECISION, UNCONSTRAINED_NUMERIC_SCALE

DT = exp.DataType.Type
TO_CHAR_FUNCTION = "nyf_to_char_number"
TO_NUMBER_FUNCTION = "nyf_to_number"
FORMAT_FUNCTION = "nyf_format"

_NUMBERS = {
    DT.TINYINT, DT.SMALLINT, DT.INT, DT.BIGINT, DT.UTINYINT, DT.USMALLINT, DT.UINT, DT.UBIGINT,
    DT.INT128, DT.FLOAT, DT.DOUBLE, DT.DECIMAL, DT.BIGDECIMAL,
}  # fmt: skip


def _text(node: exp.Expr) -> exp.Expr:
    """An argument as PostgreSQL's text of it (a boolean is ``t``/``f``, an array ``{..}``)."""
    if is_array(node):
        return array_text(node)
    if node.type is not None and node.type.this is DT.BOOLEAN:
        return exp.Case(
            ifs=[
                exp.If(this=node.copy(), true=exp.Literal.string("t")),
                exp.If(this=exp.Not(this=node.copy()), true=exp.Literal.string("f")),
            ]
        )
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def rewrite_formatting(node: exp.Expr) -> exp.Expr:
    """``node`` answering as PostgreSQL's ``format``/``to_char``/``to_number``, or ``node``."""
    if isinstance(node, exp.Format):
        args = list(node.expressions)
        if len(args) == 1 and isinstance(args[0], exp.Variadic):
            values: exp.Expr = exp.Cast(
                this=args[0].this, to=exp.DataType.build("VARCHAR[]", dialect="duckdb")
            )
        else:
            values = exp.Array(expressions=[_text(a) for a in args])
            if not args:
                values = exp.Cast(this=values, to=exp.DataType.build("VARCHAR[]", dialect="duckdb"))
        return exp.Anonymous(this=FORMAT_FUNCTION, expressions=[node.this, values])
    if isinstance(node, exp.Anonymous) and node.name.lower() == "to_char":
        args = node.expressions
        if len(args) == 2 and args[0].type is not None and args[0].type.this in _NUMBERS:
            return exp.Anonymous(
                this=TO_CHAR_FUNCTION,
                expressions=[exp.Cast(this=args[0], to=exp.DataType.build("VARCHAR")), args[1]],
            )
        return node
    if isinstance(node, exp.ToNumber) and node.args.get("format") is not None:
        call = exp.Anonymous(
            this=TO_NUMBER_FUNCTION,
            expressions=[_text(node.this), node.args["format"]],
        )
        numeric = f"DECIMAL({MAX_DECIMAL_PRECISION},{UNCONSTRAINED_NUMERIC_SCALE})"
        return exp.Cast(this=call, to=exp.DataType.build(numeric, dialect="duckdb"))
    return node
