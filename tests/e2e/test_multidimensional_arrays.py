"""Arrays of two and more dimensions, on nyala as on PostgreSQL 15: psycopg's lists of lists
as ``int[]``/``text[]`` parameters (text and binary, prepared or not), in casts of array
text, in ``= ANY(...)``, and ragged input refused with array_in's 22P02 and DETAIL."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def conns(nyala_server, postgres_server):
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as nyala,
        psycopg.connect(postgres_server.dsn, autocommit=True) as postgres,
    ):
        for conn in (nyala, postgres):
            conn.execute("drop table if exists mda_t")
            conn.execute("create table mda_t (id int primary key, v int, s text)")
            conn.execute("create index mda_t_v on mda_t (v)")
            conn.execute(
                "insert into mda_t select g, g * 10, 's' || g from generate_series(1, 9) g"
            )
        yield nyala, postgres


def _outcome(conn: psycopg.Connection, sql: str, params: tuple, binary: bool) -> object:
    try:
        return conn.execute(sql, params, binary=binary, prepare=binary).fetchall()
    except psycopg.Error as exc:
        return exc.sqlstate, exc.diag.message_primary, exc.diag.message_detail


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
def test_multidimensional_arrays_as_on_postgresql(conns, sql, params, binary):
    nyala, postgres = conns
    assert _outcome(nyala, sql, params, binary) == _outcome(postgres, sql, params, binary)
