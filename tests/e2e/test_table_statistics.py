"""pg_stat_database and pg_stat_user_tables beside PostgreSQL 15.

The column lists and types must match; the write counters and the live and
dead row estimates must move as PostgreSQL's do for the same statements
(PostgreSQL reports them a moment later, so its side is polled); scans,
transactions, sessions, deadlocks, VACUUM and ANALYZE move nyala's as stated.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import run_on_each

pytestmark = pytest.mark.e2e

_VIEWS = ("pg_stat_database", "pg_stat_all_tables", "pg_stat_user_tables", "pg_stat_sys_tables")
_WAIT_S = 10.0


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _description(server) -> dict[str, list[tuple[str, int]]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        out = {}
        for view in _VIEWS:
            cur = conn.execute(f"select * from {view} limit 0")
            out[view] = [(c.name, c.type_code) for c in cur.description]
        return out


def test_the_views_have_postgresql_15s_columns_and_types(nyala_server, postgres_server):
    nyala, postgres = _description(nyala_server), _description(postgres_server)
    same = {19: 25}  # name columns are sent as text by nyala's catalogs
    for view in _VIEWS:
        assert [n for n, _ in nyala[view]] == [n for n, _ in postgres[view]], view
        assert [t for _, t in nyala[view]] == [same.get(t, t) for _, t in postgres[view]], view


_WRITES = [
    "insert into stat_rows select i, 'x' from generate_series(1, 100) i",
    "insert into stat_rows values (1000, 'y')",
    "update stat_rows set b = 'z' where a < 10",
    "delete from stat_rows where a > 90",
]

_COUNTERS = (
    "select n_tup_ins, n_tup_upd, n_tup_del, n_live_tup, n_dead_tup"
    " from pg_stat_user_tables where relname = 'stat_rows'"
)


def _write_counters(server) -> tuple[int, ...]:
    run_on_each(
        [server],
        ["drop table if exists stat_rows", "create table stat_rows (a int primary key, b text)"],
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for statement in _WRITES:
            conn.execute(statement)
        with conn.transaction(force_rollback=True):
            conn.execute("insert into stat_rows values (5000, 'r')")
            conn.execute("update stat_rows set b = 'r' where a = 1")
    expected = (102, 10, 11)
    with psycopg.connect(server.dsn, autocommit=True) as reader:

        def read() -> tuple[int, ...]:
            reader.execute("select pg_stat_clear_snapshot()")
            return reader.execute(_COUNTERS).fetchone()

        # PostgreSQL's backends report their counters a moment after they end.
        _until(lambda: read()[0] >= expected[0], "the inserts to be reported")
        _until(lambda: read()[1:3] >= expected[1:3], "the updates and deletes to be reported")
        return read()


def test_write_counters_and_row_estimates_move_as_in_postgresql(nyala_server, postgres_server):
    nyala = _write_counters(nyala_server)
    assert nyala == _write_counters(postgres_server)
    # 101 rows inserted and 11 deleted; the rolled-back insert and update count as written
    # and leave dead versions (2), as do the 9 + 11 committed updates and deletes.
    assert nyala == (102, 10, 11, 90, 22)


def test_scans_count_once_each_by_kind(nyala_server):
    run_on_each(
        [nyala_server],
        [
            "drop table if exists stat_scans",
            "create table stat_scans (a int primary key, b text)",
            "insert into stat_scans select i, 'x' from generate_series(1, 50) i",
        ],
    )
    query = (
        "select seq_scan, seq_tup_read, idx_scan, idx_tup_fetch"
        " from pg_stat_user_tables where relname = 'stat_scans'"
    )
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        before = conn.execute(query).fetchone()
        conn.execute("select count(*) from stat_scans where b = 'x'").fetchall()
        conn.execute("select b from stat_scans where a = 7").fetchall()
        conn.execute("select b from stat_scans where a between 1 and 5").fetchall()
        conn.execute("select * from stat_scans limit 3").fetchall()
        after = conn.execute(query).fetchone()
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 53, 2, 6]


def _database(conn: psycopg.Connection) -> dict[str, object]:
    cur = conn.execute("select * from pg_stat_database where datname = current_database()")
    row = cur.fetchone()
    assert row is not None
    return dict(zip([c.name for c in cur.description], row, strict=True))


def test_database_counters_move_with_transactions_sessions_and_deadlocks(nyala_server):
    run_on_each(
        [nyala_server],
        [
            "drop table if exists stat_db",
            "create table stat_db (a int primary key, v int)",
            "insert into stat_db values (1, 0), (2, 0)",
        ],
    )
    with psycopg.connect(nyala_server.dsn, autocommit=True) as monitor:
        before = _database(monitor)
        with psycopg.connect(nyala_server.dsn) as a, psycopg.connect(nyala_server.dsn) as b:
            assert _database(monitor)["numbackends"] == before["numbackends"] + 2
            a.execute("update stat_db set v = 1 where a = 1")
            b.execute("update stat_db set v = 1 where a = 2")
            failures: list[str | None] = []

            def cross() -> None:
                try:
                    a.execute("update stat_db set v = 2 where a = 2")
                    a.commit()
                except psycopg.Error as exc:
                    failures.append(exc.sqlstate)
                    a.rollback()

            waiter = threading.Thread(target=cross, daemon=True)
            waiter.start()
            _until(
                lambda: (
                    monitor.execute("select count(*) from pg_locks where not granted").fetchone()
                    == (1,)
                ),
                "a to wait for b",
            )
            try:
                b.execute("update stat_db set v = 2 where a = 1")
                b.commit()
            except psycopg.Error as exc:
                failures.append(exc.sqlstate)
                b.rollback()
            waiter.join(_WAIT_S)
            assert failures == [errors.DeadlockDetected.sqlstate]
        victim = psycopg.connect(nyala_server.dsn, autocommit=True)
        pid = victim.info.backend_pid
        monitor.execute("select pg_terminate_backend(%s, 5000)", (pid,))
        victim.close()
        after = _database(monitor)
    assert after["deadlocks"] == before["deadlocks"] + 1
    assert after["xact_commit"] > before["xact_commit"]
    assert after["xact_rollback"] >= before["xact_rollback"] + 1
    assert after["tup_updated"] >= before["tup_updated"] + 3
    assert after["sessions"] == before["sessions"] + 3
    assert after["sessions_killed"] == before["sessions_killed"] + 1
    assert after["session_time"] > before["session_time"]
    assert after["active_time"] > before["active_time"]
    assert after["numbackends"] == before["numbackends"]


def _maintenance_counts(server) -> tuple[object, ...]:
    run_on_each(
        [server],
        [
            "drop table if exists stat_vac",
            "create table stat_vac (a int primary key)",
            "insert into stat_vac values (1)",
        ],
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn:

        def reported() -> bool:
            conn.execute("select pg_stat_clear_snapshot()")
            return conn.execute(
                "select n_tup_ins from pg_stat_user_tables where relname = 'stat_vac'"
            ).fetchone() == (1,)

        _until(reported, "the insert to be reported")
        for statement in ("vacuum stat_vac", "analyze stat_vac", "analyze stat_vac"):
            conn.execute(statement)
        conn.execute("select pg_stat_clear_snapshot()")
        return conn.execute(
            "select vacuum_count, analyze_count, last_vacuum is not null,"
            " last_analyze is not null, n_ins_since_vacuum, n_mod_since_analyze"
            " from pg_stat_user_tables where relname = 'stat_vac'"
        ).fetchone()


def test_vacuum_and_analyze_are_counted_as_in_postgresql(nyala_server, postgres_server):
    nyala = _maintenance_counts(nyala_server)
    assert nyala == _maintenance_counts(postgres_server)
    assert nyala == (1, 2, True, True, 0, 0)


def _reset(server) -> list[object]:
    run_on_each(
        [server],
        [
            "drop table if exists stat_reset",
            "drop role if exists stat_reset_bob",
            "create role stat_reset_bob login",
            "create table stat_reset (a int primary key)",
            "insert into stat_reset values (1), (2)",
        ],
    )
    out: list[object] = []
    query = "select n_tup_ins from pg_stat_user_tables where relname = 'stat_reset'"
    with psycopg.connect(server.dsn, autocommit=True) as conn:

        def inserts() -> object:
            conn.execute("select pg_stat_clear_snapshot()")
            row = conn.execute(query).fetchone()
            return row[0] if row else None

        _until(lambda: inserts() == 2, "the inserts to be reported")
        bob = server.dsn.replace("user=nyala", "user=stat_reset_bob")
        with psycopg.connect(bob, autocommit=True) as other:
            for call in ("pg_stat_reset()", "pg_stat_reset_single_table_counters(1)"):
                try:
                    other.execute(f"select {call}")
                    out.append("ok")
                except psycopg.Error as exc:
                    out.append(exc.sqlstate)
        conn.execute("select pg_stat_reset_single_table_counters('stat_reset'::regclass)")
        out.append(inserts())
        conn.execute("drop table stat_reset")
        conn.execute("drop role stat_reset_bob")
    return out


def test_resetting_the_counters_as_in_postgresql(nyala_server, postgres_server):
    nyala = _reset(nyala_server)
    assert nyala == _reset(postgres_server)
    assert nyala == [errors.InsufficientPrivilege.sqlstate] * 2 + [0]


README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_columns(server) -> list[list[str]]:
    section = README.read_text().split("## Database and table statistics", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    text = "\n".join(line.split("--", 1)[0] for line in block.splitlines())
    run_on_each(
        [server], ["drop table if exists orders", "create table orders (id int primary key)"]
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        out = []
        for statement in (s.strip() for s in text.split(";") if s.strip()):
            cur = conn.execute(statement)
            out.append([c.name for c in cur.description or ()])
        conn.execute("drop table orders")
    return out


def test_the_readme_examples_run_as_on_postgresql(nyala_server, postgres_server):
    nyala = _readme_columns(nyala_server)
    assert nyala == _readme_columns(postgres_server)
    assert len(nyala) == 4
