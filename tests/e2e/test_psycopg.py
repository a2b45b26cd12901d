"""psycopg 3 against a real nyala server: protocol paths, types, transactions and SQLSTATEs.

Where nyala means to behave as PostgreSQL does, the same statements run on a
throwaway PostgreSQL 15 and the answers are compared.
"""

from __future__ import annotations

import datetime as dt
import decimal

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e

ALL_TYPES_DDL = """
create table alltypes (
    id integer primary key,
    b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision,
    n numeric(12,3), t text, v varchar(10), by bytea, d date, ts timestamp, tz timestamptz
)
"""
ALL_TYPES_ROWS = [
    (
        1,
        True,
        -32768,
        2147483647,
        -9223372036854775808,
        1.5,
        0.1,
        decimal.Decimal("-123456789.125"),
        "héllo ✓",
        "abc",
        b"\x00\xffx",
        dt.date(2024, 2, 29),
        dt.datetime(2024, 1, 2, 3, 4, 5, 678901),
        dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    ),
    (2, None, None, None, None, None, None, None, None, None, None, None, None, None),
    (
        3,
        False,
        32767,
        -2147483648,
        9223372036854775807,
        float("inf"),
        -1e300,
        decimal.Decimal("0.001"),
        "",
        "0123456789",
        b"",
        dt.date(1970, 1, 1),
        dt.datetime(1999, 12, 31, 23, 59, 59),
        dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
    ),
]


