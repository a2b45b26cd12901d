"""Which relations a statement or a plan names: what DDL locks, and what waits for DDL."""

from __future__ import annotations

from sqlglot import exp

from catalog.ddl_locks import RelationLock
from sql.common.names import identifier_name, table_name
from sql.session.plan import DmlPlan, Plan, QueryPlan, SystemPlan


def ddl_targets(ast: exp.Expr) -> list[str]:
    """The relations a DDL statement changes (not those its query reads), to lock first."""
    return [
        table_name(node)
        for node in ast.find_all(exp.Table)
        if node.find_ancestor(exp.Query) is None
    ]


def ddl_lock_mode(ast: exp.Expr) -> RelationLock:
    """CREATE INDEX holds its table in SHARE mode (readers go on); other DDL in ACCESS
    EXCLUSIVE."""
    if isinstance(ast, exp.Create) and str(ast.args.get("kind") or "").upper() == "INDEX":
        return RelationLock.SHARE
    return RelationLock.ACCESS_EXCLUSIVE


def written(ast: exp.Expr) -> list[str]:
    """The table an INSERT, UPDATE, DELETE or MERGE writes (empty for other statements)."""
    if not isinstance(ast, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        return []
    target = ast.this
    table = target if isinstance(target, exp.Table) else target.find(exp.Table)
    return [identifier_name(table)] if table is not None and table.this else []


def plan_tables(plan: Plan) -> list[str]:
    """The tables a cached plan reads or writes."""
    if isinstance(plan, QueryPlan):
        return [binding.table.name for binding in plan.query.views]
    if isinstance(plan, DmlPlan):
        return [plan.write.table.name, *(b.table.name for b in plan.write.source.views)]
    if isinstance(plan, SystemPlan):
        return [user.table.name for user in plan.system.user_tables]
    return []


def user_relations(ast: exp.Expr) -> list[str]:
    """The names of the tables and views a statement may reference in the public schema
    (catalog relations are never locked by DDL)."""
    return [
        identifier_name(node)
        for node in ast.find_all(exp.Table)
        if isinstance(node.this, exp.Identifier)
        and (node.args.get("db") is None or identifier_name(node.args["db"]) == "public")
    ]
