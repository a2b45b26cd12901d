"""A prepared statement's remembered work (its plan, its access check: sql/session/
prepared_plan.py) is thrown away whenever what it was made under changes: GRANT and
REVOKE from another session, SET ROLE, a block's own REVOKE rolled back, DDL between two
executions.  Each step runs the same prepared statements on nyala and
on PostgreSQL 15 and compares rows and SQLSTATEs.  The same for simple-Query statements,
whose plans the session keeps by their text."""

from __future__ import annotations

import contextlib

import psycopg
import pytest

from tests.e2e.test_privileges import _connect

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists ppc_items",
    "drop role if exists ppc_owner",
    "drop role if exists ppc_user",
    "create role ppc_user login",
    "create table ppc_items (id bigint primary key, v bigint, note text)",
    "create index ppc_items_v on ppc_items (v)",
    "insert into ppc_items select i, i * 10, 'n' || i from generate_series(1, 50) as g(i)",
    "grant select, insert, update, delete on ppc_items to ppc_user",
]

STATEMENTS = [
    ("select v, note from ppc_items where id = %s", [7]),
    ("select id from ppc_items where v = %s", [70]),
    ("select * from ppc_items where id = %s", [8]),
    ("update ppc_items set v = v + 1 where id = %s", [9]),
    ("insert into ppc_items (id, v) values (%s, 0) on conflict do nothing", [1000]),
    ("delete from ppc_items where id = %s", [2000]),
]


def _run_all(cur: psycopg.Cursor) -> list[object]:
    out: list[object] = []
    for sql, params in STATEMENTS:
        in_block = cur.connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        try:
            with cur.connection.transaction() if in_block else contextlib.nullcontext():
                cur.execute(sql, params, prepare=True)
                out.append(cur.fetchall() if cur.description is not None else cur.rowcount)
        except psycopg.Error as exc:
            out.append(exc.sqlstate)
    return out


def _scenario(server) -> list[object]:
    with _connect(server) as su:
        for sql in SETUP:
            su.execute(sql)
        out: list[object] = []
        try:
            with _connect(server, "ppc_user") as user, user.cursor() as cur:
                steps = [
                    "revoke update on ppc_items from ppc_user",
                    "grant update (v) on ppc_items to ppc_user",
                    "revoke select on ppc_items from ppc_user",
                    "grant select (id, v) on ppc_items to ppc_user",
                    "grant select on ppc_items to ppc_user",
                    "revoke all on ppc_items from ppc_user",
                    "alter role ppc_user superuser",  # a role change, no DDL
                    "alter role ppc_user nosuperuser",
                    "create role ppc_owner",
                    "grant all on ppc_items to ppc_owner",
                    "grant ppc_owner to ppc_user",  # privileges held through a membership
                    "revoke ppc_owner from ppc_user",
                    "grant all on ppc_items to ppc_user",
                ]
                out += _run_all(cur)
                out += _run_all(cur)  # executed again: the remembered check
                for step in steps:
                    su.execute(step)  # another session changes the privileges
                    out += [step, *_run_all(cur)]
                # SET ROLE mid-session, to a role with less, and back.
                su.execute("revoke all on ppc_items from public")
                su.execute("drop role if exists ppc_less")
                su.execute("create role ppc_less")
                su.execute("grant ppc_less to ppc_user")
                user.execute("set role ppc_less")
                out += ["set role", *_run_all(cur)]
                user.execute("reset role")
                out += ["reset role", *_run_all(cur)]
                # A SET ROLE in a transaction block, undone by its ROLLBACK.
                with user.transaction(force_rollback=True):
                    user.execute("set role ppc_less")
                    out += ["in block", *_run_all(cur)]
                out += ["rolled back", *_run_all(cur)]
                # The superuser's own GRANT in a block: seen by its statements, gone at ROLLBACK.
                with su.cursor() as su_cur:
                    su.execute("set role ppc_user")
                    out += ["as ppc_user", *_run_all(su_cur)]
                    su.execute("reset role")
                    with su.transaction(force_rollback=True):
                        su.execute("revoke all on ppc_items from ppc_user")
                        su.execute("set local role ppc_user")
                        out += ["revoked in block", *_run_all(su_cur)]
                    su.execute("set role ppc_user")
                    out += ["rolled back", *_run_all(su_cur)]
                    su.execute("reset role")
                # DDL between executions: the plan is made again, or refused as PostgreSQL.
                for ddl in (
                    "drop index ppc_items_v",
                    "create index ppc_items_v2 on ppc_items (v)",
                    "alter table ppc_items add column extra int",
                    "alter table ppc_items drop column note",
                    "drop table ppc_items",
                ):
                    su.execute(ddl)
                    out += [ddl, *_run_all(cur)]
        finally:
            su.execute("drop table if exists ppc_items")
            su.execute("drop role if exists ppc_less")
            su.execute("drop role if exists ppc_owner")
            su.execute("drop role if exists ppc_user")
        return out


def test_prepared_statements_follow_privilege_role_and_ddl_changes_as_postgresql(
    nyala_server, postgres_server
):
    theirs = _scenario(postgres_server)
    ours = _scenario(nyala_server)
    assert len(ours) == len(theirs)
    for mine, expected in zip(ours, theirs, strict=True):
        assert mine == expected


SIMPLE_SETUP = [
    "drop table if exists sqc_t",
    "drop role if exists sqc_reader",
    "drop role if exists sqc_other",
    "create role sqc_reader",
    "create table sqc_t (k bigint primary key, v text)",
    "insert into sqc_t select i, 'v' || i from generate_series(1, 20) as g(i)",
    "grant select on sqc_t to sqc_reader",
]

SIMPLE_STATEMENTS = [
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

SIMPLE_STEPS = [
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


def _simple_scenario(server, fresh_check: bool) -> list[object]:
    with _connect(server) as su:
        for sql in SIMPLE_SETUP:
            su.execute(sql)
        out: list[object] = []
        try:
            with _connect(server) as conn:
                for step in [None, *SIMPLE_STEPS]:
                    if step is not None:
                        out.append((step, _answer(conn, step)))
                    for sql in SIMPLE_STATEMENTS:
                        first = _answer(conn, sql)
                        again = _answer(conn, sql) if fresh_check else first
                        assert again == first, (step, sql)
                        out.append((sql, first))
                    if fresh_check:
                        _answer(conn, "discard plans")
                        for sql, kept in zip(
                            SIMPLE_STATEMENTS, out[-len(SIMPLE_STATEMENTS) :], strict=True
                        ):
                            assert (sql, _answer(conn, sql)) == kept, step
        finally:
            su.execute("drop table if exists sqc_t")
            su.execute("drop role if exists sqc_reader")
            su.execute("drop role if exists sqc_other")
        return out


def test_kept_simple_query_plans_answer_as_fresh_ones_and_as_postgresql(
    nyala_server, postgres_server
):
    """A simple-Query statement's kept plan (sql/session/plan_cache.py) answers as a fresh
    one does after everything that changes its answer: DDL, search_path, SET ROLE, a temp
    table shadowing a table and dropped again, TimeZone and DateStyle, CREATE/DROP ROLE and
    REVOKE. Each statement is sent as a simple Query (no prepare) twice per step, so the
    second run reuses the plan; on nyala it then runs once more after DISCARD PLANS (a fresh
    plan), and every answer is compared with PostgreSQL 15's."""
    theirs = _simple_scenario(postgres_server, fresh_check=False)
    ours = _simple_scenario(nyala_server, fresh_check=True)
    assert ours == theirs
