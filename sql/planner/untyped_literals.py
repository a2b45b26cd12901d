"""Untyped string literals beside json, jsonb or array values, given their type as
PostgreSQL resolves an unknown-typed literal in a VALUES column or a UNION's output
column: a document stays unnormalised text and ``'{}'`` is no DuckDB list otherwise."""

from __future__ import annotations

from sqlglot import exp

from sql.common.array_input import parse_array, shape
from storage.errors import FeatureNotSupported

DT = exp.DataType.Type

_OWN_TYPES = (DT.JSON, DT.JSONB, DT.ARRAY)
"""Column types whose untyped literals DuckDB would not read as PostgreSQL does: a document
stays unnormalised text, ``'{}'`` is no DuckDB list."""


def type_untyped_literals(columns: list[list[exp.Expr]]) -> None:
    """Give each untyped string literal of a column (a VALUES column's cells, a UNION's
    branches' expressions) the json, jsonb or array type its other cells cast to; an empty
    array takes the column's dimensions (DuckDB's lists have a fixed depth)."""
    for cells in columns:
        types = {c.to.sql() for c in cells if isinstance(c, exp.Cast)}
        to = next((c.to for c in cells if isinstance(c, exp.Cast)), None)
        if len(types) != 1 or to is None or to.this not in _OWN_TYPES:
            continue
        depth = _literal_depth(cells) if to.this is DT.ARRAY else None
        for cell in cells:
            if isinstance(cell, exp.Literal) and cell.is_string:
                cell.replace(_typed(cell, to, depth))


def _literal_depth(cells: list[exp.Expr]) -> int | None:
    """The dimensions of the column's array literals (``'{{1,2}}'::int[]``: 2), when they
    all have the same; None when some typed cell is no literal."""
    depths = set()
    for cell in cells:
        if isinstance(cell, exp.Cast):
            if not (isinstance(cell.this, exp.Literal) and cell.this.is_string):
                return None
            parsed = parse_array(cell.this.name)
            if parsed:
                depths.add(len(shape(parsed)))
    return depths.pop() if len(depths) == 1 else None


def _typed(literal: exp.Literal, to: exp.DataType, depth: int | None) -> exp.Expr:
    if depth is None or depth == 1:
        return exp.Cast(this=literal.copy(), to=to.copy())
    parsed = parse_array(literal.name)
    if parsed and len(shape(parsed)) != depth:
        raise FeatureNotSupported(
            f"a column of arrays with {depth} dimensions and with "
            f"{len(shape(parsed))} is not supported"
        )
    if parsed:
        return exp.Cast(this=literal.copy(), to=to.copy())
    element = to
    while element.this is DT.ARRAY and element.expressions:
        element = element.expressions[0]
    typed = element.copy()
    for _ in range(depth):
        typed = exp.DataType(this=DT.ARRAY, expressions=[typed], nested=True)
    return exp.Cast(this=exp.Array(expressions=[]), to=typed)
