"""SELECT ... FOR UPDATE locks the rows it reads, as in PostgreSQL (sql/dml/locking_reads.py)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.support.sessions import blocked, connect, pool, server, table  # noqa: F401

pytestmark = pytest.mark.e2e


TABLE_PREFIX = "fu_"


def test_a_locked_row_blocks_writers_and_lockers_but_not_readers(connect, table):
    a, b = connect(), connect()
    a.execute("begin")
    assert a.execute(f"select v from {table} where id = %s for update", (1,)).fetchall() == [(1,)]
    b.execute("set lock_timeout = '300ms'")
    with pytest.raises(errors.LockNotAvailable):
        b.execute(f"update {table} set v = 5 where id = 1")
    with pytest.raises(errors.LockNotAvailable):
        b.execute(f"select v from {table} where id = 1 for update")
    b.execute("set lock_timeout = 0")
    with pytest.raises(errors.LockNotAvailable):
        b.execute(f"select v from {table} where id = 1 for no key update nowait")
    assert b.execute(f"select v from {table} where id = 1").fetchall() == [(1,)]
    assert b.execute(f"update {table} set v = 20 where id = 2").rowcount == 1  # another row
    a.execute("commit")
    assert b.execute(f"update {table} set v = 10 where id = 1").rowcount == 1
    assert b.execute(f"select id, v from {table} order by id").fetchall() == [
        (1, 10),
        (2, 20),
        (3, 3),
    ]


def test_a_waiting_locker_reads_the_newest_version_and_then_holds_the_lock(connect, table, pool):
    a, b, c = connect(), connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 50 where id = 1")
    b.execute("begin")
    pending = pool.submit(
        lambda: b.execute(f"select id, v from {table} where id = 1 for update").fetchall()
    )
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == [(1, 50)]
    c.execute("set lock_timeout = '300ms'")
    with pytest.raises(errors.LockNotAvailable):
        c.execute(f"update {table} set v = v + 1 where id = 1")
    b.execute(f"update {table} set v = v + 1 where id = 1")
    b.execute("commit")
    assert c.execute(f"select v from {table} where id = 1").fetchall() == [(51,)]


def test_rows_changed_to_no_longer_match_are_not_returned(connect, table, pool):
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"update {table} set v = 100 where id = 2")
    b.execute("begin")
    pending = pool.submit(
        lambda: b.execute(f"select id from {table} where v < 50 order by id for update").fetchall()
    )
    assert blocked(pending)
    a.execute("commit")
    assert pending.result(timeout=30) == [(1,), (3,)]
    b.execute("commit")


def test_unsupported_locking_clauses_are_refused(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists fu_refused")
        conn.execute("create table fu_refused (id int primary key, v int)")
        with pytest.raises(errors.FeatureNotSupported):
            conn.execute("select * from fu_refused for update skip locked")
        with pytest.raises(errors.FeatureNotSupported):
            conn.execute("select count(*) from fu_refused for update")
        conn.execute("drop table fu_refused")


def test_for_update_on_a_table_with_an_identity_column(connect):
    a, b = connect(), connect()
    a.execute("drop table if exists fu_identity")
    a.execute(
        "create table fu_identity (id int primary key, n int generated always as identity, v int)"
    )
    a.execute("insert into fu_identity (id, v) values (1, 10)")
    a.execute("begin")
    assert a.execute("select n, v from fu_identity where id = 1 for update").fetchall() == [(1, 10)]
    with pytest.raises(errors.LockNotAvailable):
        b.execute("select v from fu_identity where id = 1 for update nowait")
    a.execute("commit")
    assert b.execute("select n, v from fu_identity where id = 1 for update").fetchall() == [(1, 10)]
    a.execute("drop table fu_identity")
