"""A simple-Query statement's kept plan (sql/session/plan_cache.py) answers as a fresh one
does after everything that changes its answer: DDL, search_path, SET ROLE, a temp table
shadowing a table and dropped again, TimeZone and DateStyle, CREATE/DROP ROLE and REVOKE.  Each statement is sent as a
simple Query (no prepare) twice per step, so the second run reuses the plan; on nyala it
then runs once more after DISCARD PLANS (a fresh plan), and every answer is compared with
PostgreSQL 15's."""

from __future__ import annotations

import psycopg
import pytest

from tests.e2e.test_privileges import _connect

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists sqc_t",
    "drop role if exists sqc_reader",
    "drop role if exists sqc_other",
    "create role sqc_reader",
    "create table sqc_t (k bigint primary key, v text)",
    "insert into sqc_t select i, 'v' || i from generate_series(1, 20) as g(i)",
    "grant select on sqc_t to sqc_reader",
]

STATEMENTS = [
    "select 1",
    "select * from sqc_t where k = 5",
    "select count(*) from sqc_t",
    "select current_user, session_user",
    "select current_setting('search_path')",
    "select current_setting('TimeZone'), current_setting('DateStyle')",
    "select timestamptz '2024-01-02 03:04:05+00'",
    "select date '01/02/2024'",
    "select a.attname from pg_catalog.pg_attribute a join pg_catalog.pg_class c"
    " on c.oid = a.attrelid where c.relname = 'sqc_t' and a.attnum > 0"
    " and c.relpersistence = 'p' order by a.attnum",
    "select count(*) from pg_catalog.pg_class where relname = 'sqc_t' and relpersistence = 'p'",
    "select count(*) from pg_catalog.pg_roles where rolname = 'sqc_other'",
    "select has_table_privilege('sqc_reader', 'public.sqc_t', 'select')",
]

STEPS = [
    "alter table sqc_t add column w int",
    "set search_path = pg_catalog, public",
    "set role sqc_reader",
    "reset role",
    "create temp table sqc_t (k bigint primary key, v text)",
    "insert into sqc_t values (5, 'temp')",
    "drop table sqc_t",
    "set timezone = 'America/New_York'",
    "set datestyle = 'ISO, DMY'",
    "set datestyle = 'SQL, MDY'",
    "alter table sqc_t drop column w",
    "create role sqc_other",
    "revoke select on sqc_t from sqc_reader",
    "drop role sqc_other",
    "reset all",
]


def _answer(conn: psycopg.Connection, sql: str) -> object:
    result = conn.pgconn.exec_(sql.encode())
    if result.status == psycopg.pq.ExecStatus.TUPLES_OK:
        return [
            tuple(result.get_value(r, c) for c in range(result.nfields))
            for r in range(result.ntuples)
        ]
    if result.status == psycopg.pq.ExecStatus.FATAL_ERROR:
        return result.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
    return result.status


def _scenario(server, fresh_check: bool) -> list[object]:
    with _connect(server) as su:
        for sql in SETUP:
            su.execute(sql)
        out: list[object] = []
        try:
            with _connect(server) as conn:
                for step in [None, *STEPS]:
                    if step is not None:
                        out.append((step, _answer(conn, step)))
                    for sql in STATEMENTS:
                        first, again = _answer(conn, sql), _answer(conn, sql)
                        assert again == first, (step, sql)
                        out.append((sql, first))
                    if fresh_check:
                        _answer(conn, "discard plans")
                        for sql, kept in zip(STATEMENTS, out[-len(STATEMENTS) :], strict=True):
                            assert (sql, _answer(conn, sql)) == kept, step
        finally:
            su.execute("drop table if exists sqc_t")
            su.execute("drop role if exists sqc_reader")
            su.execute("drop role if exists sqc_other")
        return out


def test_kept_simple_query_plans_answer_as_fresh_ones_and_as_postgresql(
    nyala_server, postgres_server
):
    theirs = _scenario(postgres_server, fresh_check=False)
    ours = _scenario(nyala_server, fresh_check=True)
    assert ours == theirs
