"""AccessJournal: a transaction's role and privilege changes, published with its commit record.

``publish`` replays the journal onto the shared stores (42710 or 40001 if a
concurrent commit conflicts), builds the documents the files will hold and
hands them, as one DOCUMENTS marker, to the commit of the transaction's rows
and DDL: the roles and grants are durable in the same WAL record, so a crash
keeps all of the transaction or none of it.  Once the record is durable (and
before the commit is visible) the stores take the new state and write their
files (``catalog.logged_document``).  A prepared transaction keeps its journal
in its file (``to_bytes``, ``from_bytes``) until COMMIT PREPARED publishes it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from catalog import logged_document
from catalog.privileges import FILE_NAME as PRIVILEGES_FILE
from catalog.privileges import AclChange, AclItem, ObjectAcl, PrivilegeStore
from catalog.roles import FILE_NAME as ROLES_FILE
from catalog.roles import Membership, Role, RoleChange, RoleStore
from storage.commit_record import WriteOp, documents_op

JOURNAL = "access_journal"
"""The name a prepared transaction's file gives its journal."""

Commit = Callable[[tuple[WriteOp, ...], Callable[[], None] | None], None]
"""Commits the transaction with these markers in its record, running the callback once the
record is durable and before the commit is visible."""


@dataclass(slots=True)
class AccessJournal:
    """Role and membership changes, then ACL changes, in the order they were made."""

    roles: list[RoleChange] = field(default_factory=list)
    acls: list[AclChange] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.roles or self.acls)

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "roles": [[c.name, c.member, _role(c.before), _role(c.after)] for c in self.roles],
                "acls": [[c.key, _acl(c.before), _acl(c.after)] for c in self.acls],
            }
        ).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> AccessJournal:
        doc = json.loads(data)
        roles = [
            RoleChange(name, member, _from_role(member, before), _from_role(member, after))
            for name, member, before, after in doc["roles"]
        ]
        acls = [
            AclChange(key, _from_acl(before), _from_acl(after))
            for key, before, after in doc["acls"]
        ]
        return cls(roles, acls)


def publish(
    roles: RoleStore | None, privileges: PrivilegeStore, journal: AccessJournal, commit: Commit
) -> None:
    """Commit through ``commit`` with the journal's documents in the record (see the module
    docstring), holding both stores' locks from the replay to the install."""
    role_changes = journal.roles if roles is not None else []
    role_lock = roles.lock if role_changes and roles is not None else contextlib.nullcontext()
    with role_lock, privileges.lock:
        documents: dict[str, bytes] = {}
        installs: list[Callable[[], None]] = []
        if roles is not None and role_changes:
            state = roles.replayed(role_changes)
            role_doc = roles.logged_document(state)
            documents[ROLES_FILE] = logged_document.encode(role_doc)
            installs.append(lambda: roles.install_logged(state, role_doc))
        if journal.acls:
            acls = privileges.replayed(journal.acls)
            acl_doc = privileges.logged_document(acls)
            documents[PRIVILEGES_FILE] = logged_document.encode(acl_doc)
            installs.append(lambda: privileges.install_logged(acls, acl_doc))
        if not documents:
            commit((), None)
            return

        def install() -> None:
            for step in installs:
                step()

        commit((documents_op(documents),), install)


def _role(value: Role | Membership | None) -> dict[str, Any] | None:
    return None if value is None else asdict(value)


def _from_role(member: str, value: dict[str, Any] | None) -> Role | Membership | None:
    if value is None:
        return None
    return Membership(**value) if member else Role(**value)


def _acl(acl: ObjectAcl | None) -> list[Any] | None:
    if acl is None:
        return None
    items = None if acl.items is None else [asdict(i) for i in acl.items]
    return [acl.kind, acl.owner, items]


def _from_acl(value: list[Any] | None) -> ObjectAcl | None:
    if value is None:
        return None
    kind, owner, items = value
    return ObjectAcl(kind, owner, None if items is None else [AclItem(**i) for i in items])
