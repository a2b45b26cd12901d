"""The durable role store: roles, their memberships and SCRAM-SHA-256 verifiers, never a password.

``roles.json`` in the data directory holds each role's name, its LOGIN,
SUPERUSER and INHERIT attributes, the role memberships ``GRANT role TO role``
made (PostgreSQL's ``pg_auth_members``) and its password as a SCRAM-SHA-256 verifier in
PostgreSQL's ``pg_authid.rolpassword`` form
(``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>``, base64).  The
file carries a CRC32C and is replaced atomically on every change.  As in
PostgreSQL 14 and later with ``password_encryption = scram-sha-256``, no md5
hash is kept, so md5-only clients cannot log in with a password.

Membership answers two of PostgreSQL's questions: whose privileges a role
has (``privileges_of``: through memberships of roles that INHERIT) and which
roles it may SET ROLE to (``member_of``: through every membership).  The
predefined roles ``pg_read_all_data``, ``pg_write_all_data`` and
``pg_signal_backend`` always exist and are never stored.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import scramp

from catalog.ddl_locks import DdlLocks
from catalog.logged_document import LoggedDocument, newer_than_file, sequence_of
from storage.errors import (
    DataCorrupted,
    DbError,
    DuplicateObject,
    FeatureNotSupported,
    SerializationFailure,
)
from storage.fs import read_document

FILE_NAME = "roles.json"
FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)
SCRAM_ITERATIONS = 4096
MECHANISM = "SCRAM-SHA-256"


@dataclass(frozen=True, slots=True)
class Verifier:
    """A SCRAM-SHA-256 verifier: what a server needs to check a client's proof."""

    iterations: int
    salt: bytes
    stored_key: bytes
    server_key: bytes

    def text(self) -> str:
        b64 = base64.b64encode
        return (
            f"{MECHANISM}${self.iterations}:{b64(self.salt).decode()}"
            f"${b64(self.stored_key).decode()}:{b64(self.server_key).decode()}"
        )

    @classmethod
    def parse(cls, text: str) -> Verifier | None:
        """Read PostgreSQL's verifier form; None if ``text`` is not one."""
        try:
            mechanism, head, keys = text.split("$")
            iterations, salt = head.split(":")
            stored, server = keys.split(":")
            if mechanism != MECHANISM:
                return None
            return cls(
                int(iterations),
                base64.b64decode(salt, validate=True),
                base64.b64decode(stored, validate=True),
                base64.b64decode(server, validate=True),
            )
        except ValueError:
            return None


def make_verifier(password: str, iterations: int = SCRAM_ITERATIONS) -> Verifier:
    """A new verifier for ``password`` with a random salt (PostgreSQL's SASLprep included)."""
    salt, stored_key, server_key, count = scramp.ScramMechanism(MECHANISM).make_auth_info(
        password, iteration_count=iterations
    )
    return Verifier(count, salt, stored_key, server_key)


def password_verifier(password: str) -> str:
    """The stored form of a password given to CREATE/ALTER ROLE: a verifier as is, else a new one."""
    if Verifier.parse(password) is not None:
        return password
    if len(password) == 35 and password.startswith("md5"):
        raise FeatureNotSupported(
            "md5 password hashes are not stored; give the password in clear text or as a"
            " SCRAM-SHA-256 verifier"
        )
    return make_verifier(password).text()


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    login: bool = True
    superuser: bool = False
    password: str | None = None
    inherit: bool = True

    @property
    def verifier(self) -> Verifier | None:
        return Verifier.parse(self.password) if self.password else None


READ_ALL_DATA = "pg_read_all_data"
WRITE_ALL_DATA = "pg_write_all_data"
SIGNAL_BACKEND = "pg_signal_backend"
READ_ALL_STATS = "pg_read_all_stats"
PREDEFINED_OIDS = {
    READ_ALL_DATA: 6181,
    WRITE_ALL_DATA: 6182,
    SIGNAL_BACKEND: 4200,
    READ_ALL_STATS: 3375,
}
"""PostgreSQL 15's predefined roles nyala acts on, with PostgreSQL's OIDs."""
PREDEFINED = {name: Role(name, login=False) for name in PREDEFINED_OIDS}


def is_reserved(name: str) -> bool:
    """Role names starting ``pg_`` are PostgreSQL's own."""
    return name.startswith("pg_")


@dataclass(frozen=True, slots=True)
class Membership:
    """``member`` belongs to ``role``, granted by ``grantor``; with ADMIN OPTION it may grant
    ``role`` onwards."""

    role: str
    member: str
    grantor: str
    admin_option: bool = False


@dataclass(frozen=True, slots=True)
class RoleChange:
    """One change a transaction made: a role (``member`` "") or a membership of ``name``
    held by ``member``, from ``before`` to ``after`` (None: absent)."""

    name: str
    member: str
    before: Role | Membership | None
    after: Role | Membership | None


@dataclass(slots=True)
class RoleJournal:
    """What a transaction's private copy of the roles changed, in order."""

    changes: list[RoleChange] = field(default_factory=list)


