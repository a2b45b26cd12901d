"""Unit tests for catalog.column_privileges: grants on columns, beside their table's ACL."""

from __future__ import annotations

import pytest

from catalog.column_privileges import (
    ColumnChanges,
    column_acl,
    grant_on_columns,
    held_by_column,
    owned_by,
    revoke_with_table,
    save,
)
from catalog.privileges import GrantRequest, ObjectAcl, PrivilegeStore, apply_grant
from storage import errors

OID = 16400


def _grant(store, table_acl, columns, letters, grantees, user="alice", superuser=True, **kw):
    changes = ColumnChanges()
    request = GrantRequest(kw.pop("is_grant", True), letters, False, grantees, **kw)
    grant_on_columns(
        store, OID, "t", table_acl, columns, request, user, superuser, frozenset((user,)),
        changes,
    )  # fmt: skip
    save(store, changes)
    return changes


def test_a_grant_is_kept_per_column_and_survives_reopening(tmp_path):
    store = PrivilegeStore(tmp_path, fsync=False)
    table = ObjectAcl("table", "alice")
    _grant(store, table, [(1, "a"), (2, "b")], "rw", ("bob",))
    reopened = PrivilegeStore(tmp_path, fsync=False)
    assert column_acl(reopened, OID, 1, "alice").acl_text() == ["bob=rw/alice"]
    assert held_by_column(reopened, OID, table, frozenset({"bob"})) == {
        1: {"r", "w"},
        2: {"r", "w"},
    }
    # The table's owner holds no column right of its own: its rights are the table's.
    assert held_by_column(reopened, OID, table, frozenset({"alice"})) == {1: set(), 2: set()}


def test_grant_options_on_the_table_let_a_non_owner_grant_on_columns(tmp_path):
    store = PrivilegeStore(tmp_path, fsync=False)
    table = ObjectAcl("table", "alice")
    apply_grant(table, GrantRequest(True, "r", False, ("bob",), True), "alice", True, "table t")
    _grant(store, table, [(1, "a")], "r", ("carol",), user="bob", superuser=False)
    assert column_acl(store, OID, 1, "alice").acl_text() == ["carol=r/bob"]
    # carol holds the right but not its grant option: a warning; dave holds nothing: 42501.
    warned = _grant(store, table, [(1, "a")], "r", ("dave",), user="carol", superuser=False)
    assert [n.sqlstate for n in warned.notices] == ["01007"]
    with pytest.raises(errors.InsufficientPrivilege):
        _grant(store, table, [(1, "a")], "r", ("erin",), user="dave", superuser=False)


def test_a_table_revoke_takes_the_right_from_every_column_and_needs_cascade(tmp_path):
    store = PrivilegeStore(tmp_path, fsync=False)
    table = ObjectAcl("table", "alice")
    _grant(store, table, [(1, "a")], "r", ("bob",), grant_option=True)
    _grant(store, table, [(1, "a")], "r", ("carol",), user="bob", superuser=False)
    request = GrantRequest(False, "r", False, ("bob",))
    with pytest.raises(errors.DependentObjectsStillExist):
        revoke_with_table(store, OID, table, request, "alice", True, frozenset(), ColumnChanges())
    changes = ColumnChanges()
    cascade = GrantRequest(False, "r", False, ("bob",), cascade=True)
    revoke_with_table(store, OID, table, cascade, "alice", True, frozenset(), changes)
    save(store, changes)
    assert store.find(f"column:{OID}:1") is None


def test_a_new_table_owner_becomes_the_grantor():
    acl = ObjectAcl("column", "alice", None)
    apply_grant(acl, GrantRequest(True, "r", False, ("bob",)), "alice", True, "column a")
    assert owned_by(acl, "zoe").acl_text() == ["bob=r/zoe"]
    assert acl.acl_text() == ["bob=r/alice"]
