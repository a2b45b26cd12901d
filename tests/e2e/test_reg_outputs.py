"""reg* values in a select list, on nyala as on PostgreSQL 15: described as regclass (2205),
regtype, regproc and regnamespace, shown by name, and sorted by OID (not by the name shown)
when ORDER BY names them by position or alias, DISTINCT or not."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists rego_t",
    "create table rego_t (id int primary key)",
]
NAMES = "relname in ('rego_t', 'pg_class', 'pg_type')"

CASES = [
    "select 'rego_t'::regclass",
    f"select oid::regclass from pg_class where {NAMES} order by 1",
    f"select oid::regclass from pg_class where {NAMES} order by 1 desc",
    f"select oid::regclass as r from pg_class where {NAMES} order by r desc",
    f"select distinct oid::regclass as r from pg_class where {NAMES} order by r",
    f"select oid::regclass::text from pg_class where {NAMES} order by 1",
    "select c::regclass from (values ('rego_t'), ('pg_class')) v(c) order by 1",
    "select 'int4'::regtype, 'now'::regproc, 'public'::regnamespace",
    "select relnamespace::regnamespace from pg_class where relname = 'rego_t'",
    "select 'rego_t'::regclass union select 'pg_class'::regclass order by 1",
    "select to_regclass('rego_t'), to_regclass('nope')",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", CASES)
def test_reg_outputs_as_on_postgresql(pair, sql):
    pair.check(sql)
    pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)


OID_CASES = [
    "select 5::oid",
    "select 4294967295::oid, null::oid",
    "select (7::oid) as x",
    "select 'rego_t'::regclass::oid = oid from pg_class where relname = 'rego_t'",
    "select oid from pg_class where relname = 'pg_class'",
    "select relnamespace::regnamespace::oid from pg_class where relname = 'rego_t'",
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", OID_CASES)
def test_oid_described_and_sent_as_on_postgresql(pair, sql, binary):
    """``::oid`` outside a catalog query is described as oid (26) and, in binary, sent
    as PostgreSQL's unsigned 32-bit value, not as int8."""
    pair.check(sql, binary=binary)
    pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)


BINARY_CASES = [c for c in CASES if "::text" not in c and "regproc" not in c] + [
    "select 'int4[]'::regtype, 'varchar'::regtype, 'timestamptz'::regtype",
]


@pytest.mark.parametrize("sql", BINARY_CASES)
def test_reg_outputs_sent_in_binary_as_their_oids(pair, sql):
    """Binary sends the 4-byte OID, as regclass_send does.  A user table's OID differs
    between the two servers, so each server's is checked against its own ``::oid``."""
    oid_sql = sql
    for spelling in ("::regclass", "::regtype", "::regnamespace", "regclass('rego_t')"):
        oid_sql = oid_sql.replace(spelling, spelling + "::oid")
    oid_sql = oid_sql.replace("regclass('nope')", "regclass('nope')::oid")

    def read(conn):
        sent = [
            tuple(None if v is None else int.from_bytes(v, "big") for v in row)
            for row in conn.execute(sql, binary=True).fetchall()
        ]
        return sent == [tuple(row) for row in conn.execute(oid_sql).fetchall()]

    assert read(pair.postgres), oid_sql
    pair.same(read, sql)


def test_binary_reg_oids_follow_ddl_in_the_session(pair):
    """The names a session has read back to OIDs are forgotten when the catalog changes: a
    table dropped and made again is sent with its new OID, the same query run again."""
    sql = "select 'rego_again'::regclass, relname::regclass from pg_class where relname = 'rego_again'"
    oid_sql = "select 'rego_again'::regclass::oid, oid from pg_class where relname = 'rego_again'"

    def read(conn):
        sent = []
        for _ in range(2):
            conn.execute("drop table if exists rego_again")
            conn.execute("create table rego_again (id int primary key)")
            for _ in range(2):
                row = conn.execute(sql, binary=True, prepare=True).fetchone()
                expected = conn.execute(oid_sql).fetchone()
                sent.append(tuple(int.from_bytes(v, "big") for v in row) == tuple(expected))
        conn.execute("drop table rego_again")
        return sent

    assert pair.same(read, sql) == [True] * 4


@pytest.mark.parametrize("prepare", [False, True])
def test_catalog_query_with_new_parameters_each_run(pair, prepare):
    """A catalog query run again with other parameter values answers for those values
    (its DuckDB text is kept per set of values), and ``1`` stays apart from ``true``."""
    sql = "select relname, %s::text from pg_class where relname = %s"
    for params in (("a", "pg_class"), ("b", "pg_type"), ("a", "pg_class"), ("c", "nope")):
        pair.check(sql, params, prepare=prepare)
    for value in (True, 1, "1", 1.5, None):
        pair.check(
            "select %s::text from pg_class where relname = 'pg_class'", (value,), prepare=prepare
        )
