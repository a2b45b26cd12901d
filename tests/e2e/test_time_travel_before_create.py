"""FOR SYSTEM_TIME AS OF an instant before the table existed (PostgreSQL has no AS OF):
the table as its name means it now, empty, on the key-read and the scan path alike, and
after a DROP and CREATE of the name too (README)."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def test_instant_before_create_reads_no_rows(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists before_create")
        before = conn.execute("select now()::text").fetchone()[0]
        time.sleep(0.05)
        conn.execute("create table before_create (k int primary key, v int)")
        conn.execute("insert into before_create values (1, 1), (2, 2)")
        then = f"before_create for system_time as of '{before}'"
        for prepare in (False, True):
            assert conn.execute(f"select * from {then}", prepare=prepare).fetchall() == []
            assert (
                conn.execute(f"select v from {then} where k = 1", prepare=prepare).fetchall() == []
            )
            assert conn.execute(f"select count(*) from {then}", prepare=prepare).fetchall() == [
                (0,)
            ]
        assert conn.execute("select count(*) from before_create").fetchall() == [(2,)]
        conn.execute("drop table before_create")
        conn.execute("create table before_create (k int primary key, w text)")
        cursor = conn.execute(f"select * from {then}")
        assert [d.name for d in cursor.description] == ["k", "w"]
        assert cursor.fetchall() == []
