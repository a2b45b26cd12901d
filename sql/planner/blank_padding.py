"""char(n) comparisons: a string literal compared with a blank-padded value loses its trailing spaces.

PostgreSQL compares ``char(n)`` values ignoring trailing spaces, and a string
literal compared with one is read as ``char`` too, so ``c = 'a  '`` matches a
stored ``'a'``.  nyala stores char(n) values without their padding
(``storage.data_type``), so trimming the literal once, before predicates are
pushed into scans and the query goes to DuckDB, gives PostgreSQL's answer
with plain string comparisons everywhere below.
"""

from __future__ import annotations

from sqlglot import exp

_BLANK_PADDED = (exp.DataType.Type.CHAR, exp.DataType.Type.BPCHAR, exp.DataType.Type.NCHAR)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _is_blank_padded(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this in _BLANK_PADDED


def _trim(node: exp.Expr) -> None:
    if isinstance(node, exp.Literal) and node.is_string and node.name != node.name.rstrip(" "):
        trimmed = exp.Literal.string(node.name.rstrip(" "))
        trimmed.type = node.type
        node.replace(trimmed)


def trim_blank_padded_literals(ast: exp.Expr) -> None:
    """Trim, in place, string literals compared with a char(n)-typed expression."""
    for node in list(ast.find_all(*_COMPARISONS, exp.In, exp.Between)):
        if isinstance(node, exp.In):
            if _is_blank_padded(node.this):
                for value in node.expressions:
                    _trim(value)
        elif isinstance(node, exp.Between):
            if _is_blank_padded(node.this):
                _trim(node.args["low"])
                _trim(node.args["high"])
        elif _is_blank_padded(node.this):
            _trim(node.expression)
        elif _is_blank_padded(node.expression):
            _trim(node.this)
