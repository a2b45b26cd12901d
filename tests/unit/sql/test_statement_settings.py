"""StatementSettings follows every change of the settings a statement reads, and the prepared
path that reads them keeps PostgreSQL's behaviour: privileges checked at each execute under
the role of the moment, pg_stat_statements under that role, one pg_stat_database commit per
autocommit read, lock_timeout and the output styles as SET, SET LOCAL and ROLLBACK leave them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql.common.result import arrow_batch
from sql.session.database import Database
from sql.session.session import Session
from sql.session.settings import SessionSettings
from sql.session.statement_settings import StatementSettings
from storage.errors import InsufficientPrivilege


@pytest.fixture
def db(tmp_path: Any) -> Iterator[Database]:
    database = Database.open(tmp_path, fsync=False)
    assert database.roles is not None
    database.roles.bootstrap("nyala", None)
    yield database
    database.close()


@pytest.fixture
def session(db: Database) -> Iterator[Session]:
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()


def _run(session: Session, sql: str) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for result in session.execute(sql):
        rows = [tuple(r.values()) for b in map(arrow_batch, result.batches) for r in b.to_pylist()]
    return rows


def _execute(session: Session, stmt: Any, params: list[Any]) -> list[tuple[Any, ...]]:
    """One Execute and its Sync, as the server runs them."""
    result = session.execute_prepared(stmt, params, session.runs_inline(stmt, params))
    rows = [tuple(r.values()) for b in map(arrow_batch, result.batches) for r in b.to_pylist()]
    session.sync()
    session.report_idle()
    return rows


def test_values_follow_set_set_local_and_rollback() -> None:
    settings = SessionSettings("nyala", {})
    values = StatementSettings(settings)
    assert values.current().lock_timeout_ms is None and values.inline_writes
    settings.set("lock_timeout", "250ms")
    assert values.current().lock_timeout_ms == 250 and not values.inline_writes
    settings.begin_transaction()
    settings.set_local("extra_float_digits", "0")
    settings.set("default_transaction_read_only", "on")
    assert values.current().output_styles[0] == 0 and values.read_only
    settings.end_transaction(committed=False)
    assert values.current().output_styles[0] == 1 and not values.read_only
    assert values.lock_timeout_ms == 250  # set before the transaction: kept
    settings.set("log_statement", "all")
    settings.set("lock_timeout", "0")
    assert values.current().log_level == 3 and not values.inline_writes
    settings.set("pg_stat_statements.track", "none")
    assert not values.current().track


def test_a_prepared_read_checks_privileges_at_every_execute_as_the_current_role(
    session: Session,
) -> None:
    _run(session, "create table kv (k bigint primary key, v bigint)")
    _run(session, "insert into kv values (1, 10), (2, 20)")
    _run(session, "create role bob")
    stmt = session.prepare("select v from kv where k = $1", [20])
    assert _execute(session, stmt, [1]) == [(10,)]
    _run(session, "set role bob")
    with pytest.raises(InsufficientPrivilege):
        _execute(session, stmt, [1])
    _run(session, "reset role")
    _run(session, "grant select on kv to bob")
    _run(session, "set role bob")
    assert _execute(session, stmt, [2]) == [(20,)]
    _run(session, "reset role")  # a superuser sees every role's statement texts
    users = _run(
        session,
        "select userid::regrole::text, calls from pg_stat_statements "
        "where query like 'select v from kv%' order by 1",
    )
    assert users == [("bob", 1), ("nyala", 1)]


def test_every_autocommit_read_and_write_counts_one_commit(db: Database, session: Session) -> None:
    _run(session, "create table kv (k bigint primary key, v bigint)")
    _run(session, "insert into kv values (1, 10), (2, 20)")
    read = session.prepare("select v from kv where k = $1", [20])
    write = session.prepare("update kv set v = v + $1 where k = $2", [20, 20])
    other = db.session("nyala", "nyala", {})
    try:
        count = "select xact_commit from pg_stat_database where datname = current_database()"
        before = _run(other, count)[0][0]
        for k in (1, 2, 1):
            assert _execute(session, read, [k]) == [(10 if k == 1 else 20,)]
        assert _execute(session, write, [5, 1]) == []
        # Three reads and a write (the reading statement counts once it ends).
        assert _run(other, count)[0][0] == before + 4
        scans = "select idx_scan, n_tup_upd from pg_stat_user_tables where relname = 'kv'"
        assert _run(other, scans) == [(3, 1)]  # the key write is counted as a write only
        assert _run(session, "select v from kv where k = 1") == [(15,)]
    finally:
        other.close()


def test_a_read_after_set_lock_timeout_runs_under_it(session: Session) -> None:
    _run(session, "create table kv (k bigint primary key, v bigint)")
    stmt = session.prepare("select v from kv where k = $1", [20])
    _execute(session, stmt, [1])
    _run(session, "set lock_timeout = '3s'")
    result = session.execute_prepared(stmt, [1], session.runs_inline(stmt, [1]))
    list(result.batches)
    txn = session._block.txn
    assert txn is not None and txn.lock_timeout_ms == 3000
    session.sync()
    _run(session, "reset lock_timeout")
    result = session.execute_prepared(stmt, [1], session.runs_inline(stmt, [1]))
    list(result.batches)
    txn = session._block.txn
    assert txn is not None and txn.lock_timeout_ms is None
    session.sync()
