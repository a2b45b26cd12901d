"""Arrays of two and more dimensions, on nyala as on PostgreSQL 15: psycopg's lists of lists
as ``int[]``/``text[]`` parameters (text and binary, prepared or not), in casts of array
text, in ``= ANY(...)``, and ragged input refused with array_in's 22P02 and DETAIL."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e


SETUP = [
    "drop table if exists mda_t",
    "create table mda_t (id int primary key, v int, s text)",
    "create index mda_t_v on mda_t (v)",
    "insert into mda_t select g, g * 10, 's' || g from generate_series(1, 9) g",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


CASES = [
    ("select %s::text[]", ([["a", None], ["c", "d"]],)),
    ("select %s::int[]", ([[1, 2], [3, 4]],)),
    ("select %s::int[]", ([[[1], [2]], [[3], [4]]],)),
    ("select %s::bigint[], %s::text[]", ([[1, 2]], [["x"], ["y"]])),
    ("select cardinality(%s::int[])", ([[1, 2], [3, 4]],)),
    ("select 3 = any(%s::int[])", ([[1, 2], [3, 4]],)),
    ("select 3 = any(%s)", ([[1, 2], [3, 4]],)),
    ("select 'c' = any(%s)", ([["a", None], ["c", "d"]],)),
    ("select 5 <> all(%s)", ([[1, 2], [3, 4]],)),
    ("select 3 = any(%s)", ([1, 2, 3],)),
    ("select %s::int[]", ([[1, 2], [3]],)),
    ("select %s::int[]", ([[1, 2], None],)),
    ("select %s::text[]", ([[[]]],)),
    ("select '{{1,2},{3,4}}'::int[]", ()),
    ("select 3 = any('{{1,2},{3,4}}'::int[])", ()),
    ("select 9 = any('{{1,2},{3,4}}'::int[])", ()),
    ("select '{{1,2},{3}}'::int[]", ()),
    ("select '{{}}'::int[]", ()),
    ("select '{}'::int[]", ()),
    ("select id from mda_t where id = any(%s) order by id", ([[1, 2], [3, 4]],)),
    ("select id from mda_t where v = any(%s) order by id", ([[10, 20], [30, 40]],)),
    ("select id from mda_t where s = any(%s) order by id", ([["s1", "s2"], ["s3", None]],)),
    ("select id from mda_t where id <> all(%s) and id < 6 order by id", ([[1, 2], [3, 4]],)),
    ("select id from mda_t where id = any(%s::int[]) order by id", ([[1, 2], [3, 4]],)),
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), CASES)
def test_multidimensional_arrays_as_on_postgresql(pair, sql, params, binary):
    pair.check(sql, params, binary=binary, prepare=binary, messages=True)
