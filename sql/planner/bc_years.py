"""``extract(year ...)`` of a BC date as PostgreSQL counts it: 44 BC is -44.

DuckDB counts years astronomically (1 BC is year 0, 44 BC is -43); PostgreSQL
has no year 0, so a year at or below zero is one less there.
"""

from __future__ import annotations

from sqlglot import exp


def rewrite_bc_year(node: exp.Expr) -> exp.Expr:
    """``extract(year from x)`` (and ``date_part('year', x)``) counting BC years back from -1."""
    if not (isinstance(node, exp.Extract) and node.name.upper() == "YEAR"):
        return node
    year = node.copy()
    return exp.Case(
        ifs=[exp.If(this=exp.GT(this=year, expression=exp.Literal.number(0)), true=year.copy())],
        default=exp.Sub(this=year.copy(), expression=exp.Literal.number(1)),
    )
