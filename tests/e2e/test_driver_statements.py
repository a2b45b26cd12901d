"""Statements drivers send on their own, through psycopg, side by side with PostgreSQL 15.

Named (server-side) cursors, SET SESSION CHARACTERISTICS, BEGIN READ ONLY,
SHOW TRANSACTION ISOLATION LEVEL, ParameterStatus on SET, pg_sleep and the
command tags PostgreSQL writes for them.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


def _scenario(dsn: str, table: str) -> list[object]:
    """Run the same driver-level scenario; return everything a client can observe."""
    seen: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"drop table if exists {table}")
        conn.execute(f"create table {table} (id integer primary key, v text)")
        with conn.cursor() as cur:
            cur.executemany(
                f"insert into {table} values (%s, %s)", [(i, f"v{i}") for i in range(7)]
            )
    with psycopg.connect(dsn) as conn:
        with conn.cursor(name="mycur") as cur:
            cur.itersize = 2
            cur.execute(f"select id, v from {table} where id >= %s order by id", (1,))
            seen.append(cur.fetchmany(2))
            seen.append(cur.fetchmany(3))
            seen.append(cur.fetchall())
        conn.commit()
        cur = conn.cursor()
        cur.execute("begin")
        for statement, fetch in (
            (f"declare c no scroll cursor for select id from {table} order by id", False),
            ("fetch 2 from c", True),
            ("fetch forward 2 in c", True),
            ("move 1 in c", False),
            ("fetch all from c", True),
            ("close c", False),
        ):
            cur.execute(statement)
            seen.append(cur.statusmessage)
            if fetch:
                seen.append(cur.fetchall())
        with pytest.raises(errors.InvalidCursorName):
            cur.execute("fetch 1 from c")
        conn.rollback()
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        seen.append(cur.statusmessage)
        seen.append(cur.execute("SHOW TRANSACTION ISOLATION LEVEL").fetchall())
        seen.append([c.name for c in cur.description])
        cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")
        cur.execute("BEGIN READ ONLY")
        seen.append(cur.statusmessage)
        seen.append(cur.execute("show transaction_read_only").fetchall())
        with pytest.raises(errors.ReadOnlySqlTransaction):
            cur.execute(f"insert into {table} values (100, 'x')")
        cur.execute("rollback")
        cur.execute("set application_name = 'driver test'")
        seen.append(conn.info.parameter_status("application_name"))
        seen.append(cur.execute("select pg_sleep(0.01)").fetchall())
        seen.append(cur.execute("show extra_float_digits").fetchall())
        floats = (
            "select 0.1::float8 + 0.2::float8, 1::float4 / 3::float4, 2/3::float8, 1e20::float8"
        )
        for digits in (0, -3, 1, 3):
            cur.execute(f"set extra_float_digits = {digits}")
            seen.append(cur.execute(floats).fetchall())
            seen.append(cur.execute(floats + " where %s", (True,)).fetchall())
        with pytest.raises(errors.DuplicateCursor):
            cur.execute("begin")
            cur.execute("declare d cursor for select 1")
            cur.execute("declare d cursor for select 2")
        cur.execute("rollback")
        with pytest.raises(errors.NoActiveSqlTransaction):
            cur.execute("declare e cursor for select 1")
    return seen


def test_driver_statements_match_postgresql(nyala_server, postgres_server):
    ours = _scenario(nyala_server.dsn, "drv_t")
    theirs = _scenario(postgres_server.dsn, "drv_t")
    assert ours == theirs
    assert ours[0] == [(1, "v1"), (2, "v2")]
    assert "FETCH 2" in ours and "DECLARE CURSOR" in ours and "CLOSE CURSOR" in ours
    assert [("serializable",)] in ours
    assert [(0.3, 0.333333, 0.666666666666667, 1e20)] in ours  # extra_float_digits = 0


def test_a_cursor_with_hold_outlives_its_transaction(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            cur = conn.cursor()
            cur.execute("begin")
            cur.execute("declare h cursor with hold for select g from generate_series(1, 5) g")
            cur.execute("commit")
            assert cur.execute("fetch 2 from h").fetchall() == [(1,), (2,)]
            assert cur.execute("fetch all from h").fetchall() == [(3,), (4,), (5,)]
            cur.execute("close h")


def test_pg_sleep_is_cancelled_with_57014_and_the_connection_stays_usable(nyala_server):
    import threading

    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        timer = threading.Timer(0.5, conn.cancel_safe)
        timer.start()
        try:
            with pytest.raises(errors.QueryCanceled):
                conn.execute("select pg_sleep(30)")
        finally:
            timer.cancel()
        assert conn.execute("select 1").fetchall() == [(1,)]
