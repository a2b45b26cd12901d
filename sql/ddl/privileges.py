"""GRANT, REVOKE and ALTER TABLE ... OWNER TO: resolve names, then change owners and ACLs.

The rules of who may grant what live in ``catalog.privileges.apply_grant``;
this module checks the statement's names as PostgreSQL does (42P01 for a
missing table, 3F000 for a schema, 42704 for a role, 0LP01 for a privilege
the object does not have) and applies it object by object.
"""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.column_privileges import (
    COLUMN_PRIVILEGES,
    ColumnChanges,
    grant_on_columns,
    revoke_with_table,
    save,
)
from catalog.privileges import (
    DATABASE,
    DATABASE_PRIVILEGES,
    PUBLIC,
    PUBLIC_SCHEMA,
    SCHEMA_PRIVILEGES,
    SEQUENCE_PRIVILEGES,
    TABLE_PRIVILEGES,
    GrantRequest,
    ObjectAcl,
    PrivilegeStore,
    apply_grant,
    database_owner,
    default_key,
    is_superuser,
    privileges_of,
    sequence_acl,
    table_key,
)
from catalog.roles import RoleStore
from catalog.sequence_objects import SequenceRef
from catalog.table import TableInfo
from catalog.views import ViewInfo
from sql.common.names import SCHEMA
from sql.common.result import Result
from sql.frontend.statements import DefaultPrivilegesStatement, GrantStatement, OwnerStatement
from storage.errors import (
    DbError,
    FeatureNotSupported,
    InsufficientPrivilege,
    InvalidCatalogName,
    InvalidGrantOperation,
    InvalidSchemaName,
    UndefinedColumn,
    UndefinedObject,
    UndefinedTable,
)


def execute_grant(
    statement: GrantStatement,
    catalog: Catalog,
    privileges: PrivilegeStore,
    roles: RoleStore | None,
    user: str,
    database: str = "",
) -> Result:
    owner = database_owner(roles, user)
    superuser = is_superuser(roles, user)
    mine = privileges_of(roles, user)
    grantees = tuple(_grantee(name, roles, user) for name in statement.grantees)
    tag = "GRANT" if statement.is_grant else "REVOKE"
    notices: list[DbError] = []
    if statement.kind == "SCHEMA":
        letters = _letters(statement.privileges, SCHEMA_PRIVILEGES, "schema")
        for _, name in statement.objects:
            if name != SCHEMA:
                raise InvalidSchemaName(f'schema "{name}" does not exist')
        _no_columns(statement)
        request = _request(statement, letters, grantees)
        acl = privileges.get(PUBLIC_SCHEMA, "schema", owner)
        notices += apply_grant(acl, request, user, superuser, f"schema {SCHEMA}", mine).notices
        privileges.put(PUBLIC_SCHEMA, acl)
        return Result(command_tag=tag, notices=notices)
    if statement.kind == "DATABASE":
        letters = _letters(statement.privileges, DATABASE_PRIVILEGES, "database")
        for _, name in statement.objects:
            if name != database:
                raise InvalidCatalogName(f'database "{name}" does not exist', severity="ERROR")
        _no_columns(statement)
        request = _request(statement, letters, grantees)
        acl = privileges.get(DATABASE, "database", owner)
        notices += apply_grant(acl, request, user, superuser, f"database {database}", mine).notices
        privileges.put(DATABASE, acl)
        return Result(command_tag=tag, notices=notices)
    if statement.kind in ("SEQUENCE", "ALL SEQUENCES"):
        return _grant_on_sequences(statement, catalog, privileges, roles, user, grantees)
    letters = _letters(statement.privileges, TABLE_PRIVILEGES, "relation")
    if statement.kind == "ALL TABLES":
        for _, name in statement.objects:
            if name != SCHEMA:
                raise InvalidSchemaName(f'schema "{name}" does not exist')
        tables: list[TableInfo | ViewInfo] = sorted(
            [*catalog.tables(), *catalog.views()], key=lambda t: t.oid
        )
    else:
        tables = []
        for schema, name in statement.objects:
            if schema not in ("", SCHEMA):
                raise InvalidSchemaName(f'schema "{schema}" does not exist')
            table = catalog.find_table(name) or catalog.find_view(name)
            if table is None:
                raise UndefinedTable(f'relation "{name}" does not exist')
            tables.append(table)
    request = _request(statement, letters, grantees)
    for table in tables:
        key = table_key(table.oid)
        acl = privileges.get(key, "table", owner)
        changes = ColumnChanges()
        if letters:
            label = f"table {table.name}"
            notices += apply_grant(acl, request, user, superuser, label, mine).notices
            revoke_with_table(privileges, table.oid, acl, request, user, superuser, mine, changes)
        for privilege, names in statement.columns:
            column_letters = _letters((privilege,), COLUMN_PRIVILEGES, "column")
            column_request = GrantRequest(
                statement.is_grant, column_letters, privilege == "ALL", grantees,
                statement.grant_option, statement.cascade,
            )  # fmt: skip
            columns = [(_attnum(table, name), name) for name in names]
            grant_on_columns(
                privileges, table.oid, table.name, acl, columns, column_request, user,
                superuser, mine, changes,
            )  # fmt: skip
        notices += changes.notices
        if letters:
            privileges.put(key, acl)
        save(privileges, changes)
    return Result(command_tag=tag, notices=notices)


