"""REASSIGN OWNED and DROP OWNED: hand a role's objects to another, or drop them and its grants.

As in PostgreSQL 15, the current role needs the privileges of every role
named (and of the new owner); objects are the tables and views of this
database, their sequences following their tables.  DROP OWNED also revokes
every privilege granted to the roles, cascading to what they granted
onwards, so that DROP ROLE can follow.
"""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.column_privileges import owned_by
from catalog.privileges import (
    GrantRequest,
    PrivilegeStore,
    apply_grant,
    is_superuser,
    privileges_of,
    table_key,
)
from catalog.roles import RoleStore
from sql.common.result import Result
from sql.frontend.statements import OwnedStatement
from storage.errors import FeatureNotSupported, InsufficientPrivilege, UndefinedObject

_ALL_LETTERS = {
    "table": "arwdDxt", "schema": "UC", "sequence": "rwU", "database": "CTc", "column": "arwx",
}  # fmt: skip


def execute_owned(
    statement: OwnedStatement,
    catalog: Catalog,
    privileges: PrivilegeStore,
    roles: RoleStore | None,
    user: str,
) -> Result:
    if roles is None:
        raise FeatureNotSupported("roles are not available in this database")
    verb = "reassign" if statement.action == "REASSIGN" else "drop"
    names = [_role(name, roles, user) for name in statement.roles]
    targets = [*names, _role(statement.new_owner, roles, user)] if verb == "reassign" else names
    if not is_superuser(roles, user):
        mine = privileges_of(roles, user)
        if any(name not in mine for name in targets):
            raise InsufficientPrivilege(f"permission denied to {verb} objects")
    if verb == "reassign":
        new_owner = targets[-1]
        for key, acl in privileges.all().items():
            if acl.owner in names and not key.startswith("default:"):
                changed = privileges.get(key, acl.kind, acl.owner)
                changed.change_owner(new_owner)
                privileges.put(key, changed)
        return Result(command_tag="REASSIGN OWNED")
    owned = {key for key, acl in privileges.all().items() if acl.owner in names}
    for key in owned:
        if key.startswith("default:"):
            privileges.drop(key)  # the roles' default privileges go too
    for view in catalog.views():
        if f"table:{view.oid}" in owned and catalog.find_view(view.name) is not None:
            catalog.drop_view(view.name, cascade=statement.cascade)
    for table in catalog.tables():
        if f"table:{table.oid}" in owned and catalog.find_table(table.name) is not None:
            catalog.drop_table(table.name, cascade=statement.cascade)
    for key, acl in privileges.all().items():
        if (
            key.startswith("default:")
            or acl.owner in names
            or not any(
                name in (item.grantee, item.grantor) for item in acl.items or [] for name in names
            )
        ):
            continue
        changed = privileges.get(key, acl.kind, acl.owner)
        if key.startswith("column:"):  # granted by whoever owns its table now
            table_acl = privileges.get(table_key(int(key.split(":")[1])), "table", acl.owner)
            changed = owned_by(changed, table_acl.owner)
        request = GrantRequest(False, _ALL_LETTERS[acl.kind], True, tuple(names), cascade=True)
        apply_grant(changed, request, changed.owner, True, f"{acl.kind} {key}")
        privileges.put(key, changed)
    return Result(command_tag="DROP OWNED")


def _role(name: str, roles: RoleStore, user: str) -> str:
    if name in ("CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"):
        return user
    if roles.get(name) is None:
        raise UndefinedObject(f'role "{name}" does not exist')
    return name
