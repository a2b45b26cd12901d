"""Kudu's cell and key size limits: over them is 54000, nothing is written, the session goes on."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_oversized_cell_and_key_are_54000(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table lim (k text primary key, v text)")
        conn.execute("insert into lim values ('ok', %s)", ("x" * 65_536,))
        with pytest.raises(psycopg.errors.ProgramLimitExceeded):
            conn.execute("insert into lim values ('a', 'b'), ('big', %s)", ("x" * 65_537,))
        with pytest.raises(psycopg.errors.ProgramLimitExceeded):
            conn.execute("insert into lim values (%s, 'v')", ("k" * 16_400,))
        with pytest.raises(psycopg.errors.ProgramLimitExceeded):
            conn.execute("update lim set v = %s where k = 'ok'", ("y" * 70_000,))
        rows = conn.execute("select k, length(v) from lim order by k").fetchall()
        assert rows == [("ok", 65_536)]
        conn.execute("drop table lim")