@pytest.fixture
def conn(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture
def pg(postgres_server):
    with psycopg.connect(postgres_server.dsn, autocommit=True) as connection:
        yield connection


def _fresh(connection, ddl: str, name: str) -> None:
    connection.execute(f"drop table if exists {name}")
    connection.execute(ddl)


def test_startup_reports_a_postgresql_15_server(conn):
    assert conn.info.server_version >= 150000
    assert conn.info.parameter_status("client_encoding") == "UTF8"
    assert conn.info.parameter_status("DateStyle") == "ISO, MDY"
    assert conn.info.parameter_status("integer_datetimes") == "on"
    assert conn.info.parameter_status("standard_conforming_strings") == "on"
    assert conn.info.parameter_status("TimeZone") == "UTC"
    (version,) = conn.execute("select version()").fetchone()
    assert version.startswith("PostgreSQL 15")
    assert conn.execute("select current_database(), current_schema()").fetchone() == (
        "nyala",
        "public",
    )


def test_unknown_database_is_3d000(nyala_server):
    dsn = nyala_server.dsn.replace("dbname=nyala", "dbname=other")
    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        psycopg.connect(dsn)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_every_type_round_trips_like_postgresql(conn, pg, binary):
    answers = []
    for connection in (conn, pg):
        _fresh(connection, ALL_TYPES_DDL, "alltypes")
        with connection.cursor() as cur:
            cur.executemany(
                "insert into alltypes values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                ALL_TYPES_ROWS,
            )
        with connection.cursor(binary=binary) as cur:
            cur.execute("select * from alltypes order by id")
            answers.append((cur.fetchall(), [(d.name, d.type_code) for d in cur.description]))
    assert answers[0] == answers[1]
    assert answers[0][0] == ALL_TYPES_ROWS


def test_server_side_parameters_with_untyped_strings(conn):
    _fresh(conn, "create table kv (k text primary key, v integer)", "kv")
    conn.execute("insert into kv values (%s, %s)", ("a", 1))
    conn.execute("insert into kv (v, k) values (%s, %s)", (2, "b"))
    row = conn.execute("select v from kv where k = %s", ("b",)).fetchone()
    assert row == (2,)
    cur = conn.execute("select k from kv where v >= %s order by k", (1,), prepare=True)
    assert cur.fetchall() == [("a",), ("b",)]
    for _ in range(6):  # crosses psycopg's prepare threshold
        assert conn.execute("select count(*) from kv where v < %s", (10,)).fetchone() == (2,)


def test_composite_key_crud_join_and_aggregate(conn):
    _fresh(
        conn,
        "create table metrics (host text, metric text, time bigint, value double precision, "
        "primary key (host, metric, time))",
        "metrics",
    )
    _fresh(conn, "create table hosts (host text primary key, dc text not null)", "hosts")
    with conn.cursor() as cur:
        cur.executemany(
            "insert into metrics values (%s, %s, %s, %s)",
            [(f"h{i % 3}", "cpu", i, float(i)) for i in range(30)],
        )
    conn.execute("insert into hosts values ('h0', 'eu'), ('h1', 'eu'), ('h2', 'us')")
    assert conn.execute("update metrics set value = value * 2 where time < 10").rowcount == 10
    assert conn.execute("delete from metrics where host = 'h2' and time >= 20").rowcount == 4
    rows = conn.execute(
        "select h.dc, count(*), sum(m.value) from metrics m join hosts h on h.host = m.host "
        "group by h.dc order by h.dc"
    ).fetchall()
    expected_eu = sum(float(i) * (2 if i < 10 else 1) for i in range(30) if i % 3 != 2)
    expected_us = sum(float(i) * (2 if i < 10 else 1) for i in range(30) if i % 3 == 2 and i < 20)
    assert rows == [("eu", 20, expected_eu), ("us", 6, expected_us)]


def test_insert_select_and_subquery_delete(conn):
    _fresh(conn, "create table src (id int primary key, x int)", "src")
    _fresh(conn, "create table dst (id int primary key, x int)", "dst")
    conn.execute("insert into src select g, g * 10 from generate_series(1, 100) as s(g)")
    assert conn.execute("insert into dst select id, x from src where id <= 50").rowcount == 50
    deleted = conn.execute("delete from dst where id in (select id from src where x > 300)")
    assert deleted.rowcount == 20
    assert conn.execute("select count(*), max(id) from dst").fetchone() == (30, 30)


def test_postgresql_semantics_match(conn, pg):
    queries = [
        "select 7 / 2, -7 / 2, 7 % 3, -7 % 3, 7 / 2.0 = 3.5",
        "select x from (values (1), (null), (3)) v(x) order by x",
        "select x from (values (1), (null), (3)) v(x) order by x desc",
        "select 'B' < 'a', 'abc' || 'def', upper('x'), length('héllo')",
        "select sum(x), count(x), count(*) from (values (1), (2), (null)) v(x)",
        "select x, row_number() over (order by x desc) from (values (1), (2), (3)) v(x) order by x",
        "with c as (select 1 as a union all select 2) select a * 10 from c order by 1",
        "select 2147483647::bigint + 1, 5 between 1 and 10, null is null",
    ]
    for query in queries:
        assert conn.execute(query).fetchall() == pg.execute(query).fetchall(), query


def test_output_column_names_follow_postgresql(conn, pg):
    query = "select 1, 1 as one, count(*), now() is not null, version() is not null"
    names = [[d.name for d in c.execute(query).description] for c in (conn, pg)]
    assert names[0][:3] == names[1][:3]


def test_transactions_commit_and_rollback(nyala_server):
    with psycopg.connect(nyala_server.dsn) as conn:
        conn.execute("drop table if exists tx")
        conn.execute("create table tx (id int primary key)")
        conn.commit()
        conn.execute("insert into tx values (1)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert conn.execute("select count(*) from tx").fetchone() == (1,)  # own write
        conn.rollback()
        assert conn.execute("select count(*) from tx").fetchone() == (0,)
        conn.execute("insert into tx values (2)")
        conn.commit()
    with psycopg.connect(nyala_server.dsn) as other:
        assert other.execute("select id from tx").fetchall() == [(2,)]


def test_uncommitted_writes_are_invisible_to_other_sessions(nyala_server):
    with (
        psycopg.connect(nyala_server.dsn) as writer,
        psycopg.connect(nyala_server.dsn, autocommit=True) as reader,
    ):
        writer.execute("drop table if exists iso")
        writer.execute("create table iso (id int primary key)")
        writer.commit()
        writer.execute("insert into iso values (1)")
        assert reader.execute("select count(*) from iso").fetchone() == (0,)
        writer.commit()
        assert reader.execute("select count(*) from iso").fetchone() == (1,)


ERRORS = [
    ("insert into e values (1, 'x')", errors.UniqueViolation),
    ("select * from no_such_table", errors.UndefinedTable),
    ("select no_such_column from e", errors.UndefinedColumn),
    ("selec 1", errors.SyntaxError),
    ("insert into e (id) values (2)", errors.NotNullViolation),
    ("insert into e values (2147483648, 'x')", errors.NumericValueOutOfRange),
    ("insert into e values (3, 'abcdefghijk')", errors.StringDataRightTruncation),
    ("select 1 / 0", errors.DivisionByZero),
    ("select 1.5 / 0", errors.DivisionByZero),
]


@pytest.mark.parametrize(("sql", "error"), ERRORS, ids=[e.__name__ for _, e in ERRORS])
def test_errors_carry_their_sqlstate_and_change_nothing(conn, pg, sql, error):
    for connection in (conn, pg):
        _fresh(connection, "create table e (id int primary key, name varchar(10) not null)", "e")
        connection.execute("insert into e values (1, 'x')")
        with pytest.raises(error):
            connection.execute(sql)
        assert connection.execute("select id, name from e").fetchall() == [(1, "x")]
    conn.execute("select 1")  # the connection is still usable


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("create index i on e (lower(name))", errors.FeatureNotSupported),
        ("create table nokey (a int, auto_incrementing_id bigint)", errors.DuplicateColumn),
        ("create table fkey (f double precision primary key)", errors.InvalidTableDefinition),
        ("create table j (id int primary key, doc xml)", errors.FeatureNotSupported),
    ],
)
def test_what_kudu_cannot_store_is_refused(conn, sql, error):
    """Differs from PostgreSQL on purpose: Kudu's key types, Kudu's types, and the name
    Kudu reserves for the hidden key of a table without a primary key."""
    with pytest.raises(error):
        conn.execute(sql)


