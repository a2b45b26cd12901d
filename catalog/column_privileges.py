"""Column privileges: SELECT, INSERT, UPDATE and REFERENCES granted on single columns.

Each column with an ACL has an entry ``column:<table oid>:<column id>`` in the
privilege store, as PostgreSQL keeps ``pg_attribute.attacl``: no entry means
no rights beyond the table's.  A column belongs to its table's owner, whatever
its entry says (the entry follows an ALTER TABLE OWNER when next read).  A
right on the table is a right on every column; a column right alone lets a
statement use that column only.  Who may grant decides on the table's and the
column's grant options together, as PostgreSQL's ExecGrant_Attribute; revoking
a right on the table revokes it on every column too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from catalog.privileges import (
    AclItem,
    GrantRequest,
    ObjectAcl,
    PrivilegeStore,
    apply_grant,
)
from storage.errors import DbError

COLUMN_PRIVILEGES = {"INSERT": "a", "SELECT": "r", "UPDATE": "w", "REFERENCES": "x"}
COLUMN_LETTERS = "arwx"


def column_key(table_oid: int, column_id: int) -> str:
    return f"column:{table_oid}:{column_id}"


def column_acls(
    store: PrivilegeStore, table_oid: int, table_acl: ObjectAcl
) -> dict[int, ObjectAcl]:
    """The ACLs of a table's columns that have one, by column id, owned by the table's owner."""
    prefix = f"column:{table_oid}:"
    out: dict[int, ObjectAcl] = {}
    for key, acl in store.all().items():
        if key.startswith(prefix):
            out[int(key[len(prefix) :])] = owned_by(acl, table_acl.owner)
    return out


def column_acl(store: PrivilegeStore, table_oid: int, column_id: int, owner: str) -> ObjectAcl:
    found = store.find(column_key(table_oid, column_id))
    return ObjectAcl("column", owner) if found is None else owned_by(found, owner)


def owned_by(acl: ObjectAcl, owner: str) -> ObjectAcl:
    """A copy of a column's ACL as ``owner``, its table's owner now, grants it."""
    copy = ObjectAcl(
        acl.kind,
        acl.owner,
        None if acl.items is None else [AclItem(*_fields(i)) for i in acl.items],
    )
    if copy.owner != owner:
        copy.change_owner(owner)
    return copy


def _fields(item: AclItem) -> tuple[str, str, str, str]:
    return item.grantee, item.grantor, item.privileges, item.grant_options


def merged(table_acl: ObjectAcl, acl: ObjectAcl) -> ObjectAcl:
    """The table's and the column's aclitems together: what decides who grants on a column."""
    items = [AclItem(*_fields(i)) for i in table_acl.effective()]
    items += [AclItem(*_fields(i)) for i in acl.effective()]
    return ObjectAcl("table", table_acl.owner, items)


@dataclass(slots=True)
class ColumnChanges:
    """ACLs to write back once every column of a statement is settled, and its warnings."""

    acls: dict[str, ObjectAcl] = field(default_factory=dict)
    notices: list[DbError] = field(default_factory=list)


def grant_on_columns(
    store: PrivilegeStore,
    table_oid: int,
    table_name: str,
    table_acl: ObjectAcl,
    columns: Iterable[tuple[int, str]],
    request: GrantRequest,
    user: str,
    is_superuser: bool,
    mine: frozenset[str],
    changes: ColumnChanges,
) -> None:
    """GRANT or REVOKE ``request`` on each (column id, name) of one table, into ``changes``."""
    for column_id, name in columns:
        key = column_key(table_oid, column_id)
        acl = changes.acls.get(key) or column_acl(store, table_oid, column_id, table_acl.owner)
        outcome = apply_grant(
            acl, request, user, is_superuser, f"column {name} of relation {table_name}", mine,
            rights_from=merged(table_acl, acl),
            subject=f'column "{name}" of relation "{table_name}"',
        )  # fmt: skip
        changes.notices += outcome.notices
        changes.acls[key] = acl


def revoke_with_table(
    store: PrivilegeStore,
    table_oid: int,
    table_acl: ObjectAcl,
    request: GrantRequest,
    user: str,
    is_superuser: bool,
    mine: frozenset[str],
    changes: ColumnChanges,
) -> None:
    """A REVOKE on the table takes the same rights from each of its columns, as PostgreSQL's
    expand_all_col_privileges, silently."""
    letters = "".join(c for c in request.privileges if c in COLUMN_LETTERS)
    if request.is_grant or not letters:
        return
    column_request = GrantRequest(
        False, letters, True, request.grantees, request.grant_option, request.cascade
    )
    for column_id, acl in column_acls(store, table_oid, table_acl).items():
        key = column_key(table_oid, column_id)
        acl = changes.acls.get(key) or acl
        apply_grant(
            acl, column_request, user, is_superuser, "column", mine,
            rights_from=merged(table_acl, acl), subject="",
        )  # fmt: skip
        changes.acls[key] = acl


def save(store: PrivilegeStore, changes: ColumnChanges) -> None:
    """Write the changed column ACLs; a column left with no aclitem has no entry."""
    for key, acl in changes.acls.items():
        if acl.items is not None and not acl.items:
            store.drop(key)
        else:
            store.put(key, acl)


def held_by_column(
    store: PrivilegeStore, table_oid: int, table_acl: ObjectAcl, roles: frozenset[str]
) -> dict[int, set[str]]:
    """The column rights ``roles`` hold on a table's columns, by column id (those with an ACL)."""
    return {
        column_id: acl.held(roles)
        for column_id, acl in column_acls(store, table_oid, table_acl).items()
    }
