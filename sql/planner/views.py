"""Expand views: a table reference that names a view becomes its query, as a subquery.

PostgreSQL's rewriter does the same before planning; here it happens before
binding, so the view's tables are bound, pruned and scanned like any other,
and predicates over the view push down into its scans where they can.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.catalog import Catalog
from sql.common.names import SCHEMA, identifier_name
from sql.frontend.parser import DIALECT
from storage.errors import InvalidObjectDefinition

_MAX_DEPTH = 32
VIA_VIEW = "nyala_via_view"
"""Meta key of a table reference that a view's query brought in: that view's name.  Its
privileges are checked as the view's owner, as PostgreSQL's rewriter marks them."""
VIEWS_READ = "nyala_views_read"
"""Meta key of the expanded query: (view, the view it was read through or None), in order."""
VIEW_ALIASES = "nyala_view_aliases"
"""Meta key of the expanded query: the alias each view read in ``VIEWS_READ`` stands under,
whose columns the query reads from it (checked against the view's column privileges)."""


def _view_references(ast: exp.Expr, catalog: Catalog) -> list[exp.Table]:
    ctes = {cte.alias_or_name for cte in ast.find_all(exp.CTE)}
    found = []
    for table in ast.find_all(exp.Table):
        schema = table.args.get("db")
        if not isinstance(table.this, exp.Identifier) or table.name in ctes:
            continue
        if schema is not None and identifier_name(schema) != SCHEMA:
            continue
        if catalog.find_view(table.name) is not None:
            found.append(table)
    return found


def expand_views(ast: exp.Expr, catalog: Catalog) -> exp.Expr:
    """``ast`` with every view reference replaced by ``(view query) AS alias(columns)``; the
    views read and the view each table came through are noted in meta (``VIEWS_READ``,
    ``VIA_VIEW``)."""
    reads: list[tuple[str, str | None]] = ast.meta.setdefault(VIEWS_READ, [])
    aliases: list[str] = ast.meta.setdefault(VIEW_ALIASES, [])
    for _ in range(_MAX_DEPTH):
        references = _view_references(ast, catalog)
        if not references:
            return ast
        for table in references:
            view = catalog.find_view(table.name)
            assert view is not None, "found above"
            query: exp.Expr = exp.maybe_parse(view.query, dialect=DIALECT)
            reads.append((view.name, table.meta.get(VIA_VIEW)))
            aliases.append(table.alias_or_name)
            for inner in query.find_all(exp.Table):
                inner.meta[VIA_VIEW] = view.name
            alias = exp.TableAlias(
                this=exp.to_identifier(table.alias_or_name, quoted=True),
                columns=[exp.to_identifier(name, quoted=True) for name, _, _ in view.columns],
            )
            table.replace(exp.Subquery(this=query, alias=alias))
    raise InvalidObjectDefinition("views nest too deeply (a view reads itself?)")
