"""Privileges: who owns each table and the schema, and what GRANT gave to whom (the ACLs).

``privileges.json`` in the data directory (with a CRC32C, replaced
atomically) keeps, per object (``table:<oid>``
for tables, views and sequences, ``schema:public`` or ``database``), its owner and its ACL as PostgreSQL keeps
``pg_class.relacl``: None until the first GRANT or REVOKE (the owner's
default rights, and for the schema PUBLIC's USAGE), then a list of aclitems
``grantee=privileges/grantor``, PUBLIC as the empty grantee and a ``*``
after each privilege given WITH GRANT OPTION.  GRANT and REVOKE follow
PostgreSQL's rules (``apply_grant``): a superuser acts as the owner, anyone
else grants only what they hold with grant option, and revoking a grant
option others granted onwards needs CASCADE.  A table with no entry (made
before privileges existed) belongs to the database owner.  A sequence belongs
to the owner of the table whose column owns it, whatever its entry says.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.logged_document import LoggedDocument, newer_than_file, sequence_of
from catalog.roles import READ_ALL_DATA, WRITE_ALL_DATA, RoleStore
from storage.errors import (
    DataCorrupted,
    DbError,
    DependentObjectsStillExist,
    InsufficientPrivilege,
    PrivilegeNotGranted,
    PrivilegeNotRevoked,
    SerializationFailure,
)
from storage.fs import read_document

FILE_NAME = "privileges.json"
FORMAT_VERSION = 1
PUBLIC = ""
"""The grantee PUBLIC, as aclitem text spells it (``=r/alice``)."""

TABLE_PRIVILEGES = {
    "INSERT": "a", "SELECT": "r", "UPDATE": "w", "DELETE": "d",
    "TRUNCATE": "D", "REFERENCES": "x", "TRIGGER": "t",
}  # fmt: skip
SCHEMA_PRIVILEGES = {"USAGE": "U", "CREATE": "C"}
SEQUENCE_PRIVILEGES = {"USAGE": "U", "SELECT": "r", "UPDATE": "w"}
DATABASE_PRIVILEGES = {"CREATE": "C", "TEMPORARY": "T", "CONNECT": "c"}
_ALL = {
    "table": "arwdDxt", "schema": "UC", "sequence": "rwU", "database": "CTc", "column": "arwx",
}  # fmt: skip
_PREDEFINED: dict[str, dict[str, str]] = {
    "table": {READ_ALL_DATA: "r", WRITE_ALL_DATA: "awd"},
    "schema": {READ_ALL_DATA: "U", WRITE_ALL_DATA: "U"},
    "sequence": {READ_ALL_DATA: "r", WRITE_ALL_DATA: "w"},
    "database": {},
    "column": {},
}
PUBLIC_SCHEMA = "schema:public"
DATABASE = "database"
"""The key of the database's ACL: a data directory holds one database."""


def table_key(oid: int) -> str:
    return f"table:{oid}"


def _ordered(kind: str, letters: set[str] | str) -> str:
    return "".join(c for c in _ALL[kind] if c in letters)


@dataclass(slots=True)
class AclItem:
    grantee: str
    grantor: str
    privileges: str
    grant_options: str = ""

    def text(self) -> str:
        rights = "".join(c + ("*" if c in self.grant_options else "") for c in self.privileges)
        return f"{self.grantee}={rights}/{self.grantor}"


