"""pg_roles and pg_auth_members rows from the durable role store, as PostgreSQL shows them."""

from __future__ import annotations

import zlib
from typing import Any

from catalog.roles import PREDEFINED, PREDEFINED_OIDS, Membership, Role


def _oid(name: str, owner: str, owner_oid: int) -> int:
    if name == owner:
        return owner_oid
    if name in PREDEFINED_OIDS:
        return PREDEFINED_OIDS[name]
    return 2_000_000_000 + zlib.crc32(name.encode()) % 10**8


def pg_roles_rows(roles: list[Role], user: str, owner_oid: int) -> list[dict[str, Any]]:
    """pg_roles as PostgreSQL shows it: the stored and the predefined roles in OID order,
    passwords masked.

    The first superuser by name owns every object, so it takes the bootstrap
    superuser's OID; the others get OIDs derived from their names (the predefined
    roles PostgreSQL's).  Without a role store (``--auth trust`` and no roles) the
    session user is that owner.
    """
    if not roles:
        roles = [Role(user, login=True, superuser=True)]
    elif not any(r.name == user for r in roles):
        roles = [*roles, Role(user, login=True)]
    owner = _owner(roles)
    out = []
    for role in [*roles, *PREDEFINED.values()]:
        out.append(
            {
                "rolname": role.name,
                "rolsuper": role.superuser,
                "rolinherit": role.inherit,
                "rolcreaterole": False,
                "rolcreatedb": False,
                "rolcanlogin": role.login,
                "rolreplication": False,
                "rolconnlimit": -1,
                "rolpassword": "********",
                "rolbypassrls": False,
                "oid": _oid(role.name, owner, owner_oid),
            }
        )
    return sorted(out, key=lambda row: row["oid"])  # as PostgreSQL's pg_authid lies


def _owner(roles: list[Role]) -> str:
    return next((r.name for r in roles if r.superuser), roles[0].name)


def pg_auth_members_rows(
    memberships: list[Membership], roles: list[Role], user: str, owner_oid: int
) -> list[dict[str, Any]]:
    """One row per membership, roles as the OIDs pg_roles gives them, in the order of
    PostgreSQL's (member, roleid) index, which psql's ``\\du`` lists them in."""
    owner = _owner(roles) if roles else user
    rows = [
        {
            "roleid": _oid(m.role, owner, owner_oid),
            "member": _oid(m.member, owner, owner_oid),
            "grantor": _oid(m.grantor, owner, owner_oid),
            "admin_option": m.admin_option,
        }
        for m in memberships
    ]
    return sorted(rows, key=lambda r: (r["member"], r["roleid"]))
