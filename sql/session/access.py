"""AccessControl: every plan is checked here, before it runs, against the privileges.

This is the one place statements meet privileges, as PostgreSQL's executor
checks its range table: a query needs SELECT on each table it reads; INSERT,
UPDATE and DELETE need their own privilege on the target, and SELECT on it
when they read its columns (WHERE, SET expressions, RETURNING, ON CONFLICT);
TRUNCATE needs TRUNCATE; COPY FROM needs INSERT and COPY TO its query's
SELECT; CREATE TABLE needs CREATE on the schema; ALTER, DROP and COMMENT need
ownership; a catalog query that joins a user table needs SELECT on it too.
Superusers pass every check.  Checks run at every execution, so a
REVOKE reaches prepared statements and cached plans at once.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from catalog.privileges import (
    PUBLIC_SCHEMA,
    database_owner,
    initial_acl,
    is_superuser,
    privileges_of,
    sequence_acl,
    table_key,
)
from catalog.sequences import sequence_oid
from catalog.table import TableInfo
from catalog.views import ViewInfo
from sql.common.names import SCHEMA, identifier_name, table_name
from sql.execution.context import DatabaseContext
from sql.frontend.dialect import AlterRangePartitions, DetachPartition
from sql.frontend.statements import CopyStatement, SequenceStatement
from sql.planner import system_views
from sql.planner.compiled_query import CompiledQuery
from sql.session.plan import (
    CopyPlan,
    DdlPlan,
    DeclarePlan,
    DmlPlan,
    ExplainPlan,
    Plan,
    QueryPlan,
    SystemPlan,
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
    """One session's checks, as its current role (which SET ROLE changes); reads the
    privilege and role stores at each check."""

    def __init__(self, db: DatabaseContext, current_user: Callable[[], str]) -> None:
        self._db = db
        self._current_user = current_user
        self.catalog = db.catalog
        """The catalog the session sees (its transaction's DDL included)."""

    @property
    def user(self) -> str:
        return self._current_user()

    def _mine(self) -> frozenset[str]:
        return privileges_of(self._db.roles, self.user)

    def created(self, table: TableInfo | ViewInfo) -> None:
        """The session made ``table`` (or a view): its role owns it, and the role's default
        privileges (ALTER DEFAULT PRIVILEGES) give the table and its sequences their ACLs."""
        store = self._db.privileges
        store.put(table_key(table.oid), initial_acl(store, "table", self.user, SCHEMA))
        if isinstance(table, ViewInfo):
            return
        for info in table.sequences:
            acl = initial_acl(store, "sequence", self.user, SCHEMA)
            if acl.items is not None and not info.hidden:
                store.put(table_key(sequence_oid(table.table_id, info.column_id)), acl)

    def created_sequence(self, oid: int) -> None:
        """The session made a standalone sequence: its role owns it."""
        store = self._db.privileges
        store.put(table_key(oid), initial_acl(store, "sequence", self.user, SCHEMA))

    def check(self, plan: Plan) -> None:
        if is_superuser(self._db.roles, self.user):
            self._superuser_reads(plan)
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
            case SystemPlan(system=system) if system.user_tables:
                for user_table in system.user_tables:
                    if not system_views.is_system_view(user_table.table):
                        self._require(user_table.table, _SELECT)

    def sequence(self, name: str, wanted: str) -> None:
        """nextval (USAGE or UPDATE), currval (USAGE or SELECT) and setval (UPDATE), also
        behind a SERIAL column's default; an IDENTITY column's sequence is not checked, as
        PostgreSQL does not check it."""
        if is_superuser(self._db.roles, self.user):
            return
        found = self.catalog.find_sequence(name)
        if found is None or found.info.identity or found.info.hidden:
            return  # a hidden key's sequence is nyala's own
        key = table_key(found.oid)
        default_owner = database_owner(self._db.roles, self.user)
        acl = sequence_acl(self._db.privileges, key, found.owner_oid, default_owner)
        if not set(wanted) & acl.held(self._mine()):
            raise InsufficientPrivilege(f"permission denied for sequence {name}")

    def _superuser_reads(self, plan: Plan) -> None:
        """A superuser passes every check of its own, but what a view reads is checked as
        the view's owner, whoever queries it."""
        match plan:
            case QueryPlan(query=query) if query.views_read:
                self._reads(query, None, superuser=True)
            case DmlPlan(write=write) if write.source.views_read:
                self._reads(write.source, write.table, superuser=True)
            case ExplainPlan(inner=inner) | DeclarePlan(inner=inner):
                self._superuser_reads(inner)

    def _reads(self, query: CompiledQuery, skip: TableInfo | None, superuser: bool = False) -> None:
        """SELECT on each view and table the query reads: those it names as the current
        role, those a view's query names as that view's owner (PostgreSQL's checkAsUser)."""
        catalog = self.catalog
        for name, via in query.views_read:
            view = catalog.find_view(name)
            if view is not None and (via is not None or not superuser):
                self._require(view, _SELECT, via, kind="view")
        for binding in query.views:
            via = binding.via_view
            target = skip is not None and binding.table.table_id == skip.table_id
            if via is None and (superuser or target):
                continue
            self._require(binding.table, _SELECT, via)

    def _owner_of(self, view_name: str) -> str | None:
        """The owner of a view, or None when it is a superuser (who passes every check)."""
        view = self.catalog.find_view(view_name)
        if view is None:
            return None
        owner = database_owner(self._db.roles, self.user)
        acl = self._db.privileges.get(table_key(view.oid), "table", owner)
        return None if is_superuser(self._db.roles, acl.owner) else acl.owner

    def _copy(self, copy: CopyStatement) -> None:
        if copy.is_from and copy.table is not None:
            table = self.catalog.find_table(copy.table)
            if table is not None:
                self._require(table, _INSERT)

    def _ddl(self, ast: exp.Expr) -> None:
        if isinstance(ast, SequenceStatement):
            self._sequence_ddl(ast)
            return
        if isinstance(ast, exp.Create):
            if ast.args.get("replace") and isinstance(ast.this, exp.Table):
                view = self.catalog.find_view(identifier_name(ast.this))
                if view is not None:  # CREATE OR REPLACE VIEW: the owner's to change
                    self._require_owner(view, "view")
            owner = database_owner(self._db.roles, self.user)
            acl = self._db.privileges.get(PUBLIC_SCHEMA, "schema", owner)
            if "C" not in acl.held(self._mine()):
                raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
            return
        if isinstance(ast, (exp.Drop, exp.Alter, AlterRangePartitions, DetachPartition)):
            nodes = ast.args.get("tables") or [] if isinstance(ast, exp.Drop) else [ast.this]
            for node in nodes:
                if isinstance(node, exp.Table):
                    relation = identifier_name(node)
                    table = self.catalog.find_table(relation)
                    view = self.catalog.find_view(relation) if table is None else None
                    if table is not None:
                        self._require_owner(table)
                    elif view is not None:
                        self._require_owner(view, "view")
        elif isinstance(ast, exp.Comment) and isinstance(ast.this, (exp.Table, exp.Column)):
            node = ast.this if isinstance(ast.this, exp.Table) else ast.this.args.get("table")
            name = identifier_name(node) if isinstance(node, (exp.Table, exp.Identifier)) else None
            table = self.catalog.find_table(name) if name else None
            if table is not None:
                self._require_owner(table, "relation")

    def _require(
        self,
        table: TableInfo | ViewInfo,
        letter: str,
        via: str | None = None,
        kind: str = "table",
    ) -> None:
        """``letter`` on ``table`` for the current role, or for the owner of the view ``via``
        when that view's query reads it."""
        if via is None:
            roles = self._mine()
        else:
            owner = self._owner_of(via)
            if owner is None:
                return
            roles = privileges_of(self._db.roles, owner)
        default_owner = database_owner(self._db.roles, self.user)
        acl = self._db.privileges.get(table_key(table.oid), "table", default_owner)
        if letter not in acl.held(roles):
            raise InsufficientPrivilege(f"permission denied for {kind} {table.name}")

    def _sequence_ddl(self, statement: SequenceStatement) -> None:
        """CREATE SEQUENCE needs CREATE on the schema; ALTER and DROP, the sequence's owner
        (its table's, for a SERIAL or identity column's)."""
        if statement.action == "CREATE":
            owner = database_owner(self._db.roles, self.user)
            acl = self._db.privileges.get(PUBLIC_SCHEMA, "schema", owner)
            if "C" not in acl.held(self._mine()):
                raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
            return
        for name in statement.names:
            found = self.catalog.find_sequence(name)
            if found is None:
                continue  # the statement reports it (42P01, or a notice with IF EXISTS)
            owner = database_owner(self._db.roles, self.user)
            acl = self._db.privileges.get(table_key(found.owner_oid), "table", owner)
            if acl.owner not in self._mine():
                raise InsufficientPrivilege(f"must be owner of sequence {name}")

    def _require_owner(self, table: TableInfo | ViewInfo, kind: str = "table") -> None:
        owner = database_owner(self._db.roles, self.user)
        acl = self._db.privileges.get(table_key(table.oid), "table", owner)
        if acl.owner not in self._mine():
            raise InsufficientPrivilege(f"must be owner of {kind} {table.name}")
