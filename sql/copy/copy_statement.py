"""COPY at run time: the query a COPY TO runs, its table reference, FORCE_QUOTE's column check.

The statement itself is parsed and its options validated by the frontend
(``sql.frontend.copy_grammar``).
"""

from __future__ import annotations

from sqlglot import exp

from sql.frontend.statements import CopyOptions, CopyStatement
from storage.errors import InvalidColumnReference


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def source_query(statement: CopyStatement) -> str:
    """The SELECT a COPY TO runs: its own query, or all (or the listed) columns of its table."""
    if statement.query_sql is not None:
        return statement.query_sql
    assert statement.table is not None, "COPY TO names a table or a query"
    columns = ", ".join(map(quote_identifier, statement.columns or ())) or "*"
    target = quote_identifier(statement.table)
    if statement.schema is not None:
        target = f"{quote_identifier(statement.schema)}.{target}"
    return f"SELECT {columns} FROM {target}"


def check_force_quote(options: CopyOptions, names: list[str]) -> None:
    """FORCE_QUOTE may only name columns the COPY writes (42P10), as PostgreSQL checks."""
    for name in options.force_quote or ():
        if name not in names:
            raise InvalidColumnReference(f'FORCE_QUOTE column "{name}" not referenced by COPY')


def table_reference(statement: CopyStatement) -> exp.Table:
    """The COPY's table as a sqlglot reference, for the usual name checks."""
    assert statement.table is not None, "COPY FROM names a table"
    schema = exp.to_identifier(statement.schema, quoted=True) if statement.schema else None
    return exp.Table(this=exp.to_identifier(statement.table, quoted=True), db=schema)