class RoleStore:
    """The roles of one data directory; thread-safe, every change written before it returns.

    ``fork`` gives a transaction a private copy that writes no file and journals its
    changes; ``replayed`` and ``install`` publish the journal at COMMIT."""

    def __init__(
        self, data_dir: Path | None, *, fsync: bool = True, logged: bytes | None = None
    ) -> None:
        """``logged`` is the last copy of the file the WAL's commit records carried: taken
        instead of the file when newer (a crash came between the two)."""
        self._path = Path(data_dir) / FILE_NAME if data_dir is not None else None
        self._file = LoggedDocument(self._path, fsync=fsync) if self._path is not None else None
        self.lock = threading.RLock()
        """Held by every read and write; a COMMIT holds it from ``replayed`` to ``install``."""
        self._roles: dict[str, Role] = {}
        self._members: list[Membership] = []
        self._saved: dict[str, Any] = {"roles": [], "members": []}
        self._journal: RoleJournal | None = None
        self.name_locks = DdlLocks("role")
        """Role names uncommitted role changes hold (shared: a fork keeps its store's)."""
        self.version = 0
        self.sequence = 0
        """How many changes the file has had: orders it and the WAL's copies."""
        self.is_new = self._path is None or not self._path.exists()
        if not self.is_new:
            self._load()
        newer = newer_than_file(FILE_NAME, logged, self._saved if not self.is_new else None)
        if newer is not None and self._file is not None:
            self._apply(newer)
            self._file.write_after_wal(newer)
            self.is_new = False

    def keeps_wal(self) -> bool:
        """Whether a committed document is still to be written (the WAL must keep it)."""
        return self._file is not None and self._file.keeps_wal()

    def fork(self, journal: RoleJournal) -> RoleStore:
        """A private copy for one transaction: its changes go to ``journal``, not to disk."""
        copy = RoleStore(None)
        with self.lock:
            copy._roles = dict(self._roles)
            copy._members = list(self._members)
            copy.version = self.version
        copy._journal = journal
        copy.is_new = False
        copy.name_locks = self.name_locks
        return copy

    def state(self) -> tuple[dict[str, Role], list[Membership]]:
        """The roles and memberships as they are (a savepoint keeps them)."""
        with self.lock:
            return dict(self._roles), list(self._members)

    def restore(self, state: tuple[dict[str, Role], list[Membership]]) -> None:
        """Back to ``state`` (ROLLBACK TO SAVEPOINT in a fork)."""
        with self.lock:
            self._roles, self._members = dict(state[0]), list(state[1])
            self.version += 1

    def _record(self, name: str, member: str, before: object, after: object) -> None:
        if self._journal is not None:
            self._journal.changes.append(RoleChange(name, member, before, after))  # type: ignore[arg-type]

    def replayed(self, changes: list[RoleChange]) -> tuple[dict[str, Role], list[Membership]]:
        """The roles with a transaction's ``changes`` applied, checked against what other
        transactions committed since: a role created meanwhile is 42710, any other change
        to what the transaction changed is 40001.  The caller holds ``lock``."""
        roles = dict(self._roles)
        members = {(m.role, m.member): m for m in self._members}
        for change in changes:
            if not change.member:
                current: Role | Membership | None = roles.get(change.name)
                if current != change.before and current != change.after:
                    if change.before is None:
                        raise DuplicateObject(f'role "{change.name}" already exists')
                    raise SerializationFailure(
                        f'could not serialize access: role "{change.name}" was changed by'
                        " a concurrent transaction"
                    )
                if isinstance(change.after, Role):
                    roles[change.name] = change.after
                else:
                    roles.pop(change.name, None)
                    members = {k: m for k, m in members.items() if change.name not in k}
                continue
            key = (change.name, change.member)
            current = members.get(key)
            if current != change.before and current != change.after:
                raise SerializationFailure(
                    f'could not serialize access: membership of "{change.member}" in'
                    f' "{change.name}" was changed by a concurrent transaction'
                )
            if isinstance(change.after, Membership):
                gone = [n for n in key if n not in roles and n not in PREDEFINED]
                if gone:
                    raise SerializationFailure(
                        f'could not serialize access: role "{gone[0]}" was dropped by a'
                        " concurrent transaction"
                    )
                members[key] = change.after
            else:
                members.pop(key, None)
        return roles, list(members.values())

    def logged_document(self, state: tuple[dict[str, Role], list[Membership]]) -> dict[str, Any]:
        """The file's next contents with ``replayed``'s result, for the commit record to carry
        (``install_logged`` then writes it).  The caller holds ``lock``."""
        return self._document(state[0], state[1], self.sequence + 1)

    def install_logged(
        self, state: tuple[dict[str, Role], list[Membership]], doc: dict[str, Any]
    ) -> None:
        """Make ``replayed``'s result the roles, once ``doc`` is durable in the WAL; the file
        follows (kept pending if the disk refuses).  The caller holds ``lock``."""
        with self.lock:
            self._roles, self._members = state
            self._saved = doc
            self.sequence = sequence_of(doc)
            self.version += 1
            self.is_new = False
            if self._file is not None:
                self._file.write_after_wal(doc)

    def _load(self) -> None:
        if self._path is None:
            return
        doc = read_document(self._path)
        if doc is None:
            return
        if doc.get("version") not in _READABLE_VERSIONS:
            raise DataCorrupted(f"role file format version {doc.get('version')} is not supported")
        self._apply(doc)

    def _apply(self, doc: dict[str, Any]) -> None:
        self._roles = {r["name"]: Role(**r) for r in doc["roles"]}
        self._members = [Membership(**m) for m in doc.get("members", [])]
        self._saved = doc
        self.sequence = sequence_of(doc)

    @staticmethod
    def _document(
        roles: dict[str, Role], members: list[Membership], sequence: int
    ) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "sequence": sequence,
            "roles": [asdict(r) for r in sorted(roles.values(), key=lambda r: r.name)],
            "members": [asdict(m) for m in members],
        }

    def _save(self) -> None:
        """Write the roles; if the disk refuses (53100, 58030) go back to the file's state."""
        doc = self._document(self._roles, self._members, self.sequence + 1)
        self.version += 1
        if self._file is None:
            return
        try:
            self._file.write(doc)
        except DbError:
            self._apply(self._saved)
            raise
        self._saved = doc
        self.sequence = sequence_of(doc)
        self.is_new = False

    def get(self, name: str) -> Role | None:
        """A stored or predefined role."""
        with self.lock:
            return self._roles.get(name) or PREDEFINED.get(name)

    def all(self) -> list[Role]:
        with self.lock:
            return sorted(self._roles.values(), key=lambda r: r.name)

    def put(self, role: Role) -> None:
        """Create or replace a role (the caller has checked what PostgreSQL checks)."""
        with self.lock:
            self._record(role.name, "", self._roles.get(role.name), role)
            self._roles[role.name] = role
            self._save()

    def drop(self, name: str) -> bool:
        """Drop a role and every membership it is in, either side (as DROP ROLE does)."""
        with self.lock:
            before = self._roles.pop(name, None)
            if before is None:
                return False
            self._record(name, "", before, None)
            self._members = [m for m in self._members if name not in (m.role, m.member)]
            self._save()
            return True

    # -- membership --------------------------------------------------------------------------

    def memberships(self) -> list[Membership]:
        with self.lock:
            return list(self._members)

    def membership(self, role: str, member: str) -> Membership | None:
        with self.lock:
            return next((m for m in self._members if (m.role, m.member) == (role, member)), None)

    def put_membership(self, membership: Membership) -> None:
        """Add ``membership`` or replace the one of the same role and member."""
        with self.lock:
            key = (membership.role, membership.member)
            before = next((m for m in self._members if (m.role, m.member) == key), None)
            self._record(membership.role, membership.member, before, membership)
            self._members = [m for m in self._members if (m.role, m.member) != key]
            self._members.append(membership)
            self._save()

    def drop_membership(self, role: str, member: str) -> None:
        with self.lock:
            before = next((m for m in self._members if (m.role, m.member) == (role, member)), None)
            if before is None:
                return
            self._record(role, member, before, None)
            self._members = [m for m in self._members if (m.role, m.member) != (role, member)]
            self._save()

    def _closure(self, name: str, through_inherit: bool) -> frozenset[str]:
        seen = {name}
        frontier = [name]
        while frontier:
            current = frontier.pop()
            if through_inherit:
                role = self._roles.get(current) or PREDEFINED.get(current)
                if role is not None and not role.inherit:
                    continue
            for m in self._members:
                if m.member == current and m.role not in seen:
                    seen.add(m.role)
                    frontier.append(m.role)
        return frozenset(seen)

    def privileges_of(self, name: str) -> frozenset[str]:
        """``name`` and every role whose privileges it has (PostgreSQL's has_privs_of_role),
        superuser status aside."""
        with self.lock:
            return self._closure(name, through_inherit=True)

    def member_of(self, name: str) -> frozenset[str]:
        """``name`` and every role it is a member of, directly or not, INHERIT or not
        (PostgreSQL's is_member_of_role: what SET ROLE may become)."""
        with self.lock:
            return self._closure(name, through_inherit=False)

    def has_admin(self, name: str, role: str) -> bool:
        """Whether ``name`` may grant ``role`` onwards: some role it is a member of holds
        ``role`` WITH ADMIN OPTION."""
        with self.lock:
            mine = self._closure(name, through_inherit=False)
            return any(
                m.role == role and m.admin_option and m.member in mine for m in self._members
            )

    def bootstrap(self, superuser: str, password: str | None) -> bool:
        """On the first start, create the superuser (with ``password`` if given); True if created."""
        with self.lock:
            if not self.is_new:
                return False
            verifier = password_verifier(password) if password else None
            self._roles[superuser] = Role(superuser, login=True, superuser=True, password=verifier)
            self._save()
            return True


def prepared_owner(gid: str) -> tuple[str, str]:
    """The owner a prepared transaction holds its role names as."""
    return ("prepared", gid)
