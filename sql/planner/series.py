"""generate_series of integers typed as PostgreSQL types it.

PostgreSQL's ``generate_series(int, int [, int])`` yields ``integer``; DuckDB's always
yields ``BIGINT``, so ``date '1995-01-01' + i`` (date + integer in PostgreSQL, no
DATE + BIGINT in DuckDB) and ``pg_typeof`` differed.  A series whose bounds and step
are all ``integer`` (literals in its range, or casts to it) is cast back to it, in
FROM and in the select list.  Bounds of other types keep DuckDB's BIGINT, as
PostgreSQL's bigint and numeric forms are wider anyway.

Two ``date`` bounds resolve to PostgreSQL's ``timestamp with time zone`` form (date
converts implicitly to both timestamp types, and timestamptz is the preferred one);
DuckDB picks its timestamp one.  Casting the bounds to TIMESTAMPTZ gives PostgreSQL's
type and values: midnights in the session's TimeZone, days added across its DST changes.
"""

from __future__ import annotations

from sqlglot import exp

_INT4 = (-(2**31), 2**31 - 1)
_SERIES = (exp.GenerateSeries, exp.ExplodingGenerateSeries)


def _is_int4(node: exp.Expr | None) -> bool:
    if node is None:
        return True
    if isinstance(node, exp.Paren):
        return _is_int4(node.this)
    if isinstance(node, exp.Neg):
        inner = node.this
        return isinstance(inner, exp.Literal) and _is_int4(exp.Literal.number(f"-{inner.name}"))
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = int(node.name)
        except ValueError:
            return False
        return _INT4[0] <= value <= _INT4[1]
    if isinstance(node, exp.Cast):
        return node.to.this in (exp.DataType.Type.INT, exp.DataType.Type.SMALLINT)
    return False


def _integer_series(node: exp.Expr) -> bool:
    return isinstance(node, _SERIES) and all(
        _is_int4(node.args.get(arg)) for arg in ("start", "end", "step")
    )


def _is_date(node: exp.Expr | None) -> bool:
    return node is not None and node.type is not None and node.type.this is exp.DataType.Type.DATE


def _date_series(node: exp.Expr) -> exp.Expr | None:
    """A series between two dates, its bounds cast to TIMESTAMPTZ; else None."""
    if not (isinstance(node, _SERIES) and _is_date(node.args.get("start"))):
        return None
    if not _is_date(node.args.get("end")):
        return None
    series = node.copy()
    for arg in ("start", "end"):
        bound = series.args[arg]
        series.set(arg, exp.cast(bound, exp.DataType.build("TIMESTAMPTZ", dialect="duckdb")))
    return series


def rewrite_generate_series(node: exp.Expr) -> exp.Expr:
    """``node`` with an integer series cast to INTEGER, a date series made a timestamptz
    one, or ``node`` itself."""
    dated = _date_series(node)
    if dated is not None:
        return dated
    if isinstance(node, exp.Table) and _integer_series(node.this):
        alias = node.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier("generate_series"))
        if not alias.columns:
            # PostgreSQL names a scalar function's column after its FROM alias.
            alias = exp.TableAlias(this=alias.this.copy(), columns=[alias.this.copy()])
        if len(alias.columns) != 1:
            return node
        column = alias.columns[0].copy()
        inner = exp.Table(
            this=node.this.copy(),
            alias=exp.TableAlias(this=exp.to_identifier("_series"), columns=[column.copy()]),
        )
        select = exp.select(
            exp.alias_(exp.cast(exp.column(column.copy()), "INT"), column.copy())
        ).from_(inner)
        return exp.Subquery(this=select, alias=alias.copy())
    if (
        isinstance(node, exp.ExplodingGenerateSeries)
        and not isinstance(node.parent, exp.Table)
        and _integer_series(node)
    ):
        series = exp.GenerateSeries(**{k: v.copy() for k, v in node.args.items() if v is not None})
        cast = exp.cast(series, exp.DataType.build("INT[]", dialect="duckdb"))
        return exp.Unnest(expressions=[cast])
    return node
