"""pg_roles rows from the durable role store, as PostgreSQL shows them."""

from __future__ import annotations

import zlib
from typing import Any

from catalog.roles import Role


def pg_roles_rows(roles: list[Role], user: str, owner_oid: int) -> list[dict[str, Any]]:
    """pg_roles as PostgreSQL shows it: one row per stored role, passwords masked.

    The first superuser by name owns every object, so it takes the bootstrap
    superuser's OID; the others get OIDs derived from their names.  Without a
    role store (``--auth trust`` and no roles) the session user is that owner.
    """
    if not roles:
        roles = [Role(user, login=True, superuser=True)]
    elif not any(r.name == user for r in roles):
        roles = [*roles, Role(user, login=True)]
    owner = next((r.name for r in roles if r.superuser), roles[0].name)
    out = []
    for role in roles:
        oid = (
            owner_oid
            if role.name == owner
            else 2_000_000_000 + zlib.crc32(role.name.encode()) % 10**8
        )
        out.append(
            {
                "rolname": role.name,
                "rolsuper": role.superuser,
                "rolinherit": True,
                "rolcreaterole": False,
                "rolcreatedb": False,
                "rolcanlogin": role.login,
                "rolreplication": False,
                "rolconnlimit": -1,
                "rolpassword": "********",
                "rolbypassrls": False,
                "oid": oid,
            }
        )
    return out
