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
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), CASES)
def test_multidimensional_arrays_as_on_postgresql(conns, sql, params, binary):
    nyala, postgres = conns
    assert _outcome(nyala, sql, params, binary) == _outcome(postgres, sql, params, binary)
