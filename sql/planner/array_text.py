"""An array's text as PostgreSQL's array_out writes it, computed inside DuckDB.

DuckDB casts a list to ``['a b', c]``; PostgreSQL writes ``{"a b",c}``: braces, commas, an
element quoted when it is empty, ``NULL`` (any case) or holds a brace, comma, quote,
backslash or white space, and NULL elements as ``NULL``.  A cast to text of an expression
the binder typed as an array (and ``format('%s', array)``'s argument) becomes a
``list_transform`` that writes each element so, one nesting level at a time.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from sql.common.datatypes import TRAILING_ZEROS
from storage.data_type import UNCONSTRAINED_NUMERIC_SCALE

DT = exp.DataType.Type
_TEXT_TYPES = {DT.TEXT, DT.VARCHAR}
_NEEDS_QUOTES = '[{},"\\\\ \\t\\n\\r\\x0b\\f]'


def is_array(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this is DT.ARRAY


def _element_type(array_type: exp.DataType) -> exp.DataType | None:
    inner = array_type.expressions
    return inner[0] if inner and isinstance(inner[0], exp.DataType) else None


def _plain_text(element: exp.Expr, element_type: exp.DataType | None) -> exp.Expr:
    """One scalar element as PostgreSQL's text of it inside an array."""
    if element_type is not None and element_type.this is DT.BOOLEAN:
        return exp.Case(
            ifs=[
                exp.If(this=element, true=exp.Literal.string("t")),
                exp.If(this=exp.Not(this=element.copy()), true=exp.Literal.string("f")),
            ]
        )
    text: exp.Expr = exp.Cast(this=element, to=exp.DataType.build("VARCHAR"))
    unconstrained = (
        element_type is not None
        and element_type.this is DT.DECIMAL
        and len(element_type.expressions) == 2
        and element_type.expressions[1].name == str(UNCONSTRAINED_NUMERIC_SCALE)
    )
    if element_type is not None and element_type.this in (DT.FLOAT, DT.DOUBLE):
        text = exp.Anonymous(  # DuckDB's 2.0 is PostgreSQL's 2
            this="regexp_replace",
            expressions=[text, exp.Literal.string("\\.0$"), exp.Literal.string("")],
        )
    if unconstrained:
        text = exp.Anonymous(
            this="regexp_replace",
            expressions=[text, exp.Literal.string(TRAILING_ZEROS), exp.Literal.string("\\1")],
        )
    return text


def _quoted(text: exp.Expr) -> exp.Expr:
    template = sqlglot.parse_one(
        "CASE WHEN t = '' OR upper(t) = 'NULL' OR regexp_matches(t, '"
        + _NEEDS_QUOTES
        + "') THEN '\"' || replace(replace(t, '\\', '\\\\'), '\"', '\\\"') || '\"' ELSE t END",
        dialect="duckdb",
    )
    for column in list(template.find_all(exp.Column)):
        column.replace(text.copy())
    return template


def _list_text(array: exp.Expr, array_type: exp.DataType | None, depth: int) -> exp.Expr:
    """``{...}`` of a non-NULL list; NULL for NULL."""
    variable = exp.to_identifier(f"nyala_e{depth}")
    element = exp.column(variable)
    element_type = _element_type(array_type) if array_type is not None else None
    if element_type is not None and element_type.this is DT.ARRAY:
        text = _list_text(element, element_type, depth + 1)
    else:
        text = _quoted(_plain_text(element, element_type))
    written = exp.Coalesce(this=text, expressions=[exp.Literal.string("NULL")])
    transform = exp.Anonymous(
        this="list_transform",
        expressions=[array, exp.Lambda(this=written, expressions=[variable])],
    )
    joined = exp.Anonymous(this="array_to_string", expressions=[transform, exp.Literal.string(",")])
    return exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string("{"), expression=joined),
        expression=exp.Literal.string("}"),
    )


def array_text(array: exp.Expr) -> exp.Expr:
    """PostgreSQL's text of ``array`` (typed by the binder as an array)."""
    out = _list_text(array.copy(), array.type, 0)
    out.type = exp.DataType.build("VARCHAR")
    return out


def rewrite_array_text(node: exp.Expr) -> exp.Expr:
    """``node`` writing arrays as PostgreSQL does, or ``node`` itself."""
    if (
        isinstance(node, exp.Cast)
        and node.to.this in _TEXT_TYPES
        and not node.to.expressions
        and is_array(node.this)
    ):
        return array_text(node.this)
    return node
