"""What ALTER TABLE does to the views that read a table: renames carried in, drops refused.

PostgreSQL's views hold their tables and columns by OID and attnum, so a
renamed table or column stays in use and a column a view reads cannot be
dropped (2BP01).  nyala's views hold SQL text, so a rename rewrites the
text of the views that read the table.
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.views import ViewInfo
from sql.common.names import identifier_name
from sql.frontend.parser import DIALECT
from storage.errors import DependentObjectsStillExist


def _identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=name != name.lower() or not name.isidentifier())


def _readers(catalog: Catalog, table: str) -> list[ViewInfo]:
    return [v for v in catalog.views() if table in v.relations]


def check_column_drop(catalog: Catalog, table: str, column: str) -> None:
    """2BP01 when a view that reads ``table`` names ``column``."""
    for view in _readers(catalog, table):
        tree: exp.Expr = exp.maybe_parse(view.query, dialect=DIALECT)
        if any(identifier_name(c.this) == column for c in tree.find_all(exp.Column)) or any(
            isinstance(s, exp.Star) for s in tree.find_all(exp.Star)
        ):
            raise DependentObjectsStillExist(
                f"cannot drop column {column} of table {table} because other objects depend on it",
                detail=f"view {view.name} depends on column {column} of table {table}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )


def carry_renames(
    catalog: Catalog, old_table: str, new_table: str, columns: list[tuple[str, str]]
) -> None:
    """Rewrite the views that read ``old_table`` for its new name and renamed columns."""
    if not _readers(catalog, old_table):
        return

    def rewrite(view: ViewInfo) -> ViewInfo:
        if old_table not in view.relations:
            return view
        tree: exp.Expr = exp.maybe_parse(view.query, dialect=DIALECT)
        for old, new in columns:
            for column in tree.find_all(exp.Column):
                if identifier_name(column.this) == old:
                    column.set("this", _identifier(new))
        if new_table != old_table:
            for table in tree.find_all(exp.Table):
                if table.name == old_table:
                    table.set("this", _identifier(new_table))
        relations = tuple(sorted(new_table if r == old_table else r for r in view.relations))
        return dataclasses.replace(view, query=tree.sql(dialect="postgres"), relations=relations)

    catalog.rename_in_views(rewrite)
