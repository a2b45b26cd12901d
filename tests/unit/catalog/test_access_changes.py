"""A transaction's own role and privilege stores: savepoints, replay at COMMIT, conflicts."""

from __future__ import annotations

import pytest

from catalog.access_changes import AccessChanges
from catalog.privileges import AclItem, ObjectAcl, PrivilegeStore, table_key
from catalog.roles import Membership, Role, RoleStore
from storage.errors import DuplicateObject, SerializationFailure


@pytest.fixture
def stores(tmp_path) -> tuple[RoleStore, PrivilegeStore]:
    roles = RoleStore(tmp_path)
    roles.bootstrap("admin", None)
    return roles, PrivilegeStore(tmp_path)


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
    published: list[bool] = []
    mine.commit(lambda: published.append(True))
    assert published == [True]
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
    mine.commit(lambda: None)
    assert [r.name for r in roles.all()] == ["admin", "last"]


def test_a_role_another_transaction_created_first_is_42710_before_publishing(stores):
    roles, privileges = stores
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    assert first.roles is not None and second.roles is not None
    first.roles.put(Role("twice"))
    second.roles.put(Role("twice", login=False))
    first.commit(lambda: None)
    published: list[bool] = []
    with pytest.raises(DuplicateObject):
        second.commit(lambda: published.append(True))
    assert published == [] and roles.get("twice") == Role("twice")


def test_concurrent_changes_to_one_acl_or_role_are_40001(stores):
    roles, privileges = stores
    roles.put(Role("r"))
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    first.privileges.put(table_key(3), _grant("admin", "r"))
    second.privileges.put(table_key(3), _grant("admin", "admin"))
    first.commit(lambda: None)
    with pytest.raises(SerializationFailure):
        second.commit(lambda: None)
    first, second = AccessChanges(roles, privileges, []), AccessChanges(roles, privileges, [])
    assert first.roles is not None and second.roles is not None
    first.roles.drop("r")
    second.roles.put_membership(Membership("admin", "r", "admin"))
    first.commit(lambda: None)
    with pytest.raises(SerializationFailure):
        second.commit(lambda: None)
    assert roles.get("r") is None and roles.memberships() == []
