"""A transaction's own role and privilege stores: savepoints, replay at COMMIT, conflicts."""

from __future__ import annotations

import pytest

from catalog.access_changes import AccessChanges
from catalog.access_journal import AccessJournal
from catalog.privileges import FILE_NAME as PRIVILEGES_FILE
from catalog.privileges import AclItem, ObjectAcl, PrivilegeStore, table_key
from catalog.roles import FILE_NAME as ROLES_FILE
from catalog.roles import Membership, Role, RoleStore
from storage.commit_record import documents_of
from storage.errors import DuplicateObject, SerializationFailure


@pytest.fixture
def stores(tmp_path) -> tuple[RoleStore, PrivilegeStore]:
    roles = RoleStore(tmp_path)
    roles.bootstrap("admin", None)
    return roles, PrivilegeStore(tmp_path)


def _committing(log: list[dict[str, bytes]] | None = None):
    """A commit that records the documents its marker carries and makes them durable."""

    def commit(markers, on_durable) -> None:
        if log is not None:
            log.append({k: v for m in markers for k, v in documents_of(m).items()})
        if on_durable is not None:
            on_durable()

    return commit


def _grant(owner: str, grantee: str) -> ObjectAcl:
    return ObjectAcl(
        "table", owner, [AclItem(owner, owner, "arwdDxt"), AclItem(grantee, owner, "r")]
    )


def test_changes_stay_private_until_commit_and_survive_a_reopen(tmp_path, stores):
    roles, privileges = stores
    mine = AccessChanges(roles, privileges, [])
    assert mine.roles is not None
    mine.roles.put(Role("r"))
    mine.roles.put_membership(Membership("admin", "r", "admin"))
    mine.privileges.put(table_key(7), _grant("admin", "r"))
    assert roles.get("r") is None and privileges.find(table_key(7)) is None
    published: list[dict[str, bytes]] = []
    mine.commit(_committing(published))
    assert sorted(published[0]) == [PRIVILEGES_FILE, ROLES_FILE]
    reopened_roles, reopened_privileges = RoleStore(tmp_path), PrivilegeStore(tmp_path)
    assert reopened_roles.get("r") == Role("r")
    assert reopened_roles.membership("admin", "r") is not None
    assert reopened_privileges.find(table_key(7)) == _grant("admin", "r")


def test_rollback_to_savepoint_undoes_the_changes_since(stores):
    roles, privileges = stores
    mine = AccessChanges(roles, privileges, ["outer"])
    assert mine.roles is not None
    mine.roles.put(Role("kept"))
    mine.savepoint("s")
    mine.roles.put(Role("gone"))
    mine.roles.drop("kept")
    mine.privileges.put(table_key(1), _grant("admin", "gone"))
    mine.rollback_to("s")
    assert mine.roles.get("kept") is not None and mine.roles.get("gone") is None
    assert mine.privileges.find(table_key(1)) is None
    mine.rollback_to("outer")
    assert mine.roles.get("kept") is None
    mine.roles.put(Role("last"))
    mine.commit(_committing())
    assert [r.name for r in roles.all()] == ["admin", "last"]


def test_a_role_another_transaction_created_first_is_42710_before_publishing(stores):
    roles, privileges = stores
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    assert first.roles is not None and second.roles is not None
    first.roles.put(Role("twice"))
    second.roles.put(Role("twice", login=False))
    first.commit(_committing())
    published: list[dict[str, bytes]] = []
    with pytest.raises(DuplicateObject):
        second.commit(_committing(published))
    assert published == [] and roles.get("twice") == Role("twice")


def test_concurrent_changes_to_one_acl_or_role_are_40001(stores):
    roles, privileges = stores
    roles.put(Role("r"))
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    first.privileges.put(table_key(3), _grant("admin", "r"))
    second.privileges.put(table_key(3), _grant("admin", "admin"))
    first.commit(_committing())
    with pytest.raises(SerializationFailure):
        second.commit(_committing())
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    assert first.roles is not None and second.roles is not None
    first.roles.drop("r")
    second.roles.put_membership(Membership("admin", "r", "admin"))
    first.commit(_committing())
    with pytest.raises(SerializationFailure):
        second.commit(_committing())
    assert roles.get("r") is None and roles.memberships() == []


def test_the_commit_record_copy_replaces_an_older_file_on_open(tmp_path, stores):
    """A crash after the WAL record and before the files: opening takes the record's copy."""
    roles, privileges = stores
    before_roles = (tmp_path / ROLES_FILE).read_bytes()
    before_acls = (
        (tmp_path / PRIVILEGES_FILE).read_bytes() if (tmp_path / PRIVILEGES_FILE).exists() else None
    )
    mine = AccessChanges(roles, privileges, [])
    assert mine.roles is not None
    mine.roles.put(Role("late"))
    mine.privileges.put(table_key(9), _grant("admin", "late"))
    logged: list[dict[str, bytes]] = []
    mine.commit(_committing(logged))
    (tmp_path / ROLES_FILE).write_bytes(before_roles)
    if before_acls is None:
        (tmp_path / PRIVILEGES_FILE).unlink()
    else:
        (tmp_path / PRIVILEGES_FILE).write_bytes(before_acls)
    assert RoleStore(tmp_path).get("late") is None
    reopened = RoleStore(tmp_path, logged=logged[0][ROLES_FILE])
    assert reopened.get("late") == Role("late") and not reopened.keeps_wal()
    assert RoleStore(tmp_path).get("late") == Role("late"), "the file was rewritten"
    acls = PrivilegeStore(tmp_path, logged=logged[0][PRIVILEGES_FILE])
    assert acls.find(table_key(9)) == _grant("admin", "late")
    # A later change written straight to the file is newer than the record's copy.
    roles.put(Role("later"))
    assert RoleStore(tmp_path, logged=logged[0][ROLES_FILE]).get("later") == Role("later")


def test_a_journal_survives_bytes(stores):
    roles, privileges = stores
    mine = AccessChanges(roles, privileges, [])
    assert mine.roles is not None
    mine.roles.put(Role("j", password=None))
    mine.roles.put_membership(Membership("admin", "j", "admin", admin_option=True))
    mine.privileges.put(table_key(4), _grant("admin", "j"))
    journal = mine.journal()
    assert AccessJournal.from_bytes(journal.to_bytes()) == journal
