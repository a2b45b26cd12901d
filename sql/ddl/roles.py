"""CREATE, ALTER and DROP ROLE (and USER): apply them to the durable role store.

Only what nyala enforces is kept: LOGIN, SUPERUSER, INHERIT and the password
(stored as a SCRAM-SHA-256 verifier by ``catalog.roles``).  PostgreSQL's other role
attributes (CREATEDB, CREATEROLE, REPLICATION, BYPASSRLS, CONNECTION
LIMIT, VALID UNTIL) are accepted and ignored, so scripts written for
PostgreSQL run.  As in PostgreSQL, only a superuser may create, drop or change
roles, and any role may change its own password.  Names starting ``pg_`` are
reserved for the predefined roles, which cannot be changed or dropped.
"""

from __future__ import annotations

from catalog.privileges import PrivilegeStore
from catalog.roles import PREDEFINED, Role, RoleStore, is_reserved, password_verifier
from sql.common.result import Result
from sql.frontend.statements import RoleStatement
from storage.errors import (
    DbError,
    DependentObjectsStillExist,
    DuplicateObject,
    FeatureNotSupported,
    InsufficientPrivilege,
    ObjectInUse,
    ReservedName,
    UndefinedObject,
)


def execute_role_statement(
    statement: RoleStatement,
    store: RoleStore | None,
    current_user: str,
    privileges: PrivilegeStore | None = None,
) -> Result:
    """Apply the statement as ``current_user``; returns its command tag and notices."""
    if store is None:
        raise FeatureNotSupported("roles are not available in this database")
    current = store.get(current_user)
    is_superuser = current is not None and current.superuser
    if statement.action in ("CREATE", "ALTER") and is_reserved(statement.names[0]):
        if statement.action == "ALTER" and statement.names[0] not in PREDEFINED:
            raise UndefinedObject(f'role "{statement.names[0]}" does not exist')
        raise ReservedName(
            f'role name "{statement.names[0]}" is reserved',
            detail='Role names starting with "pg_" are reserved.',
        )
    if statement.action == "CREATE":
        return _create(statement, store, is_superuser)
    if statement.action == "ALTER":
        return _alter(statement, store, current_user, is_superuser)
    return _drop(statement, store, current_user, is_superuser, privileges)


def _create(statement: RoleStatement, store: RoleStore, is_superuser: bool) -> Result:
    if not is_superuser:
        raise InsufficientPrivilege("permission denied to create role")
    name = statement.names[0]
    if store.get(name) is not None:
        raise DuplicateObject(f'role "{name}" already exists')
    attributes = statement.attributes
    password = attributes.get("password")
    role = Role(
        name,
        login=bool(attributes.get("login", False)),
        superuser=bool(attributes.get("superuser", False)),
        password=password_verifier(str(password)) if password else None,
        inherit=bool(attributes.get("inherit", True)),
    )
    store.put(role)
    return Result(command_tag="CREATE ROLE")


def _alter(
    statement: RoleStatement, store: RoleStore, current_user: str, is_superuser: bool
) -> Result:
    name = statement.names[0]
    role = store.get(name)
    if role is None:
        raise UndefinedObject(f'role "{name}" does not exist')
    attributes = statement.attributes
    only_password = set(attributes) <= {"password"}
    if not is_superuser and not (only_password and name == current_user):
        raise InsufficientPrivilege("permission denied")
    changes: dict[str, object] = {}
    if "login" in attributes:
        changes["login"] = bool(attributes["login"])
    if "superuser" in attributes:
        changes["superuser"] = bool(attributes["superuser"])
    if "inherit" in attributes:
        changes["inherit"] = bool(attributes["inherit"])
    if "password" in attributes:
        password = attributes["password"]
        changes["password"] = password_verifier(str(password)) if password else None
    store.put(_replace(role, changes))
    return Result(command_tag="ALTER ROLE")


def _replace(role: Role, changes: dict[str, object]) -> Role:
    values = {
        "name": role.name,
        "login": role.login,
        "superuser": role.superuser,
        "password": role.password,
        "inherit": role.inherit,
    }
    values.update(changes)
    return Role(**values)  # type: ignore[arg-type]  # values are Role's own fields, by name


def _drop(
    statement: RoleStatement,
    store: RoleStore,
    current_user: str,
    is_superuser: bool,
    privileges: PrivilegeStore | None,
) -> Result:
    if not is_superuser:
        raise InsufficientPrivilege("permission denied to drop role")
    notices: list[DbError] = []
    for name in statement.names:
        if name == current_user:
            raise ObjectInUse("current user cannot be dropped")
        if name in PREDEFINED:
            raise DependentObjectsStillExist(
                f"cannot drop role {name} because it is required by the database system"
            )
        if store.get(name) is None:
            if statement.if_exists:
                notice = UndefinedObject(f'role "{name}" does not exist, skipping')
                notice.severity = "NOTICE"
                notices.append(notice)
                continue
            raise UndefinedObject(f'role "{name}" does not exist')
        if privileges is not None and privileges.mentions(name):
            raise DependentObjectsStillExist(
                f'role "{name}" cannot be dropped because some objects depend on it',
                detail="It owns objects or holds or granted privileges; drop them or REVOKE"
                " the privileges first.",
            )
    for name in statement.names:
        store.drop(name)
    return Result(command_tag="DROP ROLE", notices=notices)
