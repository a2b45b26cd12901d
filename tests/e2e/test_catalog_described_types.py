"""The types catalog columns are described as, on nyala as on PostgreSQL 15: "char" columns
(relkind, typtype, ...) as "char" (18), information_schema's character_data and yes_or_no
(domains over varchar) as varchar (1043), names as name (19); a cast to text, or a user
table's column of the same name, as text (25).  Values agree in text and binary."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists described_t",
    "create table described_t (k int primary key, relkind text, data_type text)",
    "insert into described_t values (1, 'x', 'y')",
]
CASES = [
    "select relkind, relpersistence, relname from pg_class where relname = 'described_t'",
    "select relkind::text, relkind as kind from pg_class where relname = 'described_t'",
    "select typtype, typcategory from pg_type where typname = 'int4'",
    "select attstorage from pg_attribute where attrelid = 'described_t'::regclass and attnum = 1",
    "select contype from pg_constraint where conrelid = 'described_t'::regclass",
    "select distinct prokind, provolatile from pg_proc where proname = 'lower'",
    "select table_type, table_name, is_insertable_into from information_schema.tables "
    "where table_name = 'described_t'",
    "select column_name, data_type, is_nullable, ordinal_position from information_schema.columns "
    "where table_name = 'described_t' order by ordinal_position",
    "select relkind, data_type from described_t",
    "select c.relkind, d.data_type from pg_class c, described_t d where c.relname = 'described_t'",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


def _described(conn: psycopg.Connection, sql: str, binary: bool) -> tuple:
    cursor = conn.execute(sql, binary=binary)
    return [(c.name, c.type_code) for c in cursor.description], cursor.fetchall()


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", CASES)
def test_described_as_postgres(pair, sql, binary):
    pair.same(lambda conn: _described(conn, sql, binary), sql)
