"""CREATE TEMP TABLE and the session's ``pg_temp`` names, over ``catalog.temp_tables``.

Before a statement is planned, each table reference that names one of the session's
temporary tables (unqualified or as ``pg_temp.name``, and not a CTE of the statement)
is pointed at the table's catalog name; ``CREATE TEMP TABLE`` creates the table under
that name.  ``ON COMMIT`` actions run when the next statement starts outside a
transaction block, so a statement never sees a table its transaction's end removed or a
row that end deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlglot import exp

from catalog.temp_tables import OnCommit, TempNamespace
from sql.common.names import identifier_name
from sql.frontend.dialect import OnCommitDrop
from sql.frontend.statements import CopyStatement
from storage.errors import InvalidTableDefinition

TEMP_SCHEMA = "pg_temp"
R = TypeVar("R")


def _cte_names(ast: exp.Expr) -> set[str]:
    return {identifier_name(cte.args["alias"].this) for cte in ast.find_all(exp.CTE)}


def resolve_names(ast: object, namespace: TempNamespace) -> None:
    """Point references to the session's temporary tables at their catalog names."""
    if not namespace:
        return
    if isinstance(ast, CopyStatement):
        table = ast.args.get("table")
        schema = ast.args.get("schema")
        internal = namespace.resolve(table) if table and schema in (None, TEMP_SCHEMA) else None
        if internal is not None:
            ast.set("table", internal)
            ast.set("schema", None)
        return
    if not isinstance(ast, exp.Expr):
        return
    ctes = _cte_names(ast)
    created = ast.this if isinstance(ast, exp.Create) else None
    if isinstance(created, exp.Schema):
        created = created.this
    for table in list(ast.find_all(exp.Table)):
        if table is created and not is_temporary_create(ast):
            continue
        schema = table.args.get("db")
        if table.args.get("catalog") is not None:
            continue
        if schema is not None and identifier_name(schema) != TEMP_SCHEMA:
            continue
        name = identifier_name(table)
        internal = namespace.resolve(name)
        if internal is None or (schema is None and name in ctes):
            continue
        table.set("this", exp.to_identifier(internal, quoted=True))
        table.set("db", None)
        if not table.alias and isinstance(
            table.parent, (exp.From, exp.Join, exp.Update, exp.Delete)
        ):
            # Columns qualified by the table's name (``t.id``) still find it.
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name, quoted=True)))


def _properties(ast: exp.Create) -> list[exp.Expr]:
    properties = ast.args.get("properties")
    return list(properties.expressions) if properties is not None else []


def is_temporary_create(ast: exp.Expr) -> bool:
    return isinstance(ast, exp.Create) and any(
        isinstance(p, exp.TemporaryProperty) for p in _properties(ast)
    )


def _on_commit(ast: exp.Create) -> OnCommit | None:
    for prop in _properties(ast):
        if isinstance(prop, OnCommitDrop):
            return OnCommit.DROP
        if isinstance(prop, exp.OnCommitProperty):
            return OnCommit.DELETE_ROWS if prop.args.get("delete") else OnCommit.PRESERVE_ROWS
    return None


def check_on_commit(ast: exp.Expr) -> None:
    """42P16 for ON COMMIT on a table that is not temporary, as PostgreSQL says."""
    if isinstance(ast, exp.Create) and not is_temporary_create(ast) and _on_commit(ast):
        raise InvalidTableDefinition("ON COMMIT can only be used on temporary tables")


def create_temp_table(
    ast: exp.Create, namespace: TempNamespace, create: Callable[[exp.Create], R]
) -> R:
    """Create the temporary table ``ast`` declares under its catalog name, via ``create``."""
    on_commit = _on_commit(ast) or OnCommit.PRESERVE_ROWS
    schema_node = ast.this
    target = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
    assert isinstance(target, exp.Table), "CREATE TABLE names a table"
    name = identifier_name(target)
    if name.startswith(namespace.schema + "."):  # already resolved: the name is taken
        name = name.split(".", 1)[1]
    kept = [
        p
        for p in _properties(ast)
        if not isinstance(p, (exp.TemporaryProperty, exp.OnCommitProperty, OnCommitDrop))
    ]
    bare = ast.copy()
    bare.set("properties", exp.Properties(expressions=kept) if kept else None)
    bare_target = bare.this.this if isinstance(bare.this, exp.Schema) else bare.this
    bare_target.set("this", exp.to_identifier(namespace.internal_name(name), quoted=True))
    bare_target.set("db", None)
    result = create(bare)
    namespace.add(name, on_commit)
    return result
