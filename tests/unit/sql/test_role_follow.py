"""``Session._follow_role`` looks at the users only when the settings changed (their
``version``): a prepared statement that folds ``current_user`` into its plan still answers
with the role of the moment after SET ROLE, RESET ROLE, a ROLLBACK undoing a SET ROLE and
SET SESSION AUTHORIZATION, each checked against the plan it would otherwise keep."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql.session.database import Database
from sql.session.session import Session


@pytest.fixture
def session(tmp_path: Any) -> Iterator[Session]:
    db = Database.open(tmp_path, fsync=False)
    assert db.roles is not None
    db.roles.bootstrap("nyala", None)
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()
    db.close()


def _run(session: Session, sql: str) -> None:
    for result in session.execute(sql):
        list(result.batches)


def _users(session: Session, stmt: Any) -> tuple[Any, ...]:
    result = session.execute_prepared(stmt, [])
    rows = [tuple(r.values()) for b in result.batches for r in b.to_pylist()]
    session.sync()
    return rows[0]


def test_a_prepared_current_user_follows_every_role_change(session: Session) -> None:
    _run(session, "create role bob")
    stmt = session.prepare("select current_user, session_user", [])
    assert _users(session, stmt) == ("nyala", "nyala")
    assert _users(session, stmt) == ("nyala", "nyala")
    _run(session, "set role bob")
    assert _users(session, stmt) == ("bob", "nyala")
    _run(session, "begin")
    _run(session, "set role nyala")
    assert _users(session, stmt) == ("nyala", "nyala")
    _run(session, "rollback")
    assert _users(session, stmt) == ("bob", "nyala")
    _run(session, "reset role")
    assert _users(session, stmt) == ("nyala", "nyala")
    _run(session, "set session authorization bob")
    assert _users(session, stmt) == ("bob", "bob")
    _run(session, "reset session authorization")
    assert _users(session, stmt) == ("nyala", "nyala")
