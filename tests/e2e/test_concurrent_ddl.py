"""Concurrent DDL waits, times out and detects deadlocks as PostgreSQL 15's does.

Each scenario runs on nyala and on the real PostgreSQL 15: a transaction's
uncommitted DDL holds its relation until it ends, so another session's DDL,
query or write on that relation waits (55P03 on ``lock_timeout``, 40P01 when
two transactions wait for each other), and sees the committed definition once
the wait is over.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

WAIT_S = 1.0


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "nyala":
        yield request.getfixturevalue("fresh_nyala_server").dsn
        return
    server = request.getfixturevalue("postgres_server")
    name = f"ddl_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    try:
        yield make_dsn(server.host, server.port, dbname=name)
    finally:
        with psycopg.connect(server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database {name} with (force)")


def _in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = work()
        except psycopg.Error as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_a_query_waits_for_uncommitted_alter_and_then_sees_the_new_column(dsn):
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("create table t (id int primary key, v text)")
        setup.execute("insert into t values (1, 'a')")
    with psycopg.connect(dsn) as ddl, psycopg.connect(dsn, autocommit=True) as reader:
        ddl.execute("alter table t add column extra int default 5")
        thread, out = _in_thread(lambda: reader.execute("select * from t").fetchall())
        time.sleep(WAIT_S)
        assert thread.is_alive(), "the query waits for the uncommitted ALTER"
        ddl.commit()
        thread.join(30)
        assert out == {"result": [(1, "a", 5)]}


def test_a_write_waits_for_uncommitted_drop_and_then_finds_no_table(dsn):
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("create table t (id int primary key)")
    with psycopg.connect(dsn) as ddl, psycopg.connect(dsn, autocommit=True) as writer:
        ddl.execute("drop table t")
        thread, out = _in_thread(lambda: writer.execute("insert into t values (1)"))
        time.sleep(WAIT_S)
        assert thread.is_alive(), "the insert waits for the uncommitted DROP"
        ddl.commit()
        thread.join(30)
        assert isinstance(out.get("error"), errors.UndefinedTable)


def test_second_alter_waits_and_applies_after_the_first_commits(dsn):
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("create table t (id int primary key)")
    with psycopg.connect(dsn) as first, psycopg.connect(dsn, autocommit=True) as second:
        first.execute("alter table t add column a int")
        thread, out = _in_thread(lambda: second.execute("alter table t add column b int"))
        time.sleep(WAIT_S)
        assert thread.is_alive()
        first.commit()
        thread.join(30)
        assert "error" not in out, out
        names = second.execute(
            "select column_name from information_schema.columns where table_name = 't' "
            "order by ordinal_position"
        ).fetchall()
        assert names == [("id",), ("a",), ("b",)]


def test_a_rolled_back_create_frees_the_name_for_the_waiter(dsn):
    with psycopg.connect(dsn) as first, psycopg.connect(dsn) as second:
        first.execute("create table n (a int)")
        thread, out = _in_thread(lambda: second.execute("create table n (b text)"))
        time.sleep(WAIT_S)
        assert thread.is_alive(), "the second CREATE of the name waits"
        first.rollback()
        thread.join(30)
        assert "error" not in out, out
        second.commit()
        assert second.execute("select b from n").fetchall() == []


def test_lock_timeout_ends_the_wait(dsn):
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("create table t (id int primary key)")
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as other:
        holder.execute("alter table t add column a int")
        other.execute("set lock_timeout = '300ms'")
        with pytest.raises(errors.LockNotAvailable):
            other.execute("alter table t add column b int")
        with pytest.raises(errors.LockNotAvailable):
            other.execute("select * from t")
        holder.rollback()
        assert other.execute("select * from t").fetchall() == []


def test_two_transactions_altering_each_others_tables_deadlock(dsn):
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("create table x (id int primary key)")
        setup.execute("create table y (id int primary key)")
    with psycopg.connect(dsn) as a, psycopg.connect(dsn) as b:
        a.execute("alter table x add column a int")
        b.execute("alter table y add column b int")
        thread, out = _in_thread(lambda: a.execute("alter table y add column a int"))
        time.sleep(WAIT_S / 2)
        try:
            b.execute("alter table x add column b int")
        except errors.DeadlockDetected:
            b.rollback()
            thread.join(30)
            assert "error" not in out, out
            a.commit()
        else:
            thread.join(30)
            assert isinstance(out.get("error"), errors.DeadlockDetected)
            a.rollback()
            b.commit()


def test_catalog_queries_run_while_another_transaction_holds_ddl_locks(dsn):
    with psycopg.connect(dsn) as ddl, psycopg.connect(dsn, autocommit=True) as other:
        ddl.execute("create table pending (a int)")
        rows = other.execute(
            "select pg_catalog.pg_class.relname from pg_catalog.pg_class "
            "join pg_catalog.pg_namespace on pg_catalog.pg_namespace.oid = "
            "pg_catalog.pg_class.relnamespace where pg_catalog.pg_class.relname = 'pending'"
        ).fetchall()
        assert rows == []
        other.execute("create table other_table (b int)")
        assert other.execute("select count(*) from public.other_table").fetchone() == (0,)
        ddl.rollback()
