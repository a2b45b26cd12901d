"""PostgreSQL's ``numeric`` in catalog queries: exact casts and exact division.

DuckDB's bare ``DECIMAL`` is ``DECIMAL(18,3)``, so ``1.23456::numeric`` in a catalog query
was ``1.235`` and ``pg_relation_size(..)::numeric / 3`` a double.  A catalog query is not
bound against a schema, but literals and casts have types without one: after sqlglot
types what it can, the planner's numeric rewrites (``planner.numeric_casts``) apply as in
any query.  A literal keeps its own digits, anything else becomes the unconstrained
``DECIMAL(38,10)`` sent at its own scale, and ``/`` with a numeric operand is the exact
``nyf_numeric_div``.  A column is typed by its name: the catalog relations' and the user
tables' columns whose name has one type (``relnatts::numeric * 1.5`` is ``4.5``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from sql.pg_catalog import ast_nodes
from sql.pg_catalog.relations import RELATIONS
from sql.planner.numeric_casts import rewrite_numeric

DT = exp.DataType.Type


def column_types(relations: Iterable[Iterable[tuple[str, str]]]) -> dict[str, str]:
    """Column name to DuckDB type, for the names that have one type in every relation."""
    types: dict[str, str | None] = {}
    for columns in relations:
        for name, duck_type in columns:
            types[name] = duck_type if types.get(name, duck_type) == duck_type else None
    return {name: t for name, t in types.items() if t is not None}


CATALOG_COLUMN_TYPES = column_types(RELATIONS.values())


def _involves_numeric(ast: exp.Expr) -> bool:
    nodes = ast_nodes.nodes_of(ast, exp.Cast, exp.Literal)
    return any(
        isinstance(cast, exp.Cast) and cast.to.this is DT.DECIMAL and not cast.to.expressions
        for cast in nodes[exp.Cast]
    ) or any(
        isinstance(n, exp.Literal) and not n.is_string and "." in n.name for n in nodes[exp.Literal]
    )


def rewrite_numerics(ast: exp.Expr, columns: Mapping[str, str]) -> exp.Expr:
    """``ast`` (a rewritten catalog query) with PostgreSQL's numeric casts and division;
    ``columns`` types the column names it may read (``column_types``)."""
    if not _involves_numeric(ast):
        return ast
    ast = annotate_types(ast, dialect="duckdb")
    for column in ast.find_all(exp.Column):
        known = columns.get(column.name)
        if known is not None and (column.type is None or column.type.this is DT.UNKNOWN):
            column.type = exp.DataType.build(known, dialect="duckdb")
    for node in reversed(list(ast.walk(bfs=False))):
        if not isinstance(node, (exp.Cast, exp.Div)):
            continue
        replaced = rewrite_numeric(node)
        if replaced is not node:
            if node is ast:
                ast = replaced
            else:
                node.replace(replaced)
    return ast
