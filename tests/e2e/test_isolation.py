"""Isolation levels, row locks, EvalPlanQual, deadlocks and savepoints, with two or three
psycopg connections, each scenario run on nyala and on PostgreSQL 15 with the same answers.

A statement that must block is started on a thread and checked to be still running a
moment later (it would have finished at once if it did not wait); no test asserts a
duration.
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import NyalaServer
from tests.support.sessions import blocked, connect, pool, server, table  # noqa: F401

pytestmark = pytest.mark.e2e


TABLE_PREFIX = "iso_"


def _values(conn: psycopg.Connection, table: str) -> list[tuple[int, int]]:
    return conn.execute(f"select id, v from {table} order by id").fetchall()


def _status(cur: psycopg.Cursor) -> str:
    return cur.statusmessage or ""


# -- READ COMMITTED -------------------------------------------------------------------------


def test_read_committed_waits_then_updates_the_newest_version(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = v + 10 where id = 1")
    pending = pool.submit(lambda: _status(b.execute(f"update {table} set v = v + 1 where id = 1")))
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "UPDATE 1"
    assert _values(a, table)[0] == (1, 12)


def test_read_committed_rechecks_where_against_the_newest_version(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 100 where id = 1")
    pending = pool.submit(lambda: _status(b.execute(f"update {table} set v = 0 where v = 1")))
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "UPDATE 0"
    assert _values(a, table)[0] == (1, 100)


def test_read_committed_delete_of_a_row_deleted_meanwhile(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"delete from {table} where id = 2")
    pending = pool.submit(lambda: _status(b.execute(f"delete from {table} where id = 2")))
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "DELETE 0"


def test_read_committed_rollback_of_the_holder_lets_the_waiter_apply(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 50 where id = 3")
    pending = pool.submit(lambda: _status(b.execute(f"update {table} set v = v * 2 where id = 3")))
    assert blocked(pending)
    a.execute("rollback")
    assert pending.result(timeout=30) == "UPDATE 1"
    assert _values(a, table)[2] == (3, 6)


def test_concurrent_increments_lose_nothing(connect, table):
    threads, per_thread = 3, 25
    conns = [connect() for _ in range(threads)]

    def work(conn: psycopg.Connection) -> None:
        for _ in range(per_thread):
            conn.execute(f"update {table} set v = v + 1 where id = 1")

    workers = [threading.Thread(target=work, args=(c,)) for c in conns]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert _values(conns[0], table)[0] == (1, 1 + threads * per_thread)


def test_update_that_moves_a_key_after_a_concurrent_change(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 7 where id = 2")
    pending = pool.submit(
        lambda: _status(b.execute(f"update {table} set id = id + 10 where id = 2"))
    )
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "UPDATE 1"
    assert _values(a, table) == [(1, 1), (3, 3), (12, 7)]


def test_read_committed_sees_each_statements_own_snapshot(connect, table):
    a, b = connect(), connect()
    a.execute("begin")
    assert a.execute(f"select count(*) from {table}").fetchone() == (3,)
    b.execute(f"insert into {table} values (4, 4)")
    assert a.execute(f"select count(*) from {table}").fetchone() == (4,)
    a.execute("commit")


# -- REPEATABLE READ ------------------------------------------------------------------------


def test_repeatable_read_keeps_one_snapshot(connect, table):
    a, b = connect(), connect()
    a.execute("begin isolation level repeatable read")
    assert a.execute("show transaction_isolation").fetchone() == ("repeatable read",)
    assert a.execute(f"select count(*) from {table}").fetchone() == (3,)
    b.execute(f"insert into {table} values (4, 4)")
    b.execute(f"update {table} set v = 99 where id = 1")
    assert a.execute(f"select count(*), sum(v) from {table}").fetchone() == (3, 6)
    a.execute("commit")
    assert a.execute(f"select count(*), sum(v) from {table}").fetchone() == (4, 108)


def test_repeatable_read_snapshot_starts_at_the_first_statement(connect, table):
    a, b = connect(), connect()
    a.execute("begin transaction isolation level repeatable read")
    b.execute(f"insert into {table} values (4, 4)")
    assert a.execute(f"select count(*) from {table}").fetchone() == (4,)
    b.execute(f"insert into {table} values (5, 5)")
    assert a.execute(f"select count(*) from {table}").fetchone() == (4,)
    a.execute("commit")


def test_set_transaction_gives_repeatable_read(connect, table):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute("set transaction isolation level repeatable read")
    assert a.execute(f"select count(*) from {table}").fetchone() == (3,)
    b.execute(f"insert into {table} values (4, 4)")
    assert a.execute(f"select count(*) from {table}").fetchone() == (3,)
    with pytest.raises(errors.ActiveSqlTransaction, match="before any query"):
        a.execute("set transaction isolation level read committed")
    a.execute("rollback")


def test_repeatable_read_write_after_a_committed_change_is_40001(connect, table):
    a, b = connect(), connect()
    a.execute("begin isolation level repeatable read")
    assert a.execute(f"select v from {table} where id = 1").fetchone() == (1,)
    b.execute(f"update {table} set v = 5 where id = 1")
    with pytest.raises(errors.SerializationFailure, match="concurrent update"):
        a.execute(f"update {table} set v = v + 1 where id = 1")
    a.execute("rollback")
    a.execute("begin isolation level repeatable read")
    a.execute(f"select 1 from {table} limit 1")
    b.execute(f"delete from {table} where id = 2")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"delete from {table} where id = 2")
    a.execute("rollback")
    # Rows nobody else touched are written as usual.
    a.execute("begin isolation level repeatable read")
    assert _status(a.execute(f"update {table} set v = 30 where id = 3")) == "UPDATE 1"
    a.execute("commit")
    assert _values(b, table) == [(1, 5), (3, 30)]


def test_repeatable_read_waits_for_the_holder_then_fails_or_proceeds(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {table}")
    b.execute("begin")
    b.execute(f"update {table} set v = 10 where id = 1")
    pending = pool.submit(lambda: a.execute(f"update {table} set v = 20 where id = 1"))
    assert blocked(pending)
    b.execute("commit")
    with pytest.raises(errors.SerializationFailure):
        pending.result(timeout=30)
    a.execute("rollback")

    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {table}")
    b.execute("begin")
    b.execute(f"update {table} set v = 11 where id = 2")
    pending = pool.submit(lambda: _status(a.execute(f"update {table} set v = 21 where id = 2")))
    assert blocked(pending)
    b.execute("rollback")
    assert pending.result(timeout=30) == "UPDATE 1"
    a.execute("commit")
    assert _values(a, table)[:2] == [(1, 10), (2, 21)]


def test_repeatable_read_as_session_default(connect, table):
    a, b = connect(), connect()
    a.execute("set session characteristics as transaction isolation level repeatable read")
    a.execute("begin")
    assert a.execute("show transaction_isolation").fetchone() == ("repeatable read",)
    a.execute(f"select 1 from {table} limit 1")
    b.execute(f"update {table} set v = 5 where id = 1")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"update {table} set v = 6 where id = 1")
    a.execute("rollback")


def test_serializable_runs_as_repeatable_read(server, connect, table):
    a, b = connect(), connect()
    notices: list[str] = []
    a.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    a.execute("begin isolation level serializable")
    assert a.execute("show transaction_isolation").fetchone() == ("serializable",)
    a.execute(f"select count(*) from {table}")
    b.execute(f"update {table} set v = 5 where id = 1")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"update {table} set v = 6 where id = 1")
    a.execute("rollback")
    if isinstance(server, NyalaServer):
        assert any("REPEATABLE READ" in n for n in notices), notices
    else:
        assert notices == []


# -- deadlocks ------------------------------------------------------------------------------


def test_deadlock_fails_one_side_with_40p01(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    b.execute("begin")
    a.execute(f"update {table} set v = 10 where id = 1")
    b.execute(f"update {table} set v = 20 where id = 2")
    first = pool.submit(lambda: a.execute(f"update {table} set v = 11 where id = 2"))
    assert blocked(first)
    second = pool.submit(lambda: b.execute(f"update {table} set v = 21 where id = 1"))
    outcomes = []
    for future in (first, second):
        try:
            future.result(timeout=60)
            outcomes.append("ok")
        except errors.DeadlockDetected:
            outcomes.append("deadlock")
    assert sorted(outcomes) == ["deadlock", "ok"]
    for conn in (a, b):
        conn.execute("rollback")


# -- savepoints -----------------------------------------------------------------------------


def test_rollback_to_savepoint_undoes_later_writes(connect, table):
    a = connect()
    a.execute("begin")
    a.execute(f"insert into {table} values (10, 10)")
    assert _status(a.execute("savepoint s1")) == "SAVEPOINT"
    a.execute(f"insert into {table} values (11, 11)")
    a.execute(f"update {table} set v = -1 where id in (1, 10)")
    a.execute(f"delete from {table} where id = 2")
    assert _status(a.execute("rollback to savepoint s1")) == "ROLLBACK"
    a.execute(f"update {table} set v = 3000 where id = 3")
    a.execute("commit")
    assert _values(a, table) == [(1, 1), (2, 2), (3, 3000), (10, 10)]


def test_savepoint_recovers_a_failed_block(connect, table):
    a = connect()
    a.execute("begin")
    a.execute(f"insert into {table} values (20, 20)")
    a.execute("savepoint before_dup")
    with pytest.raises(errors.UniqueViolation):
        a.execute(f"insert into {table} values (21, 21), (1, 0)")
    with pytest.raises(errors.InFailedSqlTransaction):
        a.execute(f"select 1 from {table}")
    a.execute("rollback to before_dup")
    a.execute(f"insert into {table} values (22, 22)")
    a.execute("commit")
    assert [r[0] for r in _values(a, table)] == [1, 2, 3, 20, 22]


def test_nested_savepoints_release_and_repeated_names(connect, table):
    a = connect()
    a.execute("begin")
    a.execute("savepoint x")
    a.execute(f"update {table} set v = 100 where id = 1")
    a.execute("savepoint y")
    a.execute(f"update {table} set v = 200 where id = 1")
    a.execute("savepoint x")
    a.execute(f"update {table} set v = 300 where id = 1")
    a.execute("rollback to x")  # the newest x
    assert a.execute(f"select v from {table} where id = 1").fetchone() == (200,)
    assert _status(a.execute("release savepoint y")) == "RELEASE"
    with pytest.raises(errors.InvalidSavepointSpecification, match='"y" does not exist'):
        a.execute("rollback to savepoint y")
    a.execute("rollback to savepoint x")  # the first x: y and the newer x are gone
    assert a.execute(f"select v from {table} where id = 1").fetchone() == (1,)
    a.execute("commit")


def test_savepoint_statements_outside_a_block(connect, table):
    a = connect()
    with pytest.raises(errors.NoActiveSqlTransaction):
        a.execute("savepoint s")
    with pytest.raises(errors.NoActiveSqlTransaction):
        a.execute("rollback to savepoint s")
    with pytest.raises(errors.NoActiveSqlTransaction):
        a.execute("release savepoint s")
    assert _values(a, table)[0] == (1, 1)


def test_savepoint_keeps_row_locks_of_earlier_writes(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 10 where id = 1")
    a.execute("savepoint s")
    a.execute(f"update {table} set v = 20 where id = 1")
    a.execute("rollback to savepoint s")
    pending = pool.submit(lambda: b.execute(f"update {table} set v = v + 1 where id = 1"))
    assert blocked(pending)
    a.execute("commit")
    pending.result(timeout=30)
    assert _values(a, table)[0] == (1, 11)


def test_psycopg_nested_transactions(connect, table):
    conn = connect()
    with conn.transaction():
        conn.execute(f"insert into {table} values (30, 30)")
        with pytest.raises(errors.UniqueViolation), conn.transaction():
            conn.execute(f"insert into {table} values (31, 31)")
            conn.execute(f"insert into {table} values (30, 0)")
        with conn.transaction():
            conn.execute(f"insert into {table} values (32, 32)")
    assert [r[0] for r in _values(conn, table)] == [1, 2, 3, 30, 32]


# -- flushed data ---------------------------------------------------------------------------


def test_conflicts_are_found_in_flushed_rowsets(connect, table):
    """The change a REPEATABLE READ writer conflicts with may already sit in a DiskRowSet's
    base data and UNDO history (flushed after the snapshot), or in its delta stores."""
    a, b = connect(), connect()
    a.execute("checkpoint")
    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {table}")
    b.execute(f"update {table} set v = 5 where id = 1")
    b.execute("checkpoint")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"update {table} set v = 6 where id = 1")
    a.execute("rollback")
    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {table}")
    b.execute(f"delete from {table} where id = 2")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"delete from {table} where id = 2")
    a.execute("rollback")
    assert _values(a, table) == [(1, 5), (3, 3)]


def test_concurrent_increments_on_flushed_rows(connect, table):
    conns = [connect() for _ in range(2)]
    conns[0].execute("checkpoint")

    def work(conn: psycopg.Connection) -> None:
        for step in range(20):
            conn.execute(f"update {table} set v = v + 1 where id = 2")
            if step == 10:
                conn.execute("checkpoint")

    workers = [threading.Thread(target=work, args=(c,)) for c in conns]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert _values(conns[0], table)[1] == (2, 42)


def test_lock_timeout_setting(connect, table):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 10 where id = 1")
    b.execute("set lock_timeout = '200ms'")
    with pytest.raises(errors.LockNotAvailable, match="lock timeout"):
        b.execute(f"update {table} set v = 20 where id = 1")
    assert _status(b.execute(f"update {table} set v = 30 where id = 2")) == "UPDATE 1"
    a.execute("commit")
    assert _values(a, table)[:2] == [(1, 10), (2, 30)]


# -- INSERT ... ON CONFLICT under concurrency --------------------------------------------------


def test_concurrent_upserts_count_every_increment(connect, table):
    threads, per_thread = 3, 15
    conns = [connect() for _ in range(threads)]

    def work(conn: psycopg.Connection) -> None:
        for _ in range(per_thread):
            conn.execute(
                f"insert into {table} as t values (100, 1) "
                "on conflict (id) do update set v = t.v + 1"
            )

    workers = [threading.Thread(target=work, args=(c,)) for c in conns]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert _values(conns[0], table)[-1] == (100, threads * per_thread)


def test_on_conflict_do_nothing_waits_for_a_concurrent_insert(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {table} values (200, 1)")
    pending = pool.submit(
        lambda: _status(b.execute(f"insert into {table} values (200, 2) on conflict do nothing"))
    )
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "INSERT 0 0"
    a.execute("begin")
    a.execute(f"insert into {table} values (201, 1)")
    pending = pool.submit(
        lambda: _status(
            b.execute(
                f"insert into {table} as t values (201, 5) "
                "on conflict (id) do update set v = t.v + excluded.v"
            )
        )
    )
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == "INSERT 0 1"
    assert _values(a, table)[-2:] == [(200, 1), (201, 6)]


def test_on_conflict_under_repeatable_read_is_40001(connect, table):
    a, b = connect(), connect()
    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {table}")
    b.execute(f"insert into {table} values (300, 1)")
    with pytest.raises(errors.SerializationFailure):
        a.execute(f"insert into {table} values (300, 2) on conflict do nothing")
    a.execute("rollback")