@dataclass(slots=True)
class ObjectAcl:
    """One object's owner and ACL (None: its default)."""

    kind: str
    owner: str
    items: list[AclItem] | None = None

    def effective(self) -> list[AclItem]:
        if self.items is not None:
            return self.items
        if self.kind == "column":
            return []  # PostgreSQL's acldefault('c'): a column's rights are its table's
        default = [AclItem(self.owner, self.owner, _ALL[self.kind])]
        if self.kind == "schema":
            default.append(AclItem(PUBLIC, self.owner, "U"))
        elif self.kind == "database":
            default.insert(0, AclItem(PUBLIC, self.owner, "Tc"))
        return default

    def change_owner(self, new_owner: str) -> None:
        """PostgreSQL's aclnewowner: the old owner's place in the ACL passes to the new one,
        whose entries merge with it."""
        if self.items is not None:
            items: list[AclItem] = []
            for item in self.items:
                grantee = new_owner if item.grantee == self.owner else item.grantee
                grantor = new_owner if item.grantor == self.owner else item.grantor
                same = _find(items, grantee, grantor)
                if same is None:
                    items.append(AclItem(grantee, grantor, item.privileges, item.grant_options))
                else:
                    same.privileges = _ordered(
                        self.kind, set(same.privileges) | set(item.privileges)
                    )
                    same.grant_options = _ordered(
                        self.kind, set(same.grant_options) | set(item.grant_options)
                    )
            self.items = items
        self.owner = new_owner

    def acl_text(self) -> list[str] | None:
        return None if self.items is None else [item.text() for item in self.items]

    def held(self, roles: str | frozenset[str], *, options: bool = False) -> set[str]:
        """The privileges (or grant options) held by a role, given alone or as every role
        whose privileges it has (``RoleStore.privileges_of``): granted to one of them or to
        PUBLIC, all of them when one owns the object, and what the predefined
        ``pg_read_all_data``/``pg_write_all_data`` give."""
        held_by = frozenset((roles,)) if isinstance(roles, str) else roles
        if self.owner in held_by and (options or self.kind != "column"):
            return set(_ALL[self.kind])
        out: set[str] = set()
        for item in self.effective():
            if item.grantee == PUBLIC or item.grantee in held_by:
                out |= set(item.grant_options if options else item.privileges)
        if not options:
            for role, letters in _PREDEFINED[self.kind].items():
                if role in held_by:
                    out |= set(letters)
        return out

    def best_grantor(self, roles: frozenset[str], wanted: str) -> str | None:
        """PostgreSQL's select_best_grantor: of the roles whose privileges the user has, the
        one holding the most of ``wanted`` with grant option (the owner, if among them)."""
        if self.owner in roles:
            return self.owner
        best, best_count = None, 0
        for role in sorted(roles):
            count = len(self.held(role, options=True) & set(wanted))
            if count > best_count:
                best, best_count = role, count
        return best


@dataclass(frozen=True, slots=True)
class GrantRequest:
    """One GRANT or REVOKE on one object, already resolved to letters and role names."""

    is_grant: bool
    privileges: str
    is_all: bool
    grantees: tuple[str, ...]
    grant_option: bool = False
    cascade: bool = False


@dataclass(slots=True)
class GrantOutcome:
    notices: list[DbError] = field(default_factory=list)


def apply_grant(
    acl: ObjectAcl,
    request: GrantRequest,
    user: str,
    is_superuser: bool,
    label: str,
    privileges_of: frozenset[str] | None = None,
    *,
    rights_from: ObjectAcl | None = None,
    subject: str | None = None,
) -> GrantOutcome:
    """Change ``acl`` in place as ``user`` granting or revoking; ``label`` names the object in
    messages (``table t``) as PostgreSQL does, ``subject`` in warnings (``"t"``);
    ``privileges_of`` are the roles whose privileges ``user`` has (itself alone when not
    given); ``rights_from`` is the ACL whose grant options decide the grantor (a column's
    merged with its table's), ``acl`` itself when not given."""
    outcome = GrantOutcome()
    mine = privileges_of if privileges_of is not None else frozenset((user,))
    rights = rights_from if rights_from is not None else acl
    grantor = rights.best_grantor(mine, request.privileges)
    if is_superuser or grantor == acl.owner:
        grantor, available = acl.owner, set(_ALL[acl.kind])
    else:
        grantor = grantor or user
        available = rights.held(grantor, options=True) & set(_ALL[acl.kind])
        if not available and not acl.held(mine):
            raise InsufficientPrivilege(f"permission denied for {label}")
    wanted = set(request.privileges)
    granted = wanted & available
    name = subject if subject is not None else f'"{label.split(" ", 1)[1]}"'
    if request.is_grant:
        if not granted:
            outcome.notices.append(PrivilegeNotGranted(f"no privileges were granted for {name}"))
        elif granted != wanted and not request.is_all:
            outcome.notices.append(
                PrivilegeNotGranted(f"not all privileges were granted for {name}")
            )
    elif not granted:
        outcome.notices.append(PrivilegeNotRevoked(f"no privileges could be revoked for {name}"))
    elif granted != wanted and not request.is_all:
        outcome.notices.append(
            PrivilegeNotRevoked(f"not all privileges could be revoked for {name}")
        )
    if not granted:
        return outcome
    items = list(acl.effective())
    for grantee in request.grantees:
        if request.is_grant:
            _add(items, acl.kind, grantee, grantor, granted, request.grant_option)
        else:
            _revoke(items, acl.kind, grantee, grantor, granted, request, acl.owner)
    acl.items = items
    return outcome


