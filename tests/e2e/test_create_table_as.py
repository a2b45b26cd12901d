"""CREATE TABLE AS and SELECT INTO on nyala as on PostgreSQL 15: each form's tag, the new
table's column names, described types and rows, the errors' SQLSTATEs, a dbt-shaped
statement, rollback, failure part-way, time travel and a 100k-row copy."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import psycopg
import pytest

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists ctas_src, ctas_other",
    "create table ctas_src (id int primary key, v varchar(5), n numeric(10,2), "
    "ts timestamptz, j json, price real)",
    "insert into ctas_src values "
    "(1, 'a', 1.50, '2024-01-01 10:00+00', '{\"k\": 1}', 1.5), "
    "(2, 'b', NULL, NULL, NULL, NULL), "
    "(3, 'c', 3.25, '2024-03-01 00:00+00', '[1, 2]', 2.25)",
    "create table ctas_other (id int primary key, w text)",
    "insert into ctas_other values (1, 'x'), (3, 'z'), (4, 'w')",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


def _created(conn: psycopg.Connection[Any], statement: str, table: str) -> Any:
    """The statement's tag (or SQLSTATE), then the table's columns, types and rows."""
    conn.execute(f"drop table if exists {table}", prepare=False)
    try:
        cursor = conn.execute(statement)
    except psycopg.Error as exc:
        return exc.sqlstate
    tag = cursor.statusmessage
    read = conn.execute(f"select * from {table}", prepare=False)
    description = [(c.name, c.type_code, c.internal_size) for c in read.description or ()]
    rows = sorted(read.fetchall(), key=repr)
    conn.execute(f"drop table {table}", prepare=False)
    return tag, description, rows


FORMS = [
    "create table ctas_t as select id, v from ctas_src where id < 3",
    "create table ctas_t as select * from ctas_src",
    "create table ctas_t (a, b) as select id, v, n from ctas_src",
    "create table ctas_t as select id + 1, v || 'x', 1.5, 'lit', id::bigint as big from ctas_src",
    "create table ctas_t as (select id, v from ctas_src order by id desc limit 2)",
    "create table ctas_t as with c as (select id, n from ctas_src where n is not null) "
    "select c.id, c.n, o.w from c join ctas_other o on o.id = c.id",
    "create table ctas_t as select id from ctas_src union select id from ctas_other",
    "create table ctas_t as values (1, 'one'), (2, 'two')",
    "create table ctas_t as table ctas_other",
    "create table ctas_t as select id, v from ctas_src with no data",
    "create table ctas_t as select id, v from ctas_src with data",
    "create temp table ctas_t as select id, ts, j from ctas_src",
    "create unlogged table ctas_t as select id, price from ctas_src",
    "select id, v into ctas_t from ctas_src where id > 1",
    "select id, n into table ctas_t from ctas_src",
    "select id, v into temp ctas_t from ctas_src",
    "create table ctas_t as select count(*), sum(n) from ctas_src",
    "select id into ctas_t from ctas_src union select id from ctas_other",
    "with c as (select id from ctas_src) select id into ctas_t from c",
    "create table ctas_t as select 1 as a, null as b, 'x' as c, now() - now() > '1 day' as d",
    "create table ctas_t as select 1, 2",
    "create table ctas_t as select id, id from ctas_src",
    "create table ctas_t (a, b, c) as select id, v from ctas_src",
    "create table ctas_t (a, a) as select id, v from ctas_src",
    "create table ctas_t as select nope from ctas_src",
    "create table ctas_t as select id from ctas_missing",
    "create table ctas_t as select 1/0 as x",
]


@pytest.mark.parametrize("statement", FORMS)
def test_form_as_on_postgresql(pair, statement):
    pair.same(lambda conn: _created(conn, statement, "ctas_t"), statement)


def test_existing_table(pair):
    pair.run("drop table if exists ctas_e", "create table ctas_e (x int)")
    pair.check("create table ctas_e as select 1 as x")
    pair.check("select 1 into ctas_e")

    def if_not_exists(conn: psycopg.Connection[Any]) -> Any:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(f"{d.sqlstate} {d.message_primary}"))
        cursor = conn.execute("create table if not exists ctas_e as select 1 as x")
        return cursor.statusmessage, notices, outcome(conn, "select count(*) from ctas_e")

    pair.same(if_not_exists, "IF NOT EXISTS")


def test_catalog_shows_table(pair):
    pair.run("drop table if exists ctas_cat", "create table ctas_cat as select id, v from ctas_src")
    pair.check(
        "select column_name, data_type, character_maximum_length, is_nullable "
        "from information_schema.columns where table_name = 'ctas_cat' order by ordinal_position"
    )
    pair.check("select relkind, relnatts from pg_class where relname = 'ctas_cat'")
    pair.check(
        "select count(*) from pg_constraint c join pg_class r on r.oid = c.conrelid "
        "where r.relname = 'ctas_cat'"
    )
    pair.run("drop table ctas_cat")


def test_rollback_leaves_nothing(pair):
    def scenario(conn: psycopg.Connection[Any]) -> Any:
        conn.execute("begin")
        tag = conn.execute("create table ctas_rb as select id from ctas_src").statusmessage
        inside = conn.execute("select count(*) from ctas_rb").fetchone()
        conn.execute("rollback")
        return tag, inside, outcome(conn, "select * from ctas_rb")

    pair.same(scenario, "rollback")


def test_failure_part_way_leaves_nothing(pair):
    def scenario(conn: psycopg.Connection[Any]) -> Any:
        failed = outcome(conn, "create table ctas_fail as select 10 / (id - 2) as q from ctas_src")
        return failed, outcome(conn, "select * from ctas_fail")

    pair.same(scenario, "failure")


def test_dbt_shaped_statement(pair):
    """dbt's materialisation: a quoted, schema-qualified name and a parenthesised query."""

    def scenario(conn: psycopg.Connection[Any]) -> Any:
        conn.execute('drop table if exists "public"."ctas_model__dbt_tmp"')
        with conn.transaction():
            cursor = conn.execute(
                'create table "public"."ctas_model__dbt_tmp"\n  as\n  (\n'
                "    with src as (select id, v, n from ctas_src)\n"
                "select id, upper(v) as v_upper, coalesce(n, 0) as n from src\n  );"
            )
            tag, count = cursor.statusmessage, cursor.rowcount
        rows = conn.execute('select * from "public"."ctas_model__dbt_tmp" order by id').fetchall()
        conn.execute('drop table "public"."ctas_model__dbt_tmp"')
        return tag, count, rows

    pair.same(scenario, "dbt")


