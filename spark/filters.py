"""Spark's pushed filters as a SQL WHERE clause, and the ones Spark must still evaluate itself.

The server evaluates the whole WHERE clause exactly, and pushes comparisons,
IN, IS [NOT] NULL and ``LIKE 'prefix%'`` on to the tablet scans and the
partition pruner; so a filter rendered here needs no second look from Spark,
except where Spark and PostgreSQL could disagree on the literal: timestamps
(Spark hands naive datetimes in its session time zone), dates and floating
point values are pushed for pruning and also returned, for Spark to apply.
Anything else (NOT, EqualNullSafe, suffix and substring matches, nested
columns, binary values) is left to Spark alone.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence

from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    StringStartsWith,
)

from spark.options import quote_identifier, quote_literal

_OPERATORS = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}


class Unpushable(Exception):
    """A filter this module cannot write as SQL the server reads exactly as Spark does."""


def split(
    filters: Sequence[Filter], naive_columns: Iterable[str] = ()
) -> tuple[list[str], list[Filter]]:
    """(SQL conjuncts to push, filters Spark must still apply) for Spark's AND-ed ``filters``.

    ``naive_columns`` are the timestamp-without-time-zone columns, whose naive datetime
    values mean what they say; a naive value for any other column is left to Spark.
    """
    pushed: list[str] = []
    kept: list[Filter] = []
    naive = set(naive_columns)
    for spark_filter in filters:
        try:
            sql, exact = _render(spark_filter, naive)
        except Unpushable:
            kept.append(spark_filter)
            continue
        pushed.append(sql)
        if not exact:
            kept.append(spark_filter)
    return pushed, kept


def where_clause(conjuncts: Iterable[str]) -> str:
    parts = list(conjuncts)
    return " WHERE " + " AND ".join(f"({p})" for p in parts) if parts else ""


def _column(path: tuple[str, ...]) -> str:
    if len(path) != 1:
        raise Unpushable("nested column")
    return quote_identifier(path[0])


def _render(spark_filter: Filter, naive: set[str]) -> tuple[str, bool]:
    kind = type(spark_filter)
    if kind in _OPERATORS:
        path = spark_filter.attribute  # type: ignore[attr-defined]
        literal, exact = _literal(spark_filter.value, path[0] in naive)  # type: ignore[attr-defined]
        return f"{_column(path)} {_OPERATORS[kind]} {literal}", exact
    if isinstance(spark_filter, In):
        column = _column(spark_filter.attribute)
        if not spark_filter.value or any(v is None for v in spark_filter.value):
            raise Unpushable("IN with NULL")
        literals = [_literal(v, spark_filter.attribute[0] in naive) for v in spark_filter.value]
        inner = ", ".join(text for text, _ in literals)
        return f"{column} IN ({inner})", all(exact for _, exact in literals)
    if isinstance(spark_filter, IsNull):
        return f"{_column(spark_filter.attribute)} IS NULL", True
    if isinstance(spark_filter, IsNotNull):
        return f"{_column(spark_filter.attribute)} IS NOT NULL", True
    if isinstance(spark_filter, StringStartsWith):
        prefix = spark_filter.value
        if any(c in prefix for c in "%_\\"):
            raise Unpushable("a prefix with LIKE wildcards")
        return f"{_column(spark_filter.attribute)} LIKE {quote_literal(prefix + '%')}", True
    raise Unpushable(type(spark_filter).__name__)


def _literal(value: object, naive_ok: bool) -> tuple[str, bool]:
    """A SQL literal for a filter's value, and whether comparing with it is exactly Spark's test."""
    if value is None:
        raise Unpushable("NULL literal")
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE"), True
    if isinstance(value, int):
        return str(value), True
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise Unpushable("non-finite decimal")
        return str(value), True
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unpushable("non-finite float")
        return repr(value), False
    if isinstance(value, str):
        return quote_literal(value), True
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return quote_literal(value.isoformat(sep=" ")), False
        if not naive_ok:
            raise Unpushable("a naive datetime for a column with a time zone")
        return quote_literal(value.isoformat(sep=" ")), False
    if isinstance(value, dt.date):
        return quote_literal(value.isoformat()), False
    raise Unpushable(type(value).__name__)
