"""COMMENT ON TABLE/COLUMN: resolve the target and set its text (at COMMIT, in a transaction)."""

from __future__ import annotations

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.comments import Comments
from sql.common.names import identifier_name, table_name
from storage.errors import FeatureNotSupported, UndefinedColumn


def comment_on(ast: exp.Comment, comments: Comments, catalog: Catalog) -> None:
    """Run ``COMMENT ON TABLE t IS '...'`` or ``COMMENT ON COLUMN t.c IS '...'``."""
    kind = (ast.args.get("kind") or "").upper()
    literal = ast.expression
    text = None if isinstance(literal, exp.Null) else literal.name
    target = ast.this
    if kind == "TABLE" and isinstance(target, exp.Table):
        table = catalog.get_table(table_name(target))
        catalog.set_comment(comments, table.oid, 0, text)
        return
    if kind == "COLUMN" and isinstance(target, exp.Column) and target.table:
        parts = [p for p in target.parts]
        schema = exp.to_identifier(parts[-3].name) if len(parts) >= 3 else None
        table_node = exp.Table(this=parts[-2].copy(), db=schema)
        table = catalog.get_table(table_name(table_node))
        name = identifier_name(target)
        column = table.schema.find(name)
        if column is None:
            raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
        catalog.set_comment(comments, table.oid, table.attnum(column.id), text)
        return
    raise FeatureNotSupported(f"COMMENT ON {kind} is not supported; only TABLE and COLUMN")
