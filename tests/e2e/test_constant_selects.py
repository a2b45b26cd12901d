"""SELECTs whose rows their text fixes (``constant_select``): nyala keeps DuckDB's first
answer and gives it again without DuckDB.  Each is checked against PostgreSQL 15 (rows,
described types, SQLSTATEs) simple and prepared, text and binary, several times, so the
kept answer is compared as well as the first; and against the general path (the same
expressions read through a subquery, which DuckDB runs every time)."""

from __future__ import annotations

import pytest
from psycopg.types.numeric import Int2, Int4, Int8

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

CASES = [
    "select 1",
    "select 1 as one, 'x' as s, null as n, true as t",
    "select 2::int8 * 3 > 5, 1.5::numeric(10,2), 'a' || 'b'",
    "select -7 % 3, 7 / 2, 1 <> 2 and not false, 1 is null",
    "select cast('12' as bigint), '1'::smallint, 't'::bool, 3::text",
    "select 1.25 * 4, 10::numeric / 4, 9223372036854775807",
    "select null::int + 1, null::text || 'a', null = null",
    "select 2147483647::int4 + 1",
    "select (-2147483648)::int4 * -1",
    "select 9223372036854775807::int8 + 1",
    "select 32767::int2 + 1::int2",
    "select 1 / 0",
    "select 1::numeric / 0",
    "select 70000::int2",
    "select 99999.5::numeric(5,0)",
    "select ' 12 '::int, '-0'::int8, 'yes'::bool",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("prepare", [False, True])
@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql", CASES)
def test_constant_select_as_on_postgresql(pair, sql, binary, prepare):
    for _ in range(3):
        if isinstance(pair.check(sql, binary=binary, prepare=prepare), list):
            pair.same(
                lambda conn: [(d.name, d.type_code) for d in conn.execute(sql).description], sql
            )


@pytest.mark.parametrize("sql", CASES)
def test_kept_answer_is_the_general_paths(pair, sql):
    """The answer given again equals DuckDB's for the same values through a subquery."""
    conn = pair.nyala
    general = f"select * from ({sql}) as s"
    expected = outcome(conn, general)
    for prepare in (False, True):
        for _ in range(3):
            assert outcome(conn, sql, prepare=prepare) == expected, sql
    if isinstance(expected, list):  # types only: PostgreSQL names a bare true bool on top only
        assert [d.type_code for d in conn.execute(sql).description] == [
            d.type_code for d in conn.execute(general).description
        ]


@pytest.mark.parametrize(
    "sql", ["select now()", "select random()", "select clock_timestamp()::text"]
)
def test_volatile_and_stable_functions_are_evaluated_each_time(pair, sql):
    conn = pair.nyala
    seen = {conn.execute(sql).fetchone()[0] for _ in range(3)}
    assert len(seen) == 3, sql


PARAMETER_CASES = [
    ("select %s::int8", [5]),
    ("select %s::int8", [None]),
    ("select %s::int8 as n", [-9223372036854775808]),
    ("select %s", ["x"]),
    ("select %s", [""]),
    ("select %s::text, %s::bool, %s::int2", ["é", True, -32768]),
    ("select %s::int4, %s::int4", [Int4(7), Int4(-2147483648)]),
    ("select %s::int4", [Int4(2**40)]),
    ("select %s::int8, %s::int4, %s::int8", [Int2(-3), Int2(32767), Int4(-2147483648)]),
    ("select %s::int4, %s::int2", [Int8(2**40), Int4(40000)]),
    ("select %s::int2", [Int2(70000)]),
    ("select %s, %s", [Int8(1), "a"]),
    ("select %s::bool", ["maybe"]),
]


@pytest.mark.parametrize("prepare", [False, True])
@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), PARAMETER_CASES)
def test_echoed_parameters_as_on_postgresql(pair, sql, params, binary, prepare):
    for _ in range(3):
        if isinstance(pair.check(sql, params, binary=binary, prepare=prepare), list):
            pair.same(
                lambda conn: [(d.name, d.type_code) for d in conn.execute(sql, params).description],
                sql,
            )


@pytest.mark.parametrize(("sql", "params"), PARAMETER_CASES)
def test_echoed_parameters_are_the_general_paths(pair, sql, params):
    conn = pair.nyala
    general = f"select * from ({sql}) as s"
    for binary in (False, True):
        expected = outcome(conn, general, params, binary=binary)
        for prepare in (False, True):
            for _ in range(3):
                assert outcome(conn, sql, params, binary=binary, prepare=prepare) == expected
