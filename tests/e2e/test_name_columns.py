"""Catalog columns of type name (pg_class.relname, information_schema's sql_identifier
columns) and current_user beside them are described as name (19), as PostgreSQL 15
describes them, not as text; a cast to text and a user table's column stay text."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists namecol_t",
    "create table namecol_t (id int primary key, relname text)",
    "insert into namecol_t values (1, 'pg_class')",
]
CASES = [
    "select relname from pg_class where relname = 'pg_class'",
    "select c.relname as r, n.nspname from pg_class c"
    " join pg_namespace n on n.oid = c.relnamespace where c.relname = 'pg_class'",
    "select relname::text from pg_class where relname = 'pg_class'",
    "select attname, typname from pg_attribute a join pg_type t on t.oid = a.atttypid"
    " where attrelid = 'pg_class'::regclass and attnum = 1",
    "select table_schema, table_name, column_name from information_schema.columns"
    " where table_name = 'namecol_t' order by ordinal_position",
    "select current_user, current_database(), relname from pg_class where relname = 'pg_type'",
    "select c.relname, t.relname from pg_class c join namecol_t t on t.relname = c.relname",
    "select relname from pg_class where relname = 'pg_class' union all select 'x'",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", CASES)
def test_name_columns_described_as_on_postgresql(pair, sql, binary):
    pair.check(sql, binary=binary)
    pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)
