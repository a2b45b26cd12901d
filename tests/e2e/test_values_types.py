"""An untyped literal in a VALUES column whose other rows are json, jsonb or arrays, on
nyala as on PostgreSQL 15: it takes their type (``'{}'`` beside 2-D ``int[]`` is an empty
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
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", CASES)
def test_values_column_types_as_on_postgresql(pair, sql, binary):
    pair.check(sql, binary=binary)


def test_one_and_two_dimensions_in_one_column_is_0a000(pair):
    sql = "select * from (values ('{{1,2},{3,4}}'::int[]), ('{5,6}')) v(a)"
    assert outcome(pair.nyala, sql) == "0A000"
    assert isinstance(outcome(pair.postgres, sql), list)
    assert pair.nyala.execute("select 1").fetchall() == [(1,)]
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="2 dimensions"):
        pair.nyala.execute(sql)
