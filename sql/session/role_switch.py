"""SET ROLE and SET SESSION AUTHORIZATION: which role a session acts as, by PostgreSQL's rules.

A session has three users: the one that authenticated, the session user
(``session_authorization``, which only an authenticated superuser may change)
and the current user (``role``, ``none`` meaning the session user), whose
privileges every check uses.  Both are kept as settings, so ``SET LOCAL``,
ROLLBACK and DISCARD ALL undo them as they undo any other setting, and
``is_superuser`` follows the current user.
"""

from __future__ import annotations

from catalog.privileges import is_superuser
from catalog.roles import RoleStore
from sql.common.result import Result
from sql.frontend.statements import Utility
from sql.session.settings import SessionSettings
from storage.errors import InsufficientPrivilege, InvalidParameterValue, NoActiveSqlTransaction

ROLE = "role"
SESSION_AUTHORIZATION = "session_authorization"
NAMES = (ROLE, SESSION_AUTHORIZATION)
NONE = "none"


def current_user(settings: SessionSettings) -> str:
    """The role privileges are checked as (asked several times a statement: worked out once
    per change of the settings)."""
    return settings.cached(current_user, lambda: _current_user(settings))


def _current_user(settings: SessionSettings) -> str:
    role = settings.get(ROLE)
    return role if role != NONE else settings.get(SESSION_AUTHORIZATION)


def session_user(settings: SessionSettings) -> str:
    return settings.get(SESSION_AUTHORIZATION)


def run(
    utility: Utility,
    settings: SessionSettings,
    roles: RoleStore | None,
    authenticated: str,
    in_block: bool,
) -> Result:
    """SET, SET LOCAL or RESET of ``role`` or ``session_authorization``."""
    tag = "RESET" if utility.kind == "RESET" else "SET"
    if utility.local and not in_block:
        warning = NoActiveSqlTransaction(
            "SET LOCAL can only be used in transaction blocks", severity="WARNING"
        )
        return Result(command_tag=tag, notices=[warning])
    value = utility.value if utility.kind == "SET" else "default"
    changes: dict[str, str] = {}
    if utility.name == ROLE:
        changes[ROLE] = _role(value, settings, roles)
    else:
        changes[SESSION_AUTHORIZATION] = _session_authorization(value, roles, authenticated)
        changes[ROLE] = NONE
    names = (*changes, "is_superuser")
    if utility.local:
        for name in names:
            settings.remember_local(name)
    for name, new in changes.items():
        settings.set_fact(name, new)
    superuser = is_superuser(roles, current_user(settings))
    settings.set_fact("is_superuser", "on" if superuser else "off")
    return Result(command_tag=tag)


def _role(value: str, settings: SessionSettings, roles: RoleStore | None) -> str:
    """PostgreSQL 15's check_role: the session user must be a member of the role (directly
    or not, INHERIT or not) or a superuser."""
    if value.lower() in (NONE, "default"):
        return NONE
    role = roles.get(value) if roles is not None else None
    if roles is not None and role is None:
        raise InvalidParameterValue(f'role "{value}" does not exist')
    session = session_user(settings)
    if not is_superuser(roles, session) and (
        roles is None or value not in roles.member_of(session)
    ):
        raise InsufficientPrivilege(f'permission denied to set role "{value}"')
    return value


def _session_authorization(value: str, roles: RoleStore | None, authenticated: str) -> str:
    """Only a role that authenticated as a superuser may become another session user."""
    if value.lower() == "default":
        return authenticated
    if roles is not None and roles.get(value) is None:
        raise InvalidParameterValue(f'role "{value}" does not exist')
    if value != authenticated and not is_superuser(roles, authenticated):
        raise InsufficientPrivilege("permission denied to set session authorization")
    return value
