"""A child insert and a concurrent delete of its parent cannot both commit, on nyala as on
PostgreSQL 15 (both take FOR KEY SHARE on the parent row: tests/e2e/test_row_lock_modes.py)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.support.sessions import blocked, connect, pool, server  # noqa: F401

pytestmark = pytest.mark.e2e

TABLE_PREFIX = "fkr_"


@pytest.fixture(params=["with_value", "key_only"])
def tables(connect, request) -> tuple[str, str]:  # noqa: ANN001
    """A parent (with a value column, or of key columns only) holding keys 1 and 2, and an
    empty child referencing it."""
    parent, child = f"fkr_parent_{request.param}", f"fkr_child_{request.param}"
    conn = connect()
    conn.execute(f"drop table if exists {child}, {parent}")
    value = ", v int" if request.param == "with_value" else ""
    conn.execute(f"create table {parent} (id int primary key{value})")
    conn.execute(f"create table {child} (id int primary key, p int references {parent})")
    conn.execute(f"insert into {parent} (id) values (1), (2)")
    return parent, child


def test_delete_waits_for_the_child_insert_and_then_fails(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    pending = pool.submit(lambda: b.execute(f"delete from {parent} where id = 1"))
    assert blocked(pending)
    a.execute("commit")
    with pytest.raises(errors.ForeignKeyViolation):
        pending.result(timeout=30)
    rows = b.execute(f"select c.id, p.id from {child} c join {parent} p on p.id = c.p")
    assert rows.fetchall() == [(10, 1)]


def test_delete_goes_ahead_when_the_child_insert_rolls_back(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    pending = pool.submit(lambda: b.execute(f"delete from {parent} where id = 1"))
    assert blocked(pending)
    a.execute("rollback")
    assert pending.result(timeout=30).rowcount == 1


def test_child_insert_waits_for_the_delete_and_then_fails(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"delete from {parent} where id = 1")
    pending = pool.submit(lambda: b.execute(f"insert into {child} values (10, 1)"))
    assert blocked(pending)
    a.execute("commit")
    with pytest.raises(errors.ForeignKeyViolation):
        pending.result(timeout=30)
    assert b.execute(f"select count(*) from {child}").fetchone() == (0,)


def test_child_insert_goes_ahead_when_the_delete_rolls_back(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"delete from {parent} where id = 1")
    pending = pool.submit(lambda: b.execute(f"insert into {child} values (10, 1)"))
    assert blocked(pending)
    a.execute("rollback")
    assert pending.result(timeout=30).rowcount == 1


def test_repeatable_read_child_insert_after_a_committed_delete_fails(connect, tables):
    parent, child = tables
    a, b = connect(), connect()
    b.execute("begin isolation level repeatable read")
    b.execute(f"select count(*) from {parent}").fetchall()  # takes the snapshot
    a.execute(f"delete from {parent} where id = 2")
    with pytest.raises((errors.SerializationFailure, errors.ForeignKeyViolation)):
        b.execute(f"insert into {child} values (11, 2)")
    b.execute("rollback")


def test_many_inserters_and_a_deleter_leave_no_orphans(connect, pool, tables):
    parent, child = tables
    inserters = [connect() for _ in range(3)]
    deleter = connect()

    def insert(conn: psycopg.Connection, first: int) -> int:
        done = 0
        for i in range(first, first + 20):
            try:
                conn.execute(f"insert into {child} values (%s, %s)", (i, 1 + i % 2))
                done += 1
            except errors.ForeignKeyViolation:
                pass
        return done

    def delete() -> None:
        for _ in range(20):
            try:
                deleter.execute(f"delete from {parent} where id = 2")
                return
            except errors.ForeignKeyViolation:
                deleter.execute(f"delete from {child} where p = 2")

    futures = [pool.submit(insert, c, 100 * n) for n, c in enumerate(inserters, start=1)]
    futures.append(pool.submit(delete))
    for future in futures:
        future.result(timeout=120)
    orphans = deleter.execute(
        f"select count(*) from {child} c where not exists "
        f"(select 1 from {parent} p where p.id = c.p)"
    ).fetchone()
    assert orphans == (0,)


def test_parent_locks_and_keys_survive_a_restart(fresh_nyala_server):
    """The FOR KEY SHARE lock a child insert takes is not logged: after a crash the parent
    rows are as they were and the keys are still kept."""
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table kp (id int primary key)")
        conn.execute("create table vp (id int primary key, v text)")
        conn.execute(
            "create table kc (id int primary key, k int references kp, p int references vp)"
        )
        conn.execute("insert into kp values (1), (2)")
        conn.execute("insert into vp values (1, 'one')")
        conn.execute("insert into kc values (10, 1, 1), (11, 2, NULL)")
    fresh_nyala_server.kill9()
    fresh_nyala_server.start()
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select id from kp order by id").fetchall() == [(1,), (2,)]
        assert conn.execute("select id, v from vp").fetchall() == [(1, "one")]
        with pytest.raises(errors.ForeignKeyViolation):
            conn.execute("delete from kp where id = 1")
        with pytest.raises(errors.ForeignKeyViolation):
            conn.execute("insert into kc values (12, 3, NULL)")