def _attnum(table: TableInfo | ViewInfo, name: str) -> int:
    """The pg_attribute.attnum of a table's or view's column, or 42703."""
    if isinstance(table, ViewInfo):
        names = [c[0] for c in table.columns]
        if name in names:
            return names.index(name) + 1
    else:
        column = table.schema.find(name)
        if column is not None and table.attnum(column.id):
            return table.attnum(column.id)
    raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')


def _no_columns(statement: GrantStatement) -> None:
    if statement.columns:
        raise InvalidGrantOperation("column privileges are only valid for relations")


def _grant_on_sequences(
    statement: GrantStatement,
    catalog: Catalog,
    privileges: PrivilegeStore,
    roles: RoleStore | None,
    user: str,
    grantees: tuple[str, ...],
) -> Result:
    """GRANT or REVOKE on sequences: each belongs to the owner of its table."""
    letters = _letters(statement.privileges, SEQUENCE_PRIVILEGES, "sequence")
    found: list[SequenceRef] = []
    if statement.kind == "ALL SEQUENCES":
        for _, name in statement.objects:
            if name != SCHEMA:
                raise InvalidSchemaName(f'schema "{name}" does not exist')
        for table in sorted(catalog.tables(), key=lambda t: t.oid):
            found += [SequenceRef.of_column(table, i) for i in table.sequences if not i.hidden]
        found += [SequenceRef.of_standalone(q, t) for q, t in catalog.standalone_sequences()]
    else:
        for schema, name in statement.objects:
            if schema not in ("", SCHEMA):
                raise InvalidSchemaName(f'schema "{schema}" does not exist')
            found.append(catalog.get_sequence(name))
    _no_columns(statement)
    request = _request(statement, letters, grantees)
    superuser, mine = is_superuser(roles, user), privileges_of(roles, user)
    notices: list[DbError] = []
    for ref in found:
        key = table_key(ref.oid)
        acl = sequence_acl(privileges, key, ref.owner_oid, database_owner(roles, user))
        label = f"sequence {ref.info.name}"
        notices += apply_grant(acl, request, user, superuser, label, mine).notices
        privileges.put(key, acl)
    tag = "GRANT" if statement.is_grant else "REVOKE"
    return Result(command_tag=tag, notices=notices)


def alter_default(
    statement: DefaultPrivilegesStatement,
    privileges: PrivilegeStore,
    roles: RoleStore | None,
    user: str,
) -> Result:
    """ALTER DEFAULT PRIVILEGES: change what the named roles' (or the current role's) new
    tables or sequences get; needs the privileges of each role named."""
    targets = [_grantee(name, roles, user) for name in statement.roles] or [user]
    if not is_superuser(roles, user):
        mine = privileges_of(roles, user)
        if any(target not in mine for target in targets):
            raise InsufficientPrivilege("permission denied to change default privileges")
    grant = statement.grant
    kind = "table" if grant.kind == "TABLES" else "sequence"
    known = TABLE_PRIVILEGES if kind == "table" else SEQUENCE_PRIVILEGES
    letters = _letters(grant.privileges, known, "relation" if kind == "table" else "sequence")
    request = _request(grant, letters, tuple(_grantee(g, roles, user) for g in grant.grantees))
    for role in targets:
        key = default_key(role, statement.schema, kind)
        acl = privileges.find(key) or ObjectAcl(kind, role, [] if statement.schema else None)
        apply_grant(acl, request, role, True, f"{kind} defaults")
        unchanged = acl.items is None or (
            [i.text() for i in acl.items]
            == [i.text() for i in ([] if statement.schema else ObjectAcl(kind, role).effective())]
        )
        if unchanged:
            privileges.drop(key)
        else:
            privileges.put(key, acl)
    return Result(command_tag="ALTER DEFAULT PRIVILEGES")


