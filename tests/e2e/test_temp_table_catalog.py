"""Temporary tables in the system catalogs, beside PostgreSQL 15: listed under their own
name in the session's ``pg_temp_<n>`` schema (pg_class, pg_namespace, pg_constraint,
pg_sequences, information_schema), found by ``'name'::regclass``, ``pg_temp.name`` and
psql's ``\\d``, visible only to their session.  The schema's number is the only
difference (PostgreSQL numbers it by backend slot)."""

from __future__ import annotations

import re

import psycopg
import pytest
import sqlalchemy

pytestmark = pytest.mark.e2e

SCRIPT = r"""
create table tc_perm (id int primary key, v text);
create temp table tc_perm (id serial primary key, w int check (w > 0), u int unique);
create temp table tc_kid (id int primary key, p int references tc_perm (id));
create index tc_kid_p on tc_kid (p);
select table_schema like 'pg\_temp\_%', table_name, table_type from information_schema.tables
  where table_name in ('tc_perm', 'tc_kid') order by 1, 2;
select relname, relkind, relpersistence from pg_class
  where relname like 'tc\_perm%' or relname like 'tc\_kid%' order by 1, 2, 3;
select conname, contype, connamespace = pg_my_temp_schema() from pg_constraint
  where conrelid in ('tc_perm'::regclass, 'tc_kid'::regclass) order by 1;
select 'tc_perm'::regclass::oid = 'pg_temp.tc_perm'::regclass::oid,
  'tc_perm'::regclass::oid = 'public.tc_perm'::regclass::oid;
select pg_table_is_visible('public.tc_perm'::regclass), pg_table_is_visible('tc_perm'::regclass);
select 'public.tc_perm'::regclass, 'tc_kid_p'::regclass, pg_get_indexdef('tc_kid_p'::regclass);
select pg_is_other_temp_schema(pg_my_temp_schema());
select schemaname like 'pg\_temp\_%', sequencename, last_value from pg_sequences
  where sequencename like 'tc\_%';
insert into tc_perm (w, u) values (1, 1);
select sequencename, last_value from pg_sequences where sequencename like 'tc\_%';
\d tc_perm
\d tc_kid
\d public.tc_perm
\dt tc_*
\di tc_*
drop table tc_kid;
drop table tc_perm;
\d tc_perm
drop table tc_perm;
"""


def _same_schema_number(text: str) -> str:
    return re.sub(r"pg_temp_\d+", "pg_temp_N", text)


def test_psql_sees_a_temp_table_as_postgresql_does(nyala_server, postgres_server):
    ours, theirs = (s.psql(["-X"], SCRIPT) for s in (nyala_server, postgres_server))
    assert ours.returncode == theirs.returncode == 0
    assert _same_schema_number(ours.stdout) == _same_schema_number(theirs.stdout)
    assert ours.stderr == theirs.stderr == ""


def test_another_session_lists_it_but_cannot_name_it(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        with (
            psycopg.connect(server.dsn, autocommit=True) as owner,
            psycopg.connect(server.dsn, autocommit=True) as other,
        ):
            owner.execute("create temp table tc_private (id int)")
            assert other.execute("select pg_my_temp_schema()").fetchone() == (0,)
            row = other.execute(
                "select n.nspname like 'pg\\_temp\\_%', pg_table_is_visible(c.oid),"
                " pg_is_other_temp_schema(n.oid) from pg_class c"
                " join pg_namespace n on n.oid = c.relnamespace where c.relname = 'tc_private'"
            ).fetchall()
            assert row == [(True, False, True)], server
            assert other.execute("select to_regclass('tc_private')").fetchone() == (None,)
            assert owner.execute("select to_regclass('tc_private')::text").fetchone() == (
                "tc_private",
            )


def test_sqlalchemy_lists_temp_tables(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        url = server.url.replace("postgresql://", "postgresql+psycopg://", 1)
        engine = sqlalchemy.create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(sqlalchemy.text("create temp table tc_alchemy (id int primary key)"))
                inspector = sqlalchemy.inspect(conn)
                assert "tc_alchemy" in inspector.get_temp_table_names(), server
                assert "tc_alchemy" not in inspector.get_table_names(), server
                assert [c["name"] for c in inspector.get_columns("tc_alchemy")] == ["id"]
                assert inspector.get_pk_constraint("tc_alchemy")["constrained_columns"] == ["id"]
        finally:
            engine.dispose()
