"""Unit tests for sql.frontend.privileges: role membership, sequences, databases, default
privileges and REASSIGN/DROP OWNED read into typed statements."""

from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.frontend.statements import (
    DefaultPrivilegesStatement,
    GrantStatement,
    MembershipStatement,
    OwnedStatement,
)
from storage import errors


def _one(sql: str):
    (statement,) = parser.parse(sql)
    return statement.ast


def test_grant_and_revoke_of_roles():
    grant = _one("GRANT team, ops TO alice, CURRENT_USER WITH ADMIN OPTION GRANTED BY admin")
    assert isinstance(grant, MembershipStatement)
    assert (grant.is_grant, grant.roles, grant.grantees, grant.admin_option) == (
        True, ("team", "ops"), ("alice", "CURRENT_USER"), True,
    )  # fmt: skip
    revoke = _one('REVOKE ADMIN OPTION FOR "Team" FROM bob CASCADE')
    assert (revoke.is_grant, revoke.roles, revoke.admin_option, revoke.cascade) == (
        False, ("Team",), True, True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sql", "kind", "objects"),
    [
        ("GRANT USAGE ON SEQUENCE s, public.t TO a", "SEQUENCE", (("", "s"), ("public", "t"))),
        ("GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO a", "ALL SEQUENCES", (("", "public"),)),
        ("REVOKE CONNECT ON DATABASE nyala FROM PUBLIC", "DATABASE", (("", "nyala"),)),
        ("GRANT SELECT ON t TO a", "TABLE", (("", "t"),)),
    ],
)
def test_grants_on_objects(sql, kind, objects):
    statement = _one(sql)
    assert isinstance(statement, GrantStatement)
    assert (statement.kind, statement.objects) == (kind, objects)


def test_default_privileges():
    statement = _one(
        "ALTER DEFAULT PRIVILEGES FOR ROLE migrator IN SCHEMA public "
        "GRANT SELECT ON TABLES TO reporting WITH GRANT OPTION"
    )
    assert isinstance(statement, DefaultPrivilegesStatement)
    assert (statement.roles, statement.schema) == (("migrator",), "public")
    assert (statement.grant.kind, statement.grant.grant_option) == ("TABLES", True)
    with pytest.raises(errors.FeatureNotSupported):
        _one("ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO a")


def test_reassign_and_drop_owned():
    reassign = _one("REASSIGN OWNED BY a, b TO c")
    assert isinstance(reassign, OwnedStatement)
    assert (reassign.action, reassign.roles, reassign.new_owner) == ("REASSIGN", ("a", "b"), "c")
    dropped = _one("DROP OWNED BY a CASCADE")
    assert (dropped.action, dropped.roles, dropped.cascade) == ("DROP", ("a",), True)
    with pytest.raises(errors.SqlSyntaxError):
        _one("REASSIGN OWNED BY a")


def test_column_lists_are_kept_apart_from_table_privileges():
    grant = _one('GRANT SELECT (a, "B"), INSERT, UPDATE (c) ON t TO bob')
    assert isinstance(grant, GrantStatement)
    assert grant.privileges == ("INSERT",)
    assert grant.columns == (("SELECT", ("a", "B")), ("UPDATE", ("c",)))
    every = _one("REVOKE ALL PRIVILEGES (a) ON t FROM bob")
    assert (every.privileges, every.columns) == ((), (("ALL", ("a",)),))
    with pytest.raises(errors.SqlSyntaxError):
        parser.parse("GRANT SELECT (a ON t TO bob")
    with pytest.raises(errors.InvalidGrantOperation):
        parser.parse("ALTER DEFAULT PRIVILEGES GRANT SELECT (a) ON TABLES TO bob")
