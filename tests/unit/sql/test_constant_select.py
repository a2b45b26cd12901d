from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.planner.binder import bind_query
from sql.planner.constant_select import echoed_parameters, is_constant


def _constant(sql, catalog, declared=()):
    return is_constant(bind_query(parser.parse(sql)[0].ast, catalog, list(declared)))


@pytest.mark.parametrize(
    "sql",
    [
        "select 1",
        "select 1 as one, 'x', null, true",
        "select 2147483647::int4 + 1",
        "select ' 12 '::int",
        "select (2::int8 * 3) > 5, 1.5::numeric(10,2), 'a' || 'b'",
        "select -7 % 3, 7 / 2, 1 <> 2 and not false, 1 is null",
        "select cast('12' as bigint), '1'::smallint, 't'::bool, 3::text, 4::varchar",
    ],
)
def test_literals_casts_and_operators_are_constant(sql, catalog):
    assert _constant(sql, catalog)


@pytest.mark.parametrize(
    "sql",
    [
        "select now()",
        "select random()",
        "select version()",
        "select current_user",
        "select current_schema()",
        "select current_setting('TimeZone')",
        "select nextval('s')",
        "select $1::int8",
        "select a from t",
        "select 1 from t",
        "select 1 where false",
        "select 1 limit 0",
        "select 1 union select 2",
        "select (select 1)",
        "select 1 order by 1",
        "select distinct 1",
        "select '2020-01-01'::date",
        "select '1 day'::interval",
        "select '2020-01-01'::timestamptz",
        "select 1.5::float8",
        "select 'abcd'::varchar(2)",
        "select length('abc')",
        "values (1)",
    ],
)
def test_reads_settings_tables_or_volatile_functions_are_not(sql, catalog):
    try:
        assert not _constant(sql, catalog, [20] if "$1" in sql else [])
    except Exception as error:  # a statement the binder refuses is no constant either
        assert "does not exist" in str(error) or "syntax" in str(error), error


class _NoDuckDB:
    def cursor(self):
        raise AssertionError("DuckDB was asked again")


def _compiled(session, sql):
    from sql.planner.compiled_query import compile_query

    return compile_query(session._runner.bind(parser.parse(sql)[0].ast), session._facts)


def _rows(session, compiled):
    txn = session._db.engine.begin()
    try:
        columns, batches = session._runner.run(compiled, txn, [], None)
        return [(c.name, c.type_oid) for c in columns], [r for b in batches for r in b.to_pylist()]
    finally:
        txn.rollback()


def test_the_first_answer_is_kept_and_given_without_duckdb(session):
    compiled = _compiled(session, "select 1 as a, 'x' || 'y' as b, 2::int8 * 3 as c")
    assert compiled.constant and not compiled.is_short_with([])
    first = _rows(session, compiled)
    assert first == ([("a", 23), ("b", 25), ("c", 20)], [{"a": 1, "b": "xy", "c": 6}])
    assert compiled.is_short_with([])  # runs on the session's own thread from now on
    session._runner._duck = _NoDuckDB()
    assert _rows(session, compiled) == first
    assert _rows(session, compiled) == first


def test_an_error_is_not_kept(session):
    from storage.errors import DbError

    compiled = _compiled(session, "select 2147483647::int4 + 1")
    for _ in range(2):
        with pytest.raises(DbError) as info:
            _rows(session, compiled)
        assert info.value.sqlstate == "22003"
        assert compiled.constant_rows is None


def test_a_query_reading_the_clock_is_never_kept(session):
    compiled = _compiled(session, "select 1, now()")
    assert not compiled.constant


@pytest.mark.parametrize(
    ("sql", "declared", "echoed"),
    [
        ("select $1::int8", [], (1,)),
        ("select $1", [], (1,)),
        ("select $2::int4 as x, $1", [25, 23], (2, 1)),
        ("select $1::int8", [21], (1,)),  # a widening cast keeps the value
        ("select $1::int4", [20], None),  # a narrowing one may not
        ("select $1::numeric", [], None),
        ("select $1::varchar(3)", [], None),
        ("select $1 + 1", [20], None),
        ("select $1 from t", [20], None),
        ("select 1", [], None),
    ],
)
def test_echoed_parameters(sql, declared, echoed, catalog):
    bound = bind_query(parser.parse(sql)[0].ast, catalog, declared)
    assert echoed_parameters(bound) == echoed


def test_echoed_parameters_need_no_duckdb_once_described(session):
    compiled = _compiled(session, "select $1::int8 as a, $2")
    session._runner.describe(compiled)
    assert compiled.is_short_with([5, "x"])
    session._runner._duck = _NoDuckDB()
    txn = session._db.engine.begin()
    columns, batches = session._runner.run(compiled, txn, [5, None], None)
    txn.rollback()
    assert [(c.name, c.type_oid) for c in columns] == [("a", 20), ("?column?", 25)]
    assert [r for b in batches for r in b.to_pylist()] == [{"a": 5, "?column?": None}]