def _find(items: list[AclItem], grantee: str, grantor: str) -> AclItem | None:
    return next((i for i in items if i.grantee == grantee and i.grantor == grantor), None)


def _add(
    items: list[AclItem], kind: str, grantee: str, grantor: str, rights: set[str], option: bool
) -> None:
    item = _find(items, grantee, grantor)
    if item is None:
        item = AclItem(grantee, grantor, "")
        items.append(item)
    item.privileges = _ordered(kind, set(item.privileges) | rights)
    if option and grantee != PUBLIC:
        item.grant_options = _ordered(kind, set(item.grant_options) | rights)


def _revoke(
    items: list[AclItem],
    kind: str,
    grantee: str,
    grantor: str,
    rights: set[str],
    request: GrantRequest,
    owner: str,
) -> None:
    item = _find(items, grantee, grantor)
    if item is None:
        return
    lost_options = set(item.grant_options) & rights
    if grantee != owner and lost_options and _granted_onwards(items, grantee, lost_options):
        if not request.cascade:
            raise DependentObjectsStillExist(
                "dependent privileges exist", hint="Use CASCADE to revoke them too."
            )
        for onward in [i for i in items if i.grantor == grantee]:
            _revoke(
                items, kind, onward.grantee, grantee, lost_options,
                GrantRequest(False, "", True, (), cascade=True), owner,
            )  # fmt: skip
    item.grant_options = _ordered(kind, set(item.grant_options) - rights)
    if not request.grant_option:
        item.privileges = _ordered(kind, set(item.privileges) - rights)
    if not item.privileges:
        items.remove(item)


def _granted_onwards(items: list[AclItem], grantee: str, rights: set[str]) -> bool:
    return any(i.grantor == grantee and set(i.privileges) & rights for i in items)


@dataclass(frozen=True, slots=True)
class AclChange:
    """One change a transaction made to the entry under ``key`` (None: no entry)."""

    key: str
    before: ObjectAcl | None
    after: ObjectAcl | None


def _clone(acl: ObjectAcl) -> ObjectAcl:
    items = None if acl.items is None else [AclItem(*_fields(i)) for i in acl.items]
    return ObjectAcl(acl.kind, acl.owner, items)


def _copy(acl: ObjectAcl | None) -> ObjectAcl | None:
    return None if acl is None else _clone(acl)


