"""SERIAL values a failing one-row INSERT draws, as PostgreSQL 15 draws them: a row that
fails NOT NULL, UNIQUE, CHECK or a foreign key was built with its nextval (the sequence
advances); a value too long or out of range for its column fails before any draw (the
planner folds the constant).  The same on the key-write path (a plain table) and the
general path (a table with constraints), prepared, unprepared and as literals."""

from __future__ import annotations

import pytest

from tests.support.differential import both_connected

pytestmark = pytest.mark.e2e

TABLES = {
    "key_write": "create table serial_draws (id serial primary key, v int not null, u int,"
    " c int, f int, s varchar(2))",
    "general": "create table serial_draws (id serial primary key, v int not null,"
    " u int unique, c int check (c > 0), f int references serial_parent, s varchar(2))",
}
ROWS = [
    (1, 1, 1, 1, "a"),
    (None, 2, 1, 1, "a"),  # 23502
    (2, 1, 1, 1, "a"),  # 23505 on the general table
    (3, 3, 0, 1, "a"),  # 23514 on the general table
    (4, 4, 1, 2, "a"),  # 23503 on the general table
    (5, 5, 1, 1, "abc"),  # 22001
    (2**31, 6, 1, 1, "a"),  # 22003
    (6, 7, 1, None, "b"),
]


def _literal(value: object) -> str:
    return "null" if value is None else repr(value)


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("mode", ["prepared", "extended", "literal"])
def test_failing_insert_draws_serial_as_postgres(nyala_server, postgres_server, table, mode):
    def scenario(conn):
        conn.execute("drop table if exists serial_draws")
        conn.execute("drop table if exists serial_parent")
        conn.execute("create table serial_parent (k int primary key)")
        conn.execute("insert into serial_parent values (1)")
        conn.execute(TABLES[table])
        steps = []
        sql = "insert into serial_draws (v, u, c, f, s) values (%s, %s, %s, %s, %s)"
        for row in ROWS:
            try:
                if mode == "literal":
                    conn.execute(sql % tuple(_literal(v) for v in row))
                else:
                    conn.execute(sql, row, prepare=mode == "prepared")
                steps.append("ok")
            except Exception as exc:
                steps.append(exc.sqlstate)
            steps.append(conn.execute("select last_value from serial_draws_id_seq").fetchone()[0])
        steps.append(conn.execute("select id, v from serial_draws order by id").fetchall())
        return steps

    both_connected(scenario, nyala_server.dsn, postgres_server.dsn)
