"""GRANT role TO role and REVOKE role FROM role: change the role store's memberships.

PostgreSQL 15's rules (AddRoleMems, DelRoleMems): a superuser may grant any
role; anyone else needs ADMIN OPTION on it (superuser roles only by a
superuser); a membership loop, a role in itself included, is refused with
0LP01; an existing membership is a NOTICE and revoking a missing one a
WARNING, not an error.
"""

from __future__ import annotations

from catalog.privileges import PUBLIC, is_superuser
from catalog.roles import Membership, RoleStore
from sql.common.result import Result
from sql.frontend.statements import MembershipStatement
from storage.errors import (
    DbError,
    FeatureNotSupported,
    InsufficientPrivilege,
    InvalidGrantOperation,
    Notice,
    SqlWarning,
    UndefinedObject,
)


def execute_membership(
    statement: MembershipStatement, roles: RoleStore | None, user: str
) -> Result:
    """Apply the statement as the current user ``user``."""
    if roles is None:
        raise FeatureNotSupported("roles are not available in this database")
    granted = [_existing(name, roles, user) for name in statement.roles]
    members = [_existing(name, roles, user) for name in statement.grantees]
    superuser = is_superuser(roles, user)
    notices: list[DbError] = []
    for role in granted:
        _check_admin(role, roles, user, superuser)
        for member in members:
            if statement.is_grant:
                notices += _grant(role, member, roles, user, statement.admin_option)
            else:
                notices += _revoke(role, member, roles, statement.admin_option)
    return Result(
        command_tag="GRANT ROLE" if statement.is_grant else "REVOKE ROLE", notices=notices
    )


def _existing(name: str, roles: RoleStore, user: str) -> str:
    if name in ("CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"):
        return user
    if name == PUBLIC:
        raise UndefinedObject('role "public" does not exist')
    if roles.get(name) is None:
        raise UndefinedObject(f'role "{name}" does not exist')
    return name


def _check_admin(role: str, roles: RoleStore, user: str, superuser: bool) -> None:
    if superuser:
        return
    if is_superuser(roles, role):
        raise InsufficientPrivilege("must be superuser to alter superusers")
    if not roles.has_admin(user, role):
        raise InsufficientPrivilege(f'must have admin option on role "{role}"')


def _grant(role: str, member: str, roles: RoleStore, grantor: str, admin: bool) -> list[DbError]:
    if member in roles.member_of(role):
        raise InvalidGrantOperation(f'role "{role}" is a member of role "{member}"')
    existing = roles.membership(role, member)
    if existing is not None and (not admin or existing.admin_option):
        return [Notice(f'role "{member}" is already a member of role "{role}"')]
    roles.put_membership(Membership(role, member, grantor, admin))
    return []


def _revoke(role: str, member: str, roles: RoleStore, admin_only: bool) -> list[DbError]:
    existing = roles.membership(role, member)
    if existing is None:
        return [SqlWarning(f'role "{member}" is not a member of role "{role}"')]
    if admin_only:
        roles.put_membership(Membership(role, member, existing.grantor, admin_option=False))
    else:
        roles.drop_membership(role, member)
    return []