def alter_owner(
    statement: OwnerStatement,
    catalog: Catalog,
    privileges: PrivilegeStore,
    roles: RoleStore | None,
    user: str,
) -> Result:
    """ALTER TABLE ... OWNER TO: as in PostgreSQL 15, the owner or a superuser may give a
    table to a role it is a member of that may create in the schema; the ACL's mentions
    of the old owner become the new one's."""
    tag = f"ALTER {statement.kind}"
    found = _owned_object(statement, catalog)
    if found is None:
        if statement.if_exists:
            notice = UndefinedTable(f'relation "{statement.table}" does not exist, skipping')
            notice.severity = "NOTICE"
            return Result(command_tag=tag, notices=[notice])
        raise UndefinedTable(f'relation "{statement.table}" does not exist')
    key, kind = found
    if statement.owner == PUBLIC:
        raise UndefinedObject('role "public" does not exist')
    new_owner = _grantee(statement.owner, roles, user)
    acl = privileges.get(key, kind, database_owner(roles, user))
    if new_owner == acl.owner:
        return Result(command_tag=tag)
    if not is_superuser(roles, user):
        if acl.owner not in privileges_of(roles, user):
            raise InsufficientPrivilege(f"must be owner of {kind} {statement.table}")
        if roles is None or new_owner not in roles.member_of(user):
            raise InsufficientPrivilege(f'must be member of role "{new_owner}"')
        schema = privileges.get(PUBLIC_SCHEMA, "schema", database_owner(roles, user))
        if "C" not in schema.held(privileges_of(roles, new_owner)):
            raise InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
    acl.change_owner(new_owner)
    privileges.put(key, acl)
    return Result(command_tag=tag)


def _owned_object(statement: OwnerStatement, catalog: Catalog) -> tuple[str, str] | None:
    """The ACL key and kind of what ALTER ... OWNER TO names: the public schema, or a
    table, view or standalone sequence (ALTER TABLE may name any of them, as pg_dump does)."""
    if statement.kind == "SCHEMA":
        return PUBLIC_SCHEMA, "schema"
    name = statement.table
    table = catalog.find_table(name) if statement.kind in ("TABLE", "VIEW") else None
    if table is not None and statement.kind == "TABLE":
        return table_key(table.oid), "table"
    view = catalog.find_view(name) if statement.kind in ("TABLE", "VIEW") else None
    if view is not None:
        return table_key(view.oid), "table"
    sequence = catalog.find_sequence(name) if statement.kind in ("TABLE", "SEQUENCE") else None
    if sequence is not None and not sequence.info.hidden:
        if sequence.standalone is None:
            assert sequence.table is not None, "a column's sequence has its table"
            raise FeatureNotSupported(
                f'cannot change owner of sequence "{name}"',
                detail=f'Sequence "{name}" is linked to table "{sequence.table.name}".',
            )
        return table_key(sequence.oid), "sequence"
    return None


def _request(statement: GrantStatement, letters: str, grantees: tuple[str, ...]) -> GrantRequest:
    return GrantRequest(
        statement.is_grant,
        letters,
        statement.privileges == ("ALL",),
        grantees,
        statement.grant_option,
        statement.cascade,
    )


def _letters(names: tuple[str, ...], known: dict[str, str], kind: str) -> str:
    if names == ("ALL",):
        return "".join(known.values())
    out = []
    for name in names:
        letter = known.get(name)
        if letter is None:
            raise InvalidGrantOperation(f"invalid privilege type {name} for {kind}")
        out.append(letter)
    return "".join(out)


def _grantee(name: str, roles: RoleStore | None, user: str) -> str:
    if name == PUBLIC:
        return PUBLIC
    if name in ("CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"):
        return user
    if roles is not None and roles.get(name) is None:
        raise UndefinedObject(f'role "{name}" does not exist')
    return name