def test_time_travel_copies_rows_as_of_then(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists ctas_tt")
        conn.execute("create table ctas_tt (id int primary key, v int)")
        conn.execute("insert into ctas_tt values (1, 10), (2, 20)")
        time.sleep(0.01)
        then = dt.datetime.now(dt.UTC)
        time.sleep(0.01)
        conn.execute("update ctas_tt set v = 99 where id = 1")
        conn.execute("insert into ctas_tt values (3, 30)")
        conn.execute("drop table if exists ctas_tt_copy")
        as_of = f"for system_time as of '{then.isoformat()}'"
        expected = conn.execute(f"select id, v from ctas_tt {as_of} order by id").fetchall()
        cursor = conn.execute(f"create table ctas_tt_copy as select id, v from ctas_tt {as_of}")
        assert cursor.statusmessage == "SELECT 2"
        got = conn.execute("select id, v from ctas_tt_copy order by id").fetchall()
        assert got == expected == [(1, 10), (2, 20)]
        before = dt.datetime.now(dt.UTC)
        time.sleep(0.01)
        conn.execute("drop table if exists ctas_late, ctas_late_copy")
        conn.execute("create table ctas_late (id int)")
        conn.execute("insert into ctas_late values (1)")
        early = f"for system_time as of '{before.isoformat()}'"
        plain = outcome(conn, f"select id from ctas_late {early}")
        cursor = conn.execute(f"create table ctas_late_copy as select id from ctas_late {early}")
        assert (cursor.statusmessage, outcome(conn, "select * from ctas_late_copy")) == (
            f"SELECT {len(plain)}",
            plain,
        )
        too_old = "for system_time as of '2000-01-01 00:00:00+00'"
        assert outcome(conn, f"select id from ctas_late {too_old}") == "72000"
        assert outcome(conn, f"create table ctas_old as select id from ctas_late {too_old}") == (
            "72000"
        )
        assert outcome(conn, "select * from ctas_old") == "42P01"


def test_hundred_thousand_rows(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists ctas_big, ctas_big_copy")
        conn.execute("create table ctas_big (id bigint primary key, v bigint)")
        conn.execute("insert into ctas_big select g, g * 3 from generate_series(1, 100000) g")
        cursor = conn.execute("create table ctas_big_copy as select id, v from ctas_big")
        assert cursor.statusmessage == "SELECT 100000"
        got = conn.execute("select count(*), sum(id), sum(v) from ctas_big_copy").fetchone()
        assert got == (100000, 5000050000, 15000150000)
        conn.execute("drop table ctas_big, ctas_big_copy")


def test_type_a_table_cannot_hold_is_refused_by_name(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert outcome(conn, "create table ctas_arr as select array[1, 2] as g") == "0A000"
        assert outcome(conn, "select * from ctas_arr") == "42P01"


def test_execute_is_refused_by_name(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("prepare ctas_p as select 1 as x")
        assert outcome(conn, "create table ctas_x as execute ctas_p") == "0A000"
        assert outcome(conn, "select 1") == [(1,)]


def test_psql_describes_created_table(pair, nyala_server, postgres_server):
    """``\\d`` of a table CREATE TABLE AS made prints what PostgreSQL prints."""
    made = "create table ctas_psql as select id, v, n, ts from ctas_src where id > 1"
    for server in (nyala_server, postgres_server):
        server.psql(["-X", "-q", "-c", f"drop table if exists ctas_psql; {made}"], check=True)
    try:
        ours, theirs = (
            server.psql(["-X", "-c", r"\d ctas_psql"]) for server in (nyala_server, postgres_server)
        )
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode,
            theirs.stdout,
            theirs.stderr,
        )
    finally:
        for server in (nyala_server, postgres_server):
            server.psql(["-X", "-q", "-c", "drop table ctas_psql"])
