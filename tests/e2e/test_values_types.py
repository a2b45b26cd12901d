"""An untyped literal in a VALUES column or a UNION's output column whose other rows are
json, jsonb or arrays, on nyala as on PostgreSQL 15: it takes their type (``'{}'`` beside 2-D ``int[]`` is an empty
array, a jsonb literal is normalised).  A 1-D literal beside 2-D arrays, which DuckDB's
fixed-depth lists cannot hold in one column, is refused with 0A000, never 22P02 or XX000."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

CASES = [
    "select * from (values ('{{1,2},{3,4}}'::int[]), ('{}')) v(a)",
    "select * from (values ('{1,2}'::int[]), ('{}')) v(a)",
    "values ('{}'), ('{{1,2},{3,4}}'::int[])",
    "select * from (values ('{{1,2},{3,4}}'::int[]), ('{{5,6}}')) v(a)",
    "select * from (values ('{{1,2},{3,4}}'::int[]), ('{{5,6}}'::int[]), ('{}')) v(a)",
    "select * from (values ('{{1,2},{3,4}}'::int[]), (null)) v(a)",
    "values ('{}'::text[]), ('{a}')",
    "values ('x'), ('{1}'::int[])",
    'select a::text from (values (null::jsonb), (\'{"b":1,"a":1}\')) v(a) order by 1',
    'values (null::json), (\'{"b":1,  "a":1}\')',
    "select 1 in (values (1), (2))",
    'select null::jsonb union all select \'{"b":1,"a":1}\'',
    'select \'{"b":1,"a":1}\' union all select null::jsonb',
    'select 1, null::jsonb union all select 2, \'{"b":1,"a":1}\' order by 1',
    "select '{1}'::int[] as a union select '{}' union select '{2}' order by 1",
    "select '{}' union all select '{1}'::int[]",
    "select 'a' union select 'b' order by 1",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", CASES)
def test_values_column_types_as_on_postgresql(pair, sql, binary):
    if isinstance(pair.check(sql, binary=binary), list):
        pair.same(lambda conn: [(d.name, d.type_code) for d in conn.execute(sql).description], sql)


def test_one_and_two_dimensions_in_one_column_is_0a000(pair):
    sql = "select * from (values ('{{1,2},{3,4}}'::int[]), ('{5,6}')) v(a)"
    assert outcome(pair.nyala, sql) == "0A000"
    assert isinstance(outcome(pair.postgres, sql), list)
    assert pair.nyala.execute("select 1").fetchall() == [(1,)]
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="2 dimensions"):
        pair.nyala.execute(sql)
