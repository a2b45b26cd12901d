from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.frontend.statements import Utility
from storage.errors import SqlSyntaxError


def _utility(sql: str):
    (statement,) = parser.parse(sql)
    return statement.ast if isinstance(statement.ast, Utility) else None


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("BEGIN", "BEGIN"),
        ("start transaction", "BEGIN"),
        ("begin work", "BEGIN"),
        ("COMMIT", "COMMIT"),
        ("end", "COMMIT"),
        ("abort", "ROLLBACK"),
        ("rollback work", "ROLLBACK"),
    ],
)
def test_transaction_control_is_recognised(sql, kind):
    assert _utility(sql).kind == kind


def test_begin_keeps_its_modes():
    utility = _utility("begin isolation level repeatable read, read only")
    assert utility.modes == ("isolation level repeatable read", "read only")


def test_begin_with_garbage_is_a_syntax_error():
    with pytest.raises(SqlSyntaxError):
        _utility("begin nonsense")


@pytest.mark.parametrize(
    ("sql", "name", "value"),
    [
        ("SET application_name TO 'psql'", "application_name", "psql"),
        ("set extra_float_digits = 3", "extra_float_digits", "3"),
        ("SET SESSION statement_timeout = '5s'", "statement_timeout", "5s"),
        ("SET TIME ZONE 'UTC'", "TimeZone", "UTC"),
        ('set search_path to public, "$user"', "search_path", "public, $user"),
    ],
)
def test_set_forms(sql, name, value):
    utility = _utility(sql)
    assert (utility.kind, utility.name, utility.value) == ("SET", name, value)


def test_set_local_is_marked_local():
    local = _utility("SET LOCAL statement_timeout = '5s'")
    assert (local.name, local.value, local.local) == ("statement_timeout", "5s", True)
    assert _utility("SET LOCAL TIME ZONE 'UTC'").local is True
    assert _utility("SET SESSION statement_timeout = '5s'").local is False
    assert _utility("SET statement_timeout = '5s'").local is False


def test_listen_notify_unlisten():
    assert (_utility("LISTEN Jobs").kind, _utility("LISTEN Jobs").name) == ("LISTEN", "jobs")
    assert _utility('listen "Jobs"').name == "Jobs"
    notify = _utility("NOTIFY jobs, 'run 7'")
    assert (notify.kind, notify.name, notify.value) == ("NOTIFY", "jobs", "run 7")
    assert _utility("notify jobs").value == ""
    assert _utility("UNLISTEN *").name == "*"
    with pytest.raises(SqlSyntaxError):
        _utility("notify jobs, payload")


def test_discard_variants():
    assert _utility("DISCARD ALL").name == "ALL"
    assert _utility("discard temporary").name == "TEMP"
    assert _utility("discard sequences").name == "SEQUENCES"


def test_show_transaction_isolation_level_names_the_setting():
    assert _utility("SHOW TRANSACTION ISOLATION LEVEL").name == "transaction_isolation"


def test_ordinary_statements_are_not_utilities():
    assert _utility("select 1") is None
    assert _utility("insert into t values (1)") is None


def test_a_negative_set_value_keeps_its_sign():
    utility = _utility("set extra_float_digits = -3")
    assert (utility.name, utility.value) == ("extra_float_digits", "-3")


@pytest.mark.parametrize(
    ("sql", "name", "value", "local"),
    [
        ("SET ROLE app", "role", "app", False),
        ('SET ROLE "App"', "role", "App", False),
        ("SET LOCAL ROLE app", "role", "app", True),
        ("SET ROLE NONE", "role", "none", False),
        ("SET SESSION AUTHORIZATION admin", "session_authorization", "admin", False),
        ("SET LOCAL SESSION AUTHORIZATION DEFAULT", "session_authorization", "default", True),
    ],
)
def test_set_role_and_session_authorization(sql, name, value, local):
    utility = _utility(sql)
    assert (utility.kind, utility.name, utility.value, utility.local) == ("SET", name, value, local)


def test_reset_role_and_session_authorization():
    assert _utility("RESET ROLE").name == "role"
    assert _utility("RESET SESSION AUTHORIZATION").name == "session_authorization"
