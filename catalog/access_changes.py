"""AccessChanges: a transaction's own roles, memberships, owners and ACLs until it ends.

Roles and privileges are cluster-wide in PostgreSQL but still transactional:
CREATE ROLE, GRANT, ALTER DEFAULT PRIVILEGES ... inside a block vanish at
ROLLBACK and are seen by other sessions only after COMMIT.  The first such
change forks private copies of both stores (``RoleStore.fork``,
``PrivilegeStore.fork``); the transaction's statements read and write the
copies, which journal each change with what it replaced.  A savepoint keeps
the copies' state and the journals' lengths.  COMMIT holds both shared
stores' locks, replays the journals onto what is committed now (a role
another transaction created meanwhile is 42710, any other concurrent change
to the same role, membership or ACL 40001) and commits the rest of the
transaction with the replayed stores' documents in its WAL record
(``catalog.access_journal``).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.access_journal import AccessJournal, Commit, publish
from catalog.privileges import AclChange, ObjectAcl, PrivilegeStore
from catalog.roles import Membership, Role, RoleJournal, RoleStore


@dataclass(frozen=True, slots=True)
class _Mark:
    name: str
    roles: tuple[dict[str, Role], list[Membership]] | None
    acls: dict[str, ObjectAcl]
    role_changes: int
    acl_changes: int


class AccessChanges:
    """The private role and privilege stores of one transaction and their journals."""

    def __init__(
        self, roles: RoleStore | None, privileges: PrivilegeStore, savepoints: list[str]
    ) -> None:
        self._shared_roles = roles
        self._shared_privileges = privileges
        self._role_journal = RoleJournal()
        self._acl_journal: list[AclChange] = []
        self.roles = roles.fork(self._role_journal) if roles is not None else None
        self.privileges = privileges.fork(self._acl_journal)
        self._marks: list[_Mark] = []
        for name in savepoints:
            self.savepoint(name)

    def savepoint(self, name: str) -> None:
        self._marks.append(
            _Mark(
                name,
                self.roles.state() if self.roles is not None else None,
                self.privileges.state(),
                len(self._role_journal.changes),
                len(self._acl_journal),
            )
        )

    def _find(self, name: str) -> int | None:
        return next(
            (i for i in reversed(range(len(self._marks))) if self._marks[i].name == name), None
        )

    def release(self, name: str) -> None:
        index = self._find(name)
        if index is not None:
            del self._marks[index:]

    def rollback_to(self, name: str) -> None:
        """Undo the changes since savepoint ``name`` (which stays; later ones go)."""
        index = self._find(name)
        if index is None:
            return
        mark = self._marks[index]
        del self._marks[index + 1 :]
        if self.roles is not None and mark.roles is not None:
            self.roles.restore(mark.roles)
        self.privileges.restore(mark.acls)
        del self._role_journal.changes[mark.role_changes :]
        del self._acl_journal[mark.acl_changes :]

    def changed_role(self, name: str) -> bool:
        """Whether this transaction created, changed or dropped role ``name``."""
        return any(c.name == name and not c.member for c in self._role_journal.changes)

    def journal(self) -> AccessJournal:
        """What the transaction changed, for its commit record or its prepared file."""
        return AccessJournal(list(self._role_journal.changes), list(self._acl_journal))

    def commit(self, commit: Commit) -> None:
        """Replay the journals onto the shared stores (raising 42710 or 40001 before
        ``commit`` runs if they conflict) and ``commit`` the rest of the transaction with
        the new documents in its WAL record; the stores take them once it is durable."""
        publish(self._shared_roles, self._shared_privileges, self.journal(), commit)