class PrivilegeStore:
    """Owners and ACLs of one data directory; thread-safe, written before each change returns.

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
        self._acls: dict[str, ObjectAcl] = {}
        self._saved: dict[str, Any] = {"objects": {}}
        self._journal: list[AclChange] | None = None
        self.version = 0
        self.sequence = 0
        """How many changes the file has had: orders it and the WAL's copies."""
        exists = self._path is not None and self._path.exists()
        if self._path is not None and exists:
            self._load(self._path)
        newer = newer_than_file(FILE_NAME, logged, self._saved if exists else None)
        if newer is not None and self._file is not None:
            self._apply(newer)
            self._file.write_after_wal(newer)

    def keeps_wal(self) -> bool:
        """Whether a committed document is still to be written (the WAL must keep it)."""
        return self._file is not None and self._file.keeps_wal()

    def fork(self, journal: list[AclChange]) -> PrivilegeStore:
        """A private copy for one transaction: its changes go to ``journal``, not to disk."""
        copy = PrivilegeStore(None)
        copy._acls = self.state()
        copy._journal = journal
        return copy

    def state(self) -> dict[str, ObjectAcl]:
        """A copy of every entry (a savepoint keeps it)."""
        with self.lock:
            return {key: _clone(acl) for key, acl in self._acls.items()}

    def restore(self, state: dict[str, ObjectAcl]) -> None:
        """Back to ``state`` (ROLLBACK TO SAVEPOINT in a fork)."""
        with self.lock:
            self._acls = {key: _clone(acl) for key, acl in state.items()}
            self.version += 1

    def _record(self, key: str, after: ObjectAcl | None) -> None:
        if self._journal is not None:
            self._journal.append(AclChange(key, _copy(self._acls.get(key)), _copy(after)))

    def replayed(self, changes: list[AclChange]) -> dict[str, ObjectAcl]:
        """The entries with a transaction's ``changes`` applied; 40001 where another
        transaction committed a different change to the same entry since.  The caller
        holds ``lock``."""
        acls = dict(self._acls)
        for change in changes:
            current = acls.get(change.key)
            if current != change.before and current != change.after:
                raise SerializationFailure(
                    "could not serialize access: privileges were changed by a concurrent"
                    " transaction"
                )
            if change.after is None:
                acls.pop(change.key, None)
            else:
                acls[change.key] = change.after
        return acls

    def logged_document(self, acls: dict[str, ObjectAcl]) -> dict[str, Any]:
        """The file's next contents with ``replayed``'s result, for the commit record to carry
        (``install_logged`` then writes it).  The caller holds ``lock``."""
        return _document(acls, self.sequence + 1)

    def install_logged(self, acls: dict[str, ObjectAcl], doc: dict[str, Any]) -> None:
        """Make ``replayed``'s result the entries, once ``doc`` is durable in the WAL; the file
        follows (kept pending if the disk refuses).  The caller holds ``lock``."""
        with self.lock:
            self._acls = acls
            self._saved = doc
            self.sequence = sequence_of(doc)
            self.version += 1
            if self._file is not None:
                self._file.write_after_wal(doc)

    def _load(self, path: Path) -> None:
        doc = read_document(path)
        if doc is None:
            return
        if doc.get("version") != FORMAT_VERSION:
            raise DataCorrupted(
                f"privilege file format version {doc.get('version')} is not supported"
            )
        self._apply(doc)

    def _apply(self, doc: dict[str, Any]) -> None:
        self._acls = {}
        for key, entry in doc["objects"].items():
            items = entry["items"]
            self._acls[key] = ObjectAcl(
                entry["kind"],
                entry["owner"],
                None if items is None else [AclItem(*i) for i in items],
            )
        self._saved = doc
        self.sequence = sequence_of(doc)

    def _save(self) -> None:
        """Write the ACLs; if the disk refuses (53100, 58030) go back to the file's state."""
        self.version += 1
        if self._file is None:
            return
        doc = _document(self._acls, self.sequence + 1)
        try:
            self._file.write(doc)
        except DbError:
            self._apply(self._saved)
            raise
        self._saved = doc
        self.sequence = sequence_of(doc)

    def get(self, key: str, kind: str, default_owner: str) -> ObjectAcl:
        """A copy of the object's ACL (its default when it has no entry)."""
        with self.lock:
            acl = self._acls.get(key)
            if acl is None:
                return ObjectAcl(kind, default_owner)
            items = None if acl.items is None else [AclItem(*_fields(i)) for i in acl.items]
            return ObjectAcl(acl.kind, acl.owner, items)

    def find(self, key: str) -> ObjectAcl | None:
        """A copy of the entry under ``key``, or None."""
        with self.lock:
            acl = self._acls.get(key)
            if acl is None:
                return None
            items = None if acl.items is None else [AclItem(*_fields(i)) for i in acl.items]
            return ObjectAcl(acl.kind, acl.owner, items)

    def put(self, key: str, acl: ObjectAcl) -> None:
        with self.lock:
            self._record(key, acl)
            self._acls[key] = acl
            self._save()

    def drop(self, key: str) -> None:
        with self.lock:
            if key in self._acls:
                self._record(key, None)
                del self._acls[key]
                self._save()

    def keep_tables(self, oids: set[int]) -> None:
        """Forget the owners and ACLs of tables that are gone (after DROP TABLE), and of
        their columns."""
        with self.lock:
            gone = [
                k
                for k in self._acls
                if k.startswith(("table:", "column:")) and int(k.split(":")[1]) not in oids
            ]
            for key in gone:
                self._record(key, None)
                del self._acls[key]
            if gone:
                self._save()

    def all(self) -> dict[str, ObjectAcl]:
        with self.lock:
            return dict(self._acls)

    def mentions(self, role: str) -> bool:
        """Whether ``role`` owns something or appears in an ACL (then it cannot be dropped)."""
        with self.lock:
            return any(
                acl.owner == role or any(role in (i.grantee, i.grantor) for i in acl.items or [])
                for acl in self._acls.values()
            )


