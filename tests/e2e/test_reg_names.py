"""reg* answers on nyala as on PostgreSQL 15: pg_typeof and pg_sequences.data_type described
as regtype (2206) and sent in binary as the type's OID; a relation the search path does not
find by its bare name (``public.pg_am`` beside ``pg_catalog.pg_am``) shown schema-qualified,
so its name reads back as its own OID."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists regn_t",
    "drop table if exists public.pg_am",
    "drop sequence if exists regn_s",
    "create table regn_t (a int, b text, c bigint)",
    "insert into regn_t values (1, 'x', 2)",
    "create sequence regn_s",
    "create table public.pg_am (a int)",
]

DESCRIBED_CASES = [
    "select pg_typeof(1), pg_typeof('a'::text), pg_typeof(1.5)",
    "select pg_typeof(a), pg_typeof(b), pg_typeof(c), a from regn_t",
    "select pg_typeof(a) as t from regn_t",
    "select pg_typeof(a)::text from regn_t",
    "select pg_typeof(1) union all select pg_typeof(2::bigint)",
    "select sequencename, data_type from pg_sequences where sequencename = 'regn_s'",
    "select s.data_type from pg_catalog.pg_sequences s where s.sequencename = 'regn_s'",
    "select data_type from information_schema.columns where table_name = 'regn_t' order by 1",
    "select data_type from information_schema.sequences where sequence_name = 'regn_s'",
    "select pg_typeof(1) = 'integer'::regtype, 'text'::regtype <> pg_typeof(1)",
    "select a from regn_t where pg_typeof(a) = 'int4'::regtype and pg_typeof(b) <> 'int4'::regtype",
    "select pg_typeof(c) = to_regtype('bigint') from regn_t",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair
        pair.run("drop table public.pg_am", "drop table regn_t", "drop sequence regn_s")


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", DESCRIBED_CASES)
def test_regtype_results_as_on_postgresql(pair, sql, binary):
    pair.check(sql, binary=binary)
    pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)


NAME_CASES = [
    "select 'public.pg_am'::regclass, 'pg_catalog.pg_am'::regclass, 'pg_am'::regclass",
    "select ('public.pg_am'::regclass)::text, ('pg_am'::regclass)::text",
    "select c.oid::regclass, c.oid::regclass::text from pg_catalog.pg_class c"
    " where c.relname = 'pg_am' order by c.relnamespace::regnamespace::text",
    "select to_regclass('public.pg_am') = 'public.pg_am'::regclass,"
    " to_regclass('pg_am') = 'pg_catalog.pg_am'::regclass",
    "select 'regn_t'::regclass, ('regn_t'::regclass)::text",
]


@pytest.mark.parametrize("sql", NAME_CASES)
def test_shadowed_relation_names_as_on_postgresql(pair, sql):
    pair.check(sql)
    pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)


def test_shadowed_relation_sent_as_its_own_oid(pair):
    """In binary each regclass goes out as the OID of the relation it names, which differs
    between the servers only by allocation: compare each with its own server's oid."""
    sql = (
        "select c.oid::regclass, c.oid, n.nspname from pg_catalog.pg_class c"
        " join pg_catalog.pg_namespace n on n.oid = c.relnamespace"
        " where c.relname = 'pg_am' order by n.nspname"
    )

    def read(conn):
        rows = conn.cursor(binary=True).execute(sql).fetchall()
        return [(int.from_bytes(reg, "big") == oid, nspname) for reg, oid, nspname in rows]

    assert pair.same(read, sql) == [(True, "pg_catalog"), (True, "public")]
