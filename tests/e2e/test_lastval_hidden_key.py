"""lastval() and currval() after inserts into a table without a primary key, on nyala as on
PostgreSQL 15: the hidden key's draws are no sequence value of the session's, and
inserting needs no privilege on them, on the key-write path and the general one."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.differential import both_connected, outcome

pytestmark = pytest.mark.e2e


def _scenario(conn: psycopg.Connection) -> list:
    steps: list = []

    def step(sql: str) -> None:
        steps.append((sql, outcome(conn, sql) if sql.startswith("select") else _run(conn, sql)))

    for sql in (
        "drop table if exists lv_heap, lv_serial",
        "drop role if exists lv_writer",
        "create table lv_heap (a int)",
        "create table lv_serial (id serial primary key, a int)",
        "insert into lv_heap values (1), (2)",
        "select lastval()",
        "insert into lv_heap select g from generate_series(1, 3) g",
        "select lastval()",
        "insert into lv_serial (a) values (10), (11)",
        "select lastval()",
        "insert into lv_heap values (4)",
        "insert into lv_heap select 5",
        "select lastval(), currval('lv_serial_id_seq')",
        "create role lv_writer",
        "grant insert, select on lv_heap to lv_writer",
        "set role lv_writer",
        "insert into lv_heap values (6)",
        "insert into lv_heap select 7",
        "select lastval()",
        "reset role",
        "select count(*), sum(a) from lv_heap",
        "drop table lv_heap, lv_serial",
        "drop role lv_writer",
    ):
        step(sql)
    return steps


def _run(conn: psycopg.Connection, sql: str) -> str | None:
    try:
        return conn.execute(sql).statusmessage
    except psycopg.Error as exc:
        return exc.sqlstate


def test_hidden_key_draws_are_not_the_sessions(nyala_server, postgres_server):
    steps = both_connected(_scenario, nyala_server.dsn, postgres_server.dsn)
    assert ("select lastval()", "55000") in steps
    assert ("select lastval(), currval('lv_serial_id_seq')", [(2, 2)]) in steps