def default_key(role: str, schema: str, kind: str) -> str:
    """Where ALTER DEFAULT PRIVILEGES keeps what ``role``'s new objects of ``kind`` get
    (``schema`` "" for every schema), as pg_default_acl rows."""
    return f"default:{role}:{schema}:{kind}"


def initial_acl(store: PrivilegeStore, kind: str, owner: str, schema: str) -> ObjectAcl:
    """The ACL of an object ``owner`` creates: the built-in default, replaced by the owner's
    default privileges for every schema and extended by those for ``schema``, as
    PostgreSQL's get_user_default_acl; None (the built-in default) when they change
    nothing."""
    acl = ObjectAcl(kind, owner)
    everywhere = store.find(default_key(owner, "", kind))
    in_schema = store.find(default_key(owner, schema, kind))
    if everywhere is None and in_schema is None:
        return acl
    items = [AclItem(*_fields(i)) for i in (everywhere or acl).effective()]
    for extra in in_schema.effective() if in_schema is not None else []:
        _add(items, kind, extra.grantee, extra.grantor, set(extra.privileges), False)
        same = _find(items, extra.grantee, extra.grantor)
        if same is not None and extra.grant_options:
            same.grant_options = _ordered(kind, set(same.grant_options) | set(extra.grant_options))
    if items and [i.text() for i in items] != [i.text() for i in acl.effective()]:
        acl.items = items  # PostgreSQL's aclmerge makes nothing at all the built-in default
    return acl


def _document(acls: dict[str, ObjectAcl], sequence: int) -> dict[str, Any]:
    objects = {
        key: {
            "kind": acl.kind,
            "owner": acl.owner,
            "items": None
            if acl.items is None
            else [[i.grantee, i.grantor, i.privileges, i.grant_options] for i in acl.items],
        }
        for key, acl in sorted(acls.items())
    }
    return {"version": FORMAT_VERSION, "sequence": sequence, "objects": objects}


def _fields(item: AclItem) -> tuple[str, str, str, str]:
    return item.grantee, item.grantor, item.privileges, item.grant_options


def database_owner(roles: RoleStore | None, fallback: str) -> str:
    """The role that owns the database, the public schema and every table made before
    privileges were kept: the first superuser by name, as pg_roles shows it."""
    every = roles.all() if roles is not None else []
    return next((r.name for r in every if r.superuser), fallback)


def is_superuser(roles: RoleStore | None, name: str) -> bool:
    """A role the store does not know (``--auth trust`` with any user name) acts as a
    superuser, as its session does."""
    role = roles.get(name) if roles is not None else None
    return role is None or role.superuser


def privileges_of(roles: RoleStore | None, name: str) -> frozenset[str]:
    """``name`` and the roles whose privileges it has through membership."""
    return roles.privileges_of(name) if roles is not None else frozenset((name,))


def sequence_acl(store: PrivilegeStore, key: str, table_oid: int, default_owner: str) -> ObjectAcl:
    """A sequence's ACL, owned by whoever owns the table with ``table_oid`` (its column's
    table); grants made under an earlier owner pass to the new one, as ALTER TABLE OWNER
    passes them in PostgreSQL."""
    owner = store.get(table_key(table_oid), "table", default_owner).owner
    acl = store.get(key, "sequence", owner)
    if acl.owner != owner:
        acl.change_owner(owner)
    return acl


def check_connect(store: PrivilegeStore, roles: RoleStore | None, user: str, database: str) -> None:
    """CONNECT on the database, which a session needs to start (PUBLIC has it until
    revoked); superusers always connect."""
    if is_superuser(roles, user):
        return
    acl = store.get(DATABASE, "database", database_owner(roles, user))
    if "c" not in acl.held(privileges_of(roles, user)):
        raise InsufficientPrivilege(
            f'permission denied for database "{database}"',
            detail="User does not have CONNECT privilege.",
            severity="FATAL",
        )
