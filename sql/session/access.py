"""AccessControl: every plan is checked here, before it runs, against the privileges.

This is the one place statements meet privileges, as PostgreSQL's executor
checks its range table: a query needs SELECT on each table it reads; INSERT,
UPDATE and DELETE need their own privilege on the target, and SELECT on it
when they read its columns (WHERE, SET expressions, RETURNING, ON CONFLICT);
SELECT ... FOR UPDATE or FOR SHARE needs UPDATE on what it locks; TRUNCATE needs
TRUNCATE; COPY FROM needs INSERT and COPY TO its query's
SELECT; CREATE TABLE needs CREATE on the schema; ALTER, DROP and COMMENT need
ownership; a catalog query that joins a user table needs SELECT on it too.
Superusers pass every check.  Checks run at every execution, so a
REVOKE reaches prepared statements and cached plans at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from catalog.column_privileges import held_by_column
from catalog.privileges import (
    PUBLIC_SCHEMA,
    ObjectAcl,
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
from sql.dml.column_use import Columns, ColumnUse, column_use
from sql.execution.context import DatabaseContext
from sql.frontend.dialect import AlterRangePartitions, AttachPartition, DetachPartition
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

if TYPE_CHECKING:
    from catalog.privileges import PrivilegeStore
    from catalog.roles import RoleStore
    from sql.session.statement_settings import StatementSettings
    from sql.session.transaction_block import TransactionBlock

_SELECT, _INSERT, _UPDATE, _DELETE, _TRUNCATE = "r", "a", "w", "d", "D"
_REFERENCES = "x"
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

    def __init__(
        self, db: DatabaseContext, values: StatementSettings, block: TransactionBlock
    ) -> None:
        self._db = db
        self._block = block
        self._values = values
        """Whose ``user`` is the current role."""
        self.catalog = db.catalog
        """The catalog the session sees (its transaction's DDL included)."""

    @property
    def user(self) -> str:
        values = self._values
        if values.version != values.session_settings.version:
            values.current()
        return values.user

    @property
    def _roles(self) -> RoleStore | None:
        """The roles as the session sees them (its transaction's changes included)."""
        return self._block.roles

    @property
    def _privileges(self) -> PrivilegeStore:
        return self._block.privileges

    def _mine(self) -> frozenset[str]:
        return privileges_of(self._roles, self.user)

    def created(self, table: TableInfo | ViewInfo) -> None:
        """The session made ``table`` (or a view): its role owns it, and the role's default
        privileges (ALTER DEFAULT PRIVILEGES) give the table and its sequences their ACLs."""
        store = self._block.access_changes().privileges
        store.put(table_key(table.oid), initial_acl(store, "table", self.user, SCHEMA))
        if isinstance(table, ViewInfo):
            return
        for info in table.sequences:
            acl = initial_acl(store, "sequence", self.user, SCHEMA)
            if acl.items is not None and not info.hidden:
                store.put(table_key(sequence_oid(table.table_id, info.column_id)), acl)

    def created_sequence(self, oid: int) -> None:
        """The session made a standalone sequence: its role owns it."""
        store = self._block.access_changes().privileges
        store.put(table_key(oid), initial_acl(store, "sequence", self.user, SCHEMA))

    def state(self) -> tuple[object, ...]:
        """Everything a check reads besides its plan (``prepared_plan.CheckedPlans``): the
        catalog and its version, the role, and the role and privilege stores the session sees
        with their change counters."""
        roles, privileges = self._block.stores()
        values = self._values
        if values.version != values.session_settings.version:
            values.current()
        return (
            self._db.catalog_version,
            values.user,
            self.catalog,
            roles,
            roles.version if roles is not None else None,
            privileges,
            privileges.version,
        )

    def check(self, plan: Plan) -> None:
        if is_superuser(self._roles, self.user):
            self._superuser_reads(plan)
            return
        match plan:
            case QueryPlan(query=query, locked=locked):
                self._reads(query, None)
                for name in locked:  # FOR UPDATE/SHARE: UPDATE on the table or any column
                    table = self.catalog.find_table(name)
                    if table is not None:
                        self._require(table, _UPDATE, columns=())
            case DmlPlan(write=write):
                self._write(plan)
                joins_target = write.kind != "INSERT" or write.conflict is not None
                self._reads(write.source, write.table if joins_target else None)
            case ExplainPlan(inner=inner) | DeclarePlan(inner=inner):
                self.check(inner)
            case TruncatePlan(ast=ast):
                for node in ast.expressions:
                    table = self.catalog.table_or_partition(table_name(node))
                    self._require(table, _TRUNCATE)
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
        if is_superuser(self._roles, self.user):
            return
        found = self.catalog.find_sequence(name)
        if found is None or found.info.identity or found.info.hidden:
            return  # a hidden key's sequence is nyala's own
        key = table_key(found.oid)
        default_owner = database_owner(self._roles, self.user)
        acl = sequence_acl(self._privileges, key, found.owner_oid, default_owner)
        if not set(wanted) & acl.held(self._mine()):
            raise InsufficientPrivilege(f"permission denied for sequence {name}")

    def _write(self, plan: DmlPlan) -> None:
        """The write's own privilege on the columns it writes (DELETE: on the table), and
        SELECT on the target's columns it reads."""
        write = plan.write
        table, letter = write.table, _WRITE_LETTER[write.kind]
        needed = {letter}
        if plan.reads_target or write.returning is not None:
            needed.add(_SELECT)
        if write.conflict is not None and write.conflict.update:
            needed.add(_UPDATE)
        default_owner = database_owner(self._roles, self.user)
        acl = self._privileges.get(table_key(table.oid), "table", default_owner)
        if needed <= acl.held(self._mine()):
            return  # the table's privileges cover all it may use: no need to look closer
        if plan.ast is None:  # planned without its statement: the table's privileges
            use = ColumnUse((), () if write.conflict is not None else None, ())
        else:
            if plan.column_use is None:
                plan.column_use = column_use(plan.ast, table, self.catalog)
            use = plan.column_use
        if letter == _DELETE:
            self._require(table, _DELETE)
        else:
            self._require(table, letter, columns=use.inserted if letter == _INSERT else use.updated)
        if use.selected is not None:
            self._require(table, _SELECT, columns=use.selected)
        if write.kind == "INSERT" and use.updated is not None:
            self._require(table, _UPDATE, columns=use.updated)

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
        role, those a view's query names as that view's owner (PostgreSQL's checkAsUser).
        ``skip`` is a write's target, whose first reference is the write's own (checked by
        ``_write``); any other reference to it reads it like any table."""
        catalog = self.catalog
        for index, (name, via) in enumerate(query.views_read):
            view = catalog.find_view(name)
            if view is not None and (via is not None or not superuser):
                used = query.view_columns[index] if index < len(query.view_columns) else None
                columns = (
                    None
                    if used is None
                    else tuple(n for n, (c, _, _) in enumerate(view.columns, start=1) if c in used)
                )
                self._require(view, _SELECT, via, kind="view", columns=columns)
        for binding in query.views:
            if system_views.is_system_view(binding.table):
                continue  # PUBLIC's to read, as PostgreSQL's statistics views are
            via = binding.via_view
            target = skip is not None and binding.table.table_id == skip.table_id
            if target and via is None:
                skip = None
            if via is None and (superuser or target):
                continue
            table = binding.table
            columns = tuple(n for c in binding.columns if (n := table.attnum(c.id)))
            self._require(table, _SELECT, via, columns=columns)

    def _owner_of(self, view_name: str) -> str | None:
        """The owner of a view, or None when it is a superuser (who passes every check)."""
        view = self.catalog.find_view(view_name)
        if view is None:
            return None
        owner = database_owner(self._roles, self.user)
        acl = self._privileges.get(table_key(view.oid), "table", owner)
        return None if is_superuser(self._roles, acl.owner) else acl.owner

    def _copy(self, copy: CopyStatement) -> None:
        """COPY FROM needs INSERT on the columns it fills (all of them without a list); COPY
        TO runs as its query, checked as one."""
        if copy.is_from and copy.table is not None:
            table = self.catalog.find_table(copy.table) or self.catalog.partition_view(copy.table)
            if table is not None:
                names = copy.columns or [c.name for c in table.columns]
                found = [table.schema.find(name) for name in names]
                columns = tuple(table.attnum(c.id) for c in found if c is not None)
                self._require(table, _INSERT, columns=columns)

    def _referenced(self, ast: exp.Expr) -> None:
        """A foreign key needs REFERENCES on the table it references (42501)."""
        for reference in ast.find_all(exp.Reference):
            target = reference.this
            node = target.this if isinstance(target, exp.Schema) else target
            if isinstance(node, exp.Table):
                parent = self.catalog.find_table(identifier_name(node))
                if parent is not None:
                    self._require(parent, _REFERENCES)

    def _ddl(self, ast: exp.Expr) -> None:
        if isinstance(ast, SequenceStatement):
            self._sequence_ddl(ast)
            return
        if isinstance(ast, (exp.Create, exp.Alter)):
            self._referenced(ast)
        if isinstance(ast, exp.Create):
            if ast.args.get("replace") and isinstance(ast.this, exp.Table):
                view = self.catalog.find_view(identifier_name(ast.this))
                if view is not None:  # CREATE OR REPLACE VIEW: the owner's to change
                    self._require_owner(view, "view")
            owner = database_owner(self._roles, self.user)
            acl = self._privileges.get(PUBLIC_SCHEMA, "schema", owner)
            if "C" not in acl.held(self._mine()):
                raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
            return
        if isinstance(
            ast, (exp.Drop, exp.Alter, AlterRangePartitions, DetachPartition, AttachPartition)
        ):
            nodes = ast.args.get("tables") or [] if isinstance(ast, exp.Drop) else [ast.this]
            if isinstance(ast, AttachPartition):
                nodes = [ast.this, ast.expression]  # the owner's of both, as in PostgreSQL
            for node in nodes:
                if isinstance(node, exp.Table):
                    relation = identifier_name(node)
                    # A partition is its root table's to change (nyala keeps one owner).
                    table = self.catalog.find_table(relation) or self.catalog.partition_owner(
                        relation
                    )
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
        columns: Columns = None,
    ) -> None:
        """``letter`` on ``table`` for the current role, or for the owner of the view ``via``
        when that view's query reads it; with ``columns`` (pg_attribute numbers), the
        privilege on each of those columns does as well (on any one column for ())."""
        if via is None:
            roles = self._mine()
        else:
            owner = self._owner_of(via)
            if owner is None:
                return
            roles = privileges_of(self._roles, owner)
        default_owner = database_owner(self._roles, self.user)
        acl = self._privileges.get(table_key(table.oid), "table", default_owner)
        if letter in acl.held(roles):
            return
        if columns is None or not self._on_columns(table, acl, roles, letter, columns):
            raise InsufficientPrivilege(f"permission denied for {kind} {table.name}")

    def _on_columns(
        self,
        table: TableInfo | ViewInfo,
        acl: ObjectAcl,
        roles: frozenset[str],
        letter: str,
        columns: tuple[int, ...],
    ) -> bool:
        held = held_by_column(self._privileges, table.oid, acl, roles)
        if not columns:
            return any(letter in rights for rights in held.values())
        return all(letter in held.get(n, ()) for n in columns)

    def _sequence_ddl(self, statement: SequenceStatement) -> None:
        """CREATE SEQUENCE needs CREATE on the schema; ALTER and DROP, the sequence's owner
        (its table's, for a SERIAL or identity column's)."""
        if statement.action == "CREATE":
            owner = database_owner(self._roles, self.user)
            acl = self._privileges.get(PUBLIC_SCHEMA, "schema", owner)
            if "C" not in acl.held(self._mine()):
                raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
            return
        for name in statement.names:
            found = self.catalog.find_sequence(name)
            if found is None:
                continue  # the statement reports it (42P01, or a notice with IF EXISTS)
            owner = database_owner(self._roles, self.user)
            acl = self._privileges.get(table_key(found.owner_oid), "table", owner)
            if acl.owner not in self._mine():
                raise InsufficientPrivilege(f"must be owner of sequence {name}")

    def _require_owner(self, table: TableInfo | ViewInfo, kind: str = "table") -> None:
        owner = database_owner(self._roles, self.user)
        acl = self._privileges.get(table_key(table.oid), "table", owner)
        if acl.owner not in self._mine():
            raise InsufficientPrivilege(f"must be owner of {kind} {table.name}")
