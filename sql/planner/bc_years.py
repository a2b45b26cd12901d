"""BC dates as PostgreSQL shows and counts them: ``extract(year ...)`` of 44 BC is -44, and
``::text`` spells it ``0044-03-15 12:00:00 BC``.

DuckDB counts years astronomically (1 BC is year 0, 44 BC is -43); PostgreSQL
has no year 0, so a year at or below zero is one less there.  DuckDB's text of
a BC value puts the era after the date (``0044-03-15 (BC) 12:00:00``); PostgreSQL
puts it last, after the time and zone.
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


_DATETIMES = tuple(
    exp.DataType.Type[name]
    for name in ("DATE", "TIMESTAMP", "TIMESTAMPNTZ", "TIMESTAMPTZ", "TIMESTAMPLTZ")
)
_TEXTS = (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR)


def rewrite_bc_text(node: exp.Expr) -> exp.Expr:
    """A date or timestamp cast to text with a BC era moved last, as PostgreSQL writes it."""
    if not (isinstance(node, exp.Cast) and node.to.this in _TEXTS):
        return node
    source = node.this.type
    if source is None or source.this not in _DATETIMES:
        return node
    text = exp.cast(node.this.copy(), exp.DataType.build("VARCHAR"))
    moved = exp.Anonymous(
        this="regexp_replace",
        expressions=[
            text,
            exp.Literal.string(r"^(.*?) \(BC\)(.*)$"),
            exp.Literal.string(r"\1\2 BC"),
        ],
    )
    return exp.cast(moved, node.to.copy()) if node.to.expressions else moved


def is_far_date_text(param: exp.Expr, type_name: str) -> bool:
    """``$1::text`` of a date or timestamp parameter: a value a ``datetime`` cannot hold (BC,
    infinity) is bound as DuckDB's text, which must be read as the type before it is spelt
    (and its era moved by ``rewrite_bc_text``)."""
    cast = param.parent
    return (
        type_name in ("DATE", "TIMESTAMP", "TIMESTAMPTZ")
        and isinstance(cast, exp.Cast)
        and cast.to.this in _TEXTS
    )