def test_failed_statement_writes_nothing_of_a_multi_row_insert(conn):
    _fresh(conn, "create table m (id int primary key)", "m")
    conn.execute("insert into m values (5)")
    with pytest.raises(errors.UniqueViolation):
        conn.execute("insert into m values (1), (2), (5), (6)")
    assert conn.execute("select id from m").fetchall() == [(5,)]


def test_syntax_error_reports_position(conn):
    with pytest.raises(errors.SyntaxError) as info:
        conn.execute("select 1 from where")
    assert info.value.diag.statement_position == "15"


def test_failed_transaction_block_refuses_until_rollback(nyala_server):
    with psycopg.connect(nyala_server.dsn) as conn:
        with pytest.raises(errors.UndefinedTable):
            conn.execute("select * from missing")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(errors.InFailedSqlTransaction):
            conn.execute("select 1")
        conn.rollback()
        assert conn.execute("select 1").fetchone() == (1,)


def test_set_show_reset(conn):
    conn.execute("set application_name = 'nyala-test'")
    assert conn.info.parameter_status("application_name") == "nyala-test"
    assert conn.execute("show application_name").fetchone() == ("nyala-test",)
    conn.execute("reset application_name")
    assert conn.execute("show application_name").fetchone() == ("",)
    assert conn.execute("show transaction isolation level").fetchone() == ("read committed",)
    with pytest.raises(errors.UndefinedObject):
        conn.execute("set no_such_setting = 1")


def test_now_is_the_transaction_start(nyala_server):
    with psycopg.connect(nyala_server.dsn) as conn:
        first = conn.execute("select now()").fetchone()[0]
        conn.execute("select 1")
        second = conn.execute("select now()").fetchone()[0]
        assert first == second and first.tzinfo is not None
        conn.commit()
        third = conn.execute("select now()").fetchone()[0]
        assert third >= first


def test_if_exists_and_if_not_exists(conn):
    conn.execute("drop table if exists maybe")
    conn.execute("create table if not exists maybe (id int primary key)")
    conn.execute("create table if not exists maybe (id int primary key)")
    with pytest.raises(errors.DuplicateTable):
        conn.execute("create table maybe (id int primary key)")
    conn.execute("drop table maybe")
    with pytest.raises(errors.UndefinedTable):
        conn.execute("drop table maybe")


def test_impala_type_names(conn):
    _fresh(conn, "create table imp (id tinyint primary key, s string, b binary)", "imp")
    conn.execute("insert into imp values (127, 'x', 'y')")
    with pytest.raises(errors.NumericValueOutOfRange):
        conn.execute("insert into imp values (128, 'x', 'y')")
    assert conn.execute("select id, s from imp").fetchall() == [(127, "x")]


def test_update_returning_and_defaults(conn):
    _fresh(conn, "create table r (id int primary key, n int default 7, s text)", "r")
    cur = conn.execute("insert into r (id, s) values (1, 'a'), (2, 'b') returning id, n")
    assert cur.fetchall() == [(1, 7), (2, 7)]
    assert cur.rowcount == 2
    cur = conn.execute("update r set n = n + 1 where id = 2 returning n, s")
    assert cur.fetchall() == [(8, "b")]
    cur = conn.execute("delete from r where id = 1 returning s")
    assert cur.fetchall() == [("a",)]


def test_portal_row_limit_with_named_cursor(nyala_server):
    with psycopg.connect(nyala_server.dsn) as conn:
        conn.execute("drop table if exists many")
        conn.execute("create table many (id int primary key)")
        conn.execute("insert into many select g from generate_series(1, 1000) s(g)")
        conn.commit()
        with conn.cursor() as cur:
            cur.execute("select id from many order by id")
            assert cur.fetchmany(3) == [(1,), (2,), (3,)]
            assert len(cur.fetchall()) == 997


def test_executemany_pipeline_is_all_or_nothing_like_postgresql(conn, pg):
    for connection in (conn, pg):
        _fresh(connection, "create table pipe (id int primary key)", "pipe")
        with pytest.raises(errors.UniqueViolation), connection.cursor() as cur:
            cur.executemany("insert into pipe values (%s)", [(1,), (2,), (2,), (3,)])
        assert connection.execute("select count(*) from pipe").fetchone() == (0,)


def test_prepared_statements_survive_psycopgs_deallocate_all(conn):
    _fresh(conn, "create table prep (id int primary key)", "prep")
    for i in range(8):  # past the prepare threshold: psycopg holds server-side statements
        conn.execute("insert into prep values (%s)", (i,))
    conn.execute("drop table prep")  # psycopg follows a DROP with DEALLOCATE ALL
    _fresh(conn, "create table prep (id int primary key)", "prep")
    for i in range(8):
        conn.execute("insert into prep values (%s)", (i,))
    assert conn.execute("select count(*) from prep").fetchone() == (8,)
