"""ALTER TABLE through psycopg and psql: durable across restart and kill -9 (WAL records from
before the change replay into the right columns), prepared statements, the catalog views."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _rows(dsn: str, sql: str) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
def test_schema_changes_survive_kill9_and_restart(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table m (id int primary key, a text, b int) partition by hash (id) partitions 3"
        )
        conn.execute("insert into m select g, 'flushed', g from generate_series(1, 30) g")
        conn.execute("checkpoint")
        conn.execute("insert into m select g, 'logged', g from generate_series(31, 40) g")
        conn.execute("update m set b = -1 where id in (1, 31)")
        conn.execute("alter table m add column c int not null default 7")
        conn.execute("alter table m drop column b")
        conn.execute("alter table m rename column a to origin")
        conn.execute("insert into m values (41, 'after', 8)")
        conn.execute("alter table m add column b text default 'new b'")
        conn.execute("update m set b = 'set' where id = 2")
    expected = _rows(server.dsn, "select * from m order by id")
    assert expected[0] == (1, "flushed", 7, "new b")
    assert expected[1] == (2, "flushed", 7, "set")
    assert expected[30] == (31, "logged", 7, "new b")
    assert expected[40] == (41, "after", 8, "new b")
    server.kill9()
    server.start()
    assert _rows(server.dsn, "select * from m order by id") == expected
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("checkpoint")
    server.stop()
    server.start()
    assert _rows(server.dsn, "select * from m order by id") == expected
    assert _rows(server.dsn, "select count(*) from m where c = 7 and b = 'new b'") == [(39,)]


def test_prepared_statements_follow_the_new_shape(nyala_server):
    """psycopg forgets its prepared statements after an ALTER and prepares them again."""
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists pa")
        conn.execute("create table pa (id int primary key, v text)")
        conn.execute("insert into pa values (1, 'x')")
        for _ in range(3):
            conn.execute("select * from pa where id = %s", (1,), prepare=True).fetchall()
        conn.execute("alter table pa rename column v to w")
        cur = conn.execute("select * from pa where id = %s", (1,), prepare=True)
        assert [d.name for d in cur.description] == ["id", "w"]
        conn.execute("alter table pa add column n int default 5")
        cur = conn.execute("select * from pa where id = %s", (1,), prepare=True)
        assert cur.fetchall() == [(1, "x", 5)]
        conn.execute("drop table pa")


def test_catalog_shows_the_new_shape(nyala_server, psql):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists shape")
        conn.execute("create table shape (id int primary key, gone text, kept int)")
        conn.execute("alter table shape drop column gone")
        conn.execute("alter table shape add column added varchar(5) not null default 'd'")
        columns = conn.execute(
            "select column_name, data_type, is_nullable, column_default "
            "from information_schema.columns where table_name = 'shape' order by ordinal_position"
        ).fetchall()
    assert columns == [
        ("id", "integer", "NO", None),
        ("kept", "integer", "YES", None),
        ("added", "character varying", "NO", "'d'::character varying"),
    ]
    described = nyala_server.psql(["-c", r"\d shape"]).stdout
    assert "added" in described and "gone" not in described


ATTNUM_SCENARIO = [
    "drop table if exists renumbered",
    "create table renumbered (id int primary key, gone text, kept int, later text)",
    "comment on column renumbered.kept is 'kept column'",
    "alter table renumbered drop column gone",
    "alter table renumbered add column added int",
]
ATTNUM_QUERIES = [
    "select attnum, attname, attisdropped, atttypid from pg_attribute "
    "where attrelid = 'renumbered'::regclass and attnum > 0 order by attnum",
    "select relnatts from pg_class where relname = 'renumbered'",
    "select column_name, ordinal_position from information_schema.columns "
    "where table_name = 'renumbered' order by ordinal_position",
    "select a.attname, col_description(a.attrelid, a.attnum) from pg_attribute a "
    "where a.attrelid = 'renumbered'::regclass and a.attnum > 0 and not a.attisdropped "
    "order by a.attnum",
]


def test_attnums_stay_put_after_drop_column_as_in_postgresql(nyala_server, postgres_server):
    """PostgreSQL never renumbers columns: a dropped one leaves an attisdropped row behind, and
    the row description's column numbers keep pointing at the same columns."""
    answers = []
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for sql in ATTNUM_SCENARIO:
                conn.execute(sql)
            rows = [conn.execute(sql).fetchall() for sql in ATTNUM_QUERIES]
            cur = conn.execute("select later, id, added from renumbered")
            rows.append([cur.pgresult.ftablecol(i) for i in range(3)])
            answers.append(rows)
    ours, theirs = answers
    for sql, mine, reference in zip([*ATTNUM_QUERIES, "ftablecol"], ours, theirs, strict=True):
        assert mine == reference, sql
