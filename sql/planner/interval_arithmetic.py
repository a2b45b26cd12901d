"""Interval and timestamp arithmetic as PostgreSQL does it, where DuckDB's differs.

- ``INTERVAL '1' MON``: PostgreSQL's unit spellings (``mon``, ``mons``, ``hrs`` ...) are
  given to DuckDB inside the interval string, which its parser reads as PostgreSQL's does.
- ``interval / n``: DuckDB (run with integer division) has no ``interval // n``; it is
  ``interval * (1.0 / n)``, 22012 when ``n`` is 0.
- ``timestamptz - timestamptz``: PostgreSQL subtracts instants and justifies whole 24-hour
  days; DuckDB counts calendar days in the session zone, so across a DST change it
  answered ``1 day`` for 23 hours.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

DT = exp.DataType.Type
_DAY_MICROS = 86_400_000_000


def _is(node: exp.Expr, *types: object) -> bool:
    return node.type is not None and node.type.this in types


def _micros(node: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="epoch_us", expressions=[node])


def _instant_difference(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """``justify_hours`` of the microseconds between two instants, as timestamptz_mi."""
    diff = exp.Paren(this=exp.Sub(this=_micros(left), expression=_micros(right)))
    day = exp.Literal.number(_DAY_MICROS)
    days = exp.Anonymous(
        this="to_days",
        expressions=[exp.Cast(this=exp.IntDiv(this=diff.copy(), expression=day.copy()),
                              to=exp.DataType.build("INTEGER"))],
    )  # fmt: skip
    rest = exp.Anonymous(
        this="to_microseconds", expressions=[exp.Mod(this=diff.copy(), expression=day.copy())]
    )
    return exp.Paren(this=exp.Add(this=days, expression=rest))


def rewrite_interval_arithmetic(
    node: exp.Expr, error_if_zero: Callable[[exp.Expr], exp.Expr]
) -> exp.Expr:
    """The DuckDB form of ``node`` when it is interval or instant arithmetic, else ``node``."""
    if isinstance(node, exp.Interval):
        unit, value = node.args.get("unit"), node.this
        if isinstance(unit, exp.Var) and isinstance(value, exp.Literal) and value.is_string:
            spelled = exp.Interval(this=exp.Literal.string(f"{value.name} {unit.name}"))
            spelled.type = node.type  # the parent's rewrite reads it
            return spelled
        return node
    if isinstance(node, exp.Div) and _is(node.this, DT.INTERVAL):
        divisor = exp.Cast(this=error_if_zero(node.expression), to=exp.DataType.build("DOUBLE"))
        return exp.Mul(
            this=node.this,
            expression=exp.Paren(this=exp.Div(this=exp.Literal.number("1.0"), expression=divisor)),
        )
    if (
        isinstance(node, exp.Sub)
        and _is(node.this, DT.TIMESTAMPTZ)
        and _is(node.expression, DT.TIMESTAMPTZ)
    ):
        return _instant_difference(node.this, node.expression)
    return node
