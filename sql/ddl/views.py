"""CREATE [OR REPLACE] VIEW and DROP VIEW [IF EXISTS] ... [CASCADE | RESTRICT].

A view is checked by binding its query once (42P01, 42703 as for any query)
and stored as PostgreSQL SQL with its output columns' names and types and
the relations it reads (``catalog.views``), which later DROPs check (2BP01).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from catalog.catalog import Catalog
from sql.common.names import listed_columns, table_name
from sql.common.result import Result
from sql.planner.binder import base_tables
from storage.errors import (
    DbError,
    FeatureNotSupported,
    InvalidTableDefinition,
    UndefinedTable,
    WrongObjectType,
)

Describe = Callable[[exp.Expr], list[tuple[str, int, int]]]
"""Binds a query and returns its output columns: (name, type OID, typmod)."""


def create_view(ast: exp.Create, catalog: Catalog, describe: Describe) -> Result:
    target, listed = listed_columns(ast.this)
    names = listed or []
    name = table_name(target)
    query = ast.expression
    if not isinstance(query, (exp.Select, exp.SetOperation, exp.Values)):
        raise FeatureNotSupported("a view's query must be a SELECT")
    if catalog.find_table(name) is not None and ast.args.get("replace"):
        raise WrongObjectType(f'"{name}" is not a view')
    columns = describe(query.copy())
    if len(names) > len(columns):
        raise InvalidTableDefinition("CREATE VIEW specifies more column names than columns")
    columns = [(names[i] if i < len(names) else n, o, m) for i, (n, o, m) in enumerate(columns)]
    seen = [c[0] for c in columns]
    if len(set(seen)) != len(seen):
        dup = next(n for n in seen if seen.count(n) > 1)
        raise InvalidTableDefinition(f'column "{dup}" specified more than once')
    old = catalog.find_view(name)
    if old is not None and ast.args.get("replace"):
        kept = [c[0] for c in old.columns]
        if [c[0] for c in columns[: len(kept)]] != kept:
            raise InvalidTableDefinition("cannot drop or rename columns of a view")
    relations = sorted({t.name for t in base_tables(query)})
    catalog.create_view(
        name, query.sql(dialect="postgres"), columns, relations,
        replace=bool(ast.args.get("replace")),
    )  # fmt: skip
    return Result(command_tag="CREATE VIEW")


def drop_view(ast: exp.Drop, catalog: Catalog) -> Result:
    names = [table_name(t) for t in ast.args.get("tables") or [ast.this]]
    notices: list[DbError] = []
    for name in names:
        if catalog.find_view(name) is None:
            if catalog.find_table(name) is not None:
                raise WrongObjectType(
                    f'"{name}" is not a view', hint="Use DROP TABLE to remove a table."
                )
            if not ast.args.get("exists"):
                raise UndefinedTable(f'view "{name}" does not exist')
            notices.append(
                UndefinedTable(f'view "{name}" does not exist, skipping', severity="NOTICE")
            )
            continue
        catalog.drop_view(name, cascade=bool(ast.args.get("cascade")))
    return Result(command_tag="DROP VIEW", notices=notices)
