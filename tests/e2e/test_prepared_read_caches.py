"""What a prepared read keeps from one execution to the next never serves a stale answer,
and the counters it gathers per session read exactly.

Kept per plan or per settings version: the predicates of a scan whose operands are
constants, a direct read's output shape, the transaction modes a statement starts its
transaction with (read only, isolation, lock_timeout) and the session's read snapshot.
Each is checked across the change that must invalidate it, beside PostgreSQL 15 where
the behaviour is PostgreSQL's; the scan, transaction and statement counters a session
gathers without a lock are checked from another connection as soon as it is idle.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import errors

from tests.support.differential import Pair
from tests.support.prepared_runs import pair_fixture, prepared_answers
from tests.support.servers import NyalaServer

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists cache_t",
    "create table cache_t (id bigint primary key, code int, name text, at timestamptz)",
    "insert into cache_t select i, i % 10, 'n' || i, "
    "timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour' "
    "from generate_series(1::bigint, 200::bigint) as g(i)",
    "create index cache_t_code on cache_t (code)",
)
QUERIES = (
    # a constant predicate beside a parameter: the constant is built once per plan
    ("select id, name from cache_t where code = 3 and id = %s", (13,)),
    ("select id, name from cache_t where code = 3 and id = %s", (14,)),
    ("select id, name from cache_t where id between 5 and %s", (9,)),
    ("select id, name from cache_t where code = %s and name = 'n23'", (3,)),
    ("select id, at from cache_t where id = %s", (17,)),
    ("select id, name, at from cache_t where code = %s and id < 60", (4,)),
)


pair = pair_fixture(SETUP)


def _answers(conn: psycopg.Connection[Any]) -> list[Any]:
    return prepared_answers(conn, QUERIES, runs=3)


def test_constant_predicates_and_shapes_follow_writes_ddl_and_settings(pair: Pair) -> None:
    pair.same(_answers, "loaded")
    pair.run("update cache_t set code = 3 where id in (14, 23)")
    pair.same(_answers, "indexed column updated")
    pair.run("update cache_t set name = 'n23' where id = 33")
    pair.same(_answers, "a constant's column updated")
    pair.run("drop index cache_t_code")
    pair.same(_answers, "index dropped")
    pair.run("create index cache_t_code on cache_t (code, id)")
    pair.same(_answers, "another index made")
    pair.run("alter table cache_t add column extra int default 5")
    pair.same(_answers, "column added")
    pair.run("set timezone = 'Asia/Kolkata'")
    pair.same(_answers, "TimeZone changed")
    pair.run("set timezone = 'UTC'")

    def own_writes(conn: psycopg.Connection[Any]) -> list[Any]:
        with conn.transaction(force_rollback=True):
            conn.execute("update cache_t set code = 3, name = 'mine' where id = 13")
            conn.execute("delete from cache_t where id = 14")
            return _answers(conn)

    pair.same(own_writes, "a transaction's own writes")
    pair.same(_answers, "rolled back")


def test_transaction_modes_follow_set_between_executions(pair: Pair) -> None:
    def write(conn: psycopg.Connection[Any]) -> str:
        try:
            conn.execute("update cache_t set name = 'w' where id = %s", (5,), prepare=True)
        except psycopg.Error as exc:
            return exc.sqlstate or ""
        return "ok"

    def isolation(conn: psycopg.Connection[Any]) -> Any:
        with conn.transaction(force_rollback=True):
            return conn.execute("show transaction_isolation").fetchone()

    pair.same(write, "read-write")
    pair.same(isolation, "default isolation")
    pair.run("set default_transaction_read_only = on")
    assert pair.same(write, "read only") == "25006"
    pair.run("set default_transaction_isolation = 'repeatable read'")
    pair.same(isolation, "isolation set")
    pair.run("reset default_transaction_read_only", "reset default_transaction_isolation")
    assert pair.same(write, "read-write again") == "ok"
    pair.same(isolation, "isolation reset")


def test_lock_timeout_set_between_executions_ends_a_wait(nyala_server: NyalaServer) -> None:
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as holder,
        psycopg.connect(nyala_server.dsn, autocommit=True) as waiter,
    ):
        for sql in SETUP:
            holder.execute(sql)
        update = "update cache_t set name = 'w' where id = %s"
        waiter.execute(update, (7,), prepare=True)  # the plan and its transaction modes
        with holder.transaction():
            holder.execute("update cache_t set name = 'held' where id = 7")
            waiter.execute("set lock_timeout = '100ms'")
            with pytest.raises(errors.LockNotAvailable):
                waiter.execute(update, (7,), prepare=True)
        waiter.execute("reset lock_timeout")
        waiter.execute(update, (7,), prepare=True)


def test_read_timestamp_set_between_executions(nyala_server: NyalaServer) -> None:
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
        read = "select name from cache_t where id = %s"
        stamp = conn.execute("select now()::text").fetchone()[0]  # type: ignore[index]
        assert conn.execute(read, (8,), prepare=True).fetchall() == [("n8",)]
        conn.execute("update cache_t set name = 'later' where id = 8")
        conn.execute(f"set nyala.read_timestamp = '{stamp}'")
        assert conn.execute(read, (8,), prepare=True).fetchall() == [("n8",)]
        conn.execute("reset nyala.read_timestamp")
        assert conn.execute(read, (8,), prepare=True).fetchall() == [("later",)]


def _counts(conn: psycopg.Connection[Any]) -> tuple[int, ...]:
    row = conn.execute(
        "select seq_scan, idx_scan, idx_tup_fetch from pg_stat_user_tables "
        "where relname = 'cache_t'"
    ).fetchone()
    xacts = conn.execute(
        "select xact_commit from pg_stat_database where datname = current_database()"
    ).fetchone()
    calls = conn.execute(
        "select coalesce(sum(calls), 0), coalesce(sum(rows), 0) from pg_stat_statements "
        "where query like 'select name from cache_t where%'"
    ).fetchone()
    assert row is not None and xacts is not None and calls is not None
    return (*row, xacts[0], int(calls[0]), int(calls[1]))


def test_counters_gathered_per_session_read_exactly_from_another(
    fresh_nyala_server: NyalaServer,
) -> None:
    with (
        psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as reader,
        psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as worker,
    ):
        for sql in SETUP:
            worker.execute(sql)
        before = _counts(reader)
        for i in range(1, 21):
            worker.execute("select name from cache_t where id = %s", (i,), prepare=True)
        for code in range(5):
            worker.execute("select name from cache_t where code = %s", (code,), prepare=True)
        seq, idx, fetched, xacts, calls, rows = _counts(reader)
        assert seq == before[0]
        assert idx - before[1] == 25
        assert fetched - before[2] == 20 + 5 * 20
        # (The reader's catalog reads run in no storage transaction and count none.)
        assert xacts - before[3] == 25
        assert (calls - before[4], rows - before[5]) == (25, 120)
        with worker.transaction():
            worker.execute("select name from cache_t where id = %s", (1,), prepare=True)
            worker.execute("select count(*) from cache_t")
        after = _counts(reader)
        assert (after[0] - seq, after[1] - idx, after[2] - fetched) == (1, 1, 1)
        assert after[3] - xacts == 1
        assert after[4:] == (calls + 1, rows + 1)


def test_date_order_and_application_name_follow_each_set(
    pair: Pair, nyala_server: NyalaServer
) -> None:
    for style in ("ISO, DMY", "ISO, MDY", "ISO, DMY"):
        pair.run(f"set datestyle = '{style}'")
        pair.check("select date '01/02/2024', %s::date", ("03/04/2024",), prepare=True)
    with psycopg.connect(nyala_server.dsn, autocommit=True) as watcher:
        for name in ("first", "second"):
            pair.nyala.execute(f"set application_name = '{name}'")
            shown = watcher.execute(
                "select application_name from pg_stat_activity where pid = %s",
                (pair.nyala.info.backend_pid,),
            ).fetchone()
            assert shown == (name,)
