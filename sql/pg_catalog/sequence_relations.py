"""A sequence read as a relation: ``SELECT last_value, log_cnt, is_called FROM s``.

pg_dump reads every sequence so (to write its ``setval``), and users do to see where
one is.  Each reference to a sequence in FROM becomes a one-row subquery over catalog
functions that read the counter when the query runs, so a cached plan never shows a
stale value; the query then runs on the system-catalog path.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sql.common.names import identifier_name
from sql.pg_catalog import ast_nodes


def replace_sequences(ast: exp.Expr, is_sequence: Callable[[str], bool]) -> bool:
    """Replace each FROM reference to a sequence by its row; whether any was found."""
    nodes = ast_nodes.nodes_of(ast, exp.CTE, exp.Table)
    ctes = {cte.alias_or_name for cte in nodes[exp.CTE]}
    found = False
    for table in nodes[exp.Table]:
        if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
            continue
        if table.args.get("catalog") is not None:
            continue
        schema = table.args.get("db")
        if schema is not None and identifier_name(schema) != "public":
            continue
        name = identifier_name(table)
        if (schema is None and name in ctes) or not is_sequence(name):
            continue
        literal = exp.Literal.string(name)
        row = exp.select(
            exp.alias_(exp.Anonymous(this="pg_sequence_row_value", expressions=[literal]),
                       "last_value"),
            exp.alias_(exp.cast(exp.Literal.number(0), "bigint"), "log_cnt"),
            exp.alias_(exp.Anonymous(this="pg_sequence_row_called", expressions=[literal]),
                       "is_called"),
        )  # fmt: skip
        alias = table.args.get("alias")
        table.replace(
            exp.Subquery(
                this=row,
                alias=alias.copy()
                if alias is not None
                else exp.TableAlias(this=exp.to_identifier(name)),
            )
        )
        found = True
    return found
