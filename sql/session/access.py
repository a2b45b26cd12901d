"""AccessControl: every plan is checked here, before it runs, against the privileges.

This is the one place statements meet privileges, as PostgreSQL's executor
checks its range table: a query needs SELECT on each table it reads; INSERT,
UPDATE and DELETE need their own privilege on the target, and SELECT on it
when they read its columns (WHERE, SET expressions, RETURNING, ON CONFLICT);
TRUNCATE needs TRUNCATE; COPY FROM needs INSERT and COPY TO its query's
SELECT; CREATE TABLE needs CREATE on the schema; ALTER, DROP and COMMENT need
ownership.  Superusers pass every check.  Checks run at every execution, so a
REVOKE reaches prepared statements and cached plans at once.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.privileges import (
    PUBLIC_SCHEMA,
    ObjectAcl,
    database_owner,
    is_superuser,
    table_key,
)
from catalog.table import TableInfo
from sql.common.names import SCHEMA, identifier_name, table_name
from sql.execution.context import DatabaseContext
from sql.frontend.dialect import AlterRangePartitions, DetachPartition
from sql.frontend.statements import CopyStatement
from sql.planner.compiled_query import CompiledQuery
from sql.session.plan import (
    CopyPlan,
    DdlPlan,
    DeclarePlan,
    DmlPlan,
    ExplainPlan,
    Plan,
    QueryPlan,
    TruncatePlan,
)
from storage.errors import InsufficientPrivilege

_SELECT, _INSERT, _UPDATE, _DELETE, _TRUNCATE = "r", "a", "w", "d", "D"
_WRITE_LETTER = {"INSERT": _INSERT, "UPDATE": _UPDATE, "DELETE": _DELETE}


def reads_target(ast: exp.Expr) -> bool:
    """Whether an INSERT, UPDATE or DELETE reads its target's columns, so needs SELECT on it."""
    if ast.args.get("returning") is not None or ast.args.get("where") is not None:
        return True
    if isinstance(ast, exp.Insert):
        conflict = ast.args.get("conflict")
        return conflict is not None and conflict.find(exp.Column) is not None
    if isinstance(ast, exp.Update):
        return any(e.expression.find(exp.Column) for e in ast.expressions if isinstance(e, exp.EQ))
    return False


class AccessControl:
    """One session's checks; reads the privilege and role stores at each check."""

    def __init__(self, db: DatabaseContext, user: str) -> None:
        self._db = db
        self.user = user
        self.catalog = db.catalog
        """The catalog the session sees (its transaction's DDL included)."""

    def created(self, table: TableInfo) -> None:
        """The session made ``table``: its role owns it."""
        self._db.privileges.put(table_key(table.oid), ObjectAcl("table", self.user))

    def check(self, plan: Plan) -> None:
        if is_superuser(self._db.roles, self.user):
            return
        match plan:
            case QueryPlan(query=query):
                self._reads(query, None)
            case DmlPlan(write=write, reads_target=reads):
                self._require(write.table, _WRITE_LETTER[write.kind])
                if reads or write.returning is not None:
                    self._require(write.table, _SELECT)
                self._reads(write.source, write.table)
                if write.conflict is not None and write.conflict.update:
                    self._require(write.table, _UPDATE)
            case ExplainPlan(inner=inner) | DeclarePlan(inner=inner):
                self.check(inner)
            case TruncatePlan(ast=ast):
                for node in ast.expressions:
                    self._require(self.catalog.get_table(table_name(node)), _TRUNCATE)
            case CopyPlan(copy=copy):
                self._copy(copy)
            case DdlPlan(ast=ast):
                self._ddl(ast)

    def _reads(self, query: CompiledQuery, skip: TableInfo | None) -> None:
        for view in query.views:
            if skip is None or view.table.table_id != skip.table_id:
                self._require(view.table, _SELECT)

    def _copy(self, copy: CopyStatement) -> None:
        if copy.is_from and copy.table is not None:
            table = self.catalog.find_table(copy.table)
            if table is not None:
                self._require(table, _INSERT)

    def _ddl(self, ast: exp.Expr) -> None:
        if isinstance(ast, exp.Create):
            owner = database_owner(self._db.roles, self.user)
            acl = self._db.privileges.get(PUBLIC_SCHEMA, "schema", owner)
            if "C" not in acl.held(self.user):
                raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
            return
        if isinstance(ast, (exp.Drop, exp.Alter, AlterRangePartitions, DetachPartition)):
            nodes = ast.args.get("tables") or [] if isinstance(ast, exp.Drop) else [ast.this]
            for node in nodes:
                if isinstance(node, exp.Table):
                    table = self.catalog.find_table(identifier_name(node))
                    if table is not None:
                        self._require_owner(table)
        elif isinstance(ast, exp.Comment) and isinstance(ast.this, (exp.Table, exp.Column)):
            node = ast.this if isinstance(ast.this, exp.Table) else ast.this.args.get("table")
            name = identifier_name(node) if isinstance(node, (exp.Table, exp.Identifier)) else None
            table = self.catalog.find_table(name) if name else None
            if table is not None:
                self._require_owner(table, "relation")

    def _require(self, table: TableInfo, letter: str) -> None:
        owner = database_owner(self._db.roles, self.user)
        acl = self._db.privileges.get(table_key(table.oid), "table", owner)
        if letter not in acl.held(self.user):
            raise InsufficientPrivilege(f"permission denied for table {table.name}")

    def _require_owner(self, table: TableInfo, kind: str = "table") -> None:
        owner = database_owner(self._db.roles, self.user)
        acl = self._db.privileges.get(table_key(table.oid), "table", owner)
        if acl.owner != self.user:
            raise InsufficientPrivilege(f"must be owner of {kind} {table.name}")
