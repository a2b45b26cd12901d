"""SELECT ... FOR SYSTEM_TIME AS OF reads a table as it was, through flushes and restarts."""

from __future__ import annotations

import datetime as dt
import time

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _now(conn: psycopg.Connection) -> str:
    time.sleep(0.01)  # the instant lies strictly between two commits
    stamp = dt.datetime.now(dt.UTC).isoformat()
    time.sleep(0.01)
    return stamp


def test_as_of_reads_past_versions_joined_with_current_tables(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table prices (item text primary key, cents integer)")
        conn.execute("create table items (item text primary key, label text)")
        conn.execute("insert into items values ('tea', 'Tea'), ('jam', 'Jam')")
        before_insert = _now(conn)
        conn.execute("insert into prices values ('tea', 100), ('jam', 250)")
        after_insert = _now(conn)
        conn.execute("checkpoint")
        conn.execute("update prices set cents = 120 where item = 'tea'")
        after_update = _now(conn)
        conn.execute("delete from prices where item = 'jam'")
        after_delete = _now(conn)

        def as_of(stamp: str) -> list[tuple]:
            return conn.execute(
                f"select i.label, p.cents from prices for system_time as of '{stamp}' as p "
                "join items i on i.item = p.item order by i.label"
            ).fetchall()

        assert as_of(before_insert) == []
        assert as_of(after_insert) == [("Jam", 250), ("Tea", 100)]
        assert as_of(after_update) == [("Jam", 250), ("Tea", 120)]
        assert as_of(after_delete) == [("Tea", 120)]
        conn.execute("checkpoint")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute(
            f"select count(*) from prices for system_time as of '{after_update}'"
        ).fetchone() == (2,)
        assert conn.execute("select item, cents from prices").fetchall() == [("tea", 120)]


def test_as_of_older_than_the_history_window_is_72000(fresh_nyala_server):
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table h (k integer primary key)")
        with pytest.raises(psycopg.errors.SnapshotTooOld):
            conn.execute("select * from h for system_time as of '2001-01-01 00:00:00+00'")
        assert conn.execute("select count(*) from h").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InvalidDatetimeFormat):
            conn.execute("select * from h for system_time as of 'not a time'")
