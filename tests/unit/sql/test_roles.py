"""Unit tests for sql.roles: role statement parsing and the rules applied to the store."""

from __future__ import annotations

import pytest

from catalog.roles import Role, RoleStore
from sql.ddl.roles import execute_role_statement
from sql.frontend import parser
from sql.frontend.statements import RoleStatement
from storage import errors


def parse(sql):
    (statement,) = parser.parse(sql)
    return statement.ast


@pytest.fixture
def store(tmp_path):
    roles = RoleStore(tmp_path, fsync=False)
    roles.bootstrap("admin", None)
    return roles


def run(store, sql, user="admin"):
    return execute_role_statement(parse(sql), store, user)


def test_recognises_role_statements_only():
    assert isinstance(parse("create user x"), RoleStatement)
    assert isinstance(parse("DROP ROLE x"), RoleStatement)
    assert not isinstance(parse("create table user (a int)"), RoleStatement)


def test_parse_attributes():
    statement = parse("create user Alice with login superuser password 'pw' connection limit 3")
    assert statement.names == ["alice"]
    assert statement.attributes == {"login": True, "superuser": True, "password": "pw"}
    assert parse('create role "Bob"').attributes == {"login": False}
    assert parse("alter role bob password null").attributes == {"password": None}
    dropped = parse("drop role if exists a, b")
    assert (dropped.names, dropped.if_exists) == (["a", "b"], True)
    with pytest.raises(errors.SqlSyntaxError):
        parse("create role x with frobnicate")


def test_create_alter_drop(store):
    # "!" is not a base64 character, so the verifier cannot contain the password by chance.
    assert run(store, "create user alice password 'pw!'").command_tag == "CREATE ROLE"
    alice = store.get("alice")
    assert alice.login and alice.password.startswith("SCRAM-SHA-256$4096:")
    assert "pw!" not in alice.password
    with pytest.raises(errors.DuplicateObject):
        run(store, "create role alice")
    assert run(store, "alter role alice nologin").command_tag == "ALTER ROLE"
    assert not store.get("alice").login
    assert run(store, "drop role alice").command_tag == "DROP ROLE"
    assert store.get("alice") is None
    with pytest.raises(errors.UndefinedObject):
        run(store, "drop role alice")
    notices = run(store, "drop role if exists alice").notices
    assert [n.message for n in notices] == ['role "alice" does not exist, skipping']


def test_privileges(store):
    store.put(Role("carol", password=None))
    with pytest.raises(errors.InsufficientPrivilege):
        run(store, "create role x", user="carol")
    with pytest.raises(errors.InsufficientPrivilege):
        run(store, "alter role admin password 'x'", user="carol")
    run(store, "alter role carol password 'mine'", user="carol")
    assert store.get("carol").password is not None
    with pytest.raises(errors.ObjectInUse):
        run(store, "drop role admin")
