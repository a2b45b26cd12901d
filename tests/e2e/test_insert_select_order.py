"""INSERT ... SELECT and CREATE TABLE AS whose query has an ORDER BY naming source columns,
against PostgreSQL 15 (the target's column renaming once hid those names: 42703), and a
UNION's ORDER BY naming no output column (42703, not DuckDB's binder error as 42883)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.differential import both_connected

STATEMENTS = [
    "create table iso_s (id int primary key, v text)",
    "insert into iso_s values (2, 'b'), (1, 'a'), (3, 'c')",
    "create table iso_t (id int primary key, v text)",
    "insert into iso_t select id, v from iso_s order by id",
    "insert into iso_t select id + 10, v from iso_s order by v desc limit 2",
    "insert into iso_t (v, id) select v, id + 20 from iso_s order by id limit 1",
    "insert into iso_t select id + 30 from iso_s order by v",
    "insert into iso_t select id + 40, v from iso_s union all "
    "select id + 50, v from iso_s order by id desc limit 4",
    "insert into iso_t select id + 60, v from iso_s order by nope",
    "insert into iso_t select id + 70, v from iso_s union all "
    "select id + 80, v from iso_s order by id desc limit 4",
    "select id + 1, v from iso_s union select id + 2, v from iso_s order by id",
    "select * from iso_t order by id",
    "create table iso_w as select id, v from iso_s order by v desc",
    "select * from iso_w order by id",
    "select id, v into iso_x from iso_s order by id limit 2",
    "select * from iso_x order by id",
]


@pytest.fixture
def servers(nyala_server, postgres_server):
    return nyala_server.dsn, postgres_server.dsn


def test_ordered_sources_insert_as_postgresql(servers):
    def scenario(conn: psycopg.Connection[Any]) -> list[Any]:
        return [(sql, _answer(conn, sql)) for sql in STATEMENTS]

    results = both_connected(scenario, *servers)
    assert dict(results)["select * from iso_t order by id"][1][:3] == [(1, "a"), (2, "b"), (3, "c")]


def _answer(conn: psycopg.Connection[Any], sql: str) -> Any:
    """The command tag and rows of ``sql``, or its SQLSTATE."""
    try:
        cursor = conn.execute(sql)
    except psycopg.Error as exc:
        return exc.sqlstate
    return cursor.statusmessage, cursor.fetchall() if cursor.description else None
