from __future__ import annotations

import datetime as dt

import pytest

from sql.frontend import parser
from sql.planner.binder import bind_query
from sql.planner.pushdown import plan_scans
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.predicate import PredicateKind
from tests.unit.sql.conftest import CatalogDouble, make_table


@pytest.fixture
def cat() -> CatalogDouble:
    return CatalogDouble(
        [
            make_table(
                1,
                "t",
                [("a", t.INT32), ("b", t.STRING), ("c", t.DOUBLE), ("d", t.DATE)],
            ),
            make_table(2, "u", [("a", t.INT32), ("x", t.INT64)]),
        ]
    )


def _plans(cat, sql):
    return plan_scans(bind_query(parser.parse(sql)[0].ast, cat))


def _pushed(plan):
    return [p.sql() for p in plan.predicates]


def test_comparisons_between_in_null_tests_and_prefix_are_pushed(cat):
    (plan,) = _plans(
        cat,
        "select b from t where a >= 3 and 9 > a and b like 'ab%' and d is not null "
        "and a between 1 and 20 and a in (4, 5, null) and c is null and d = '2024-01-02'",
    )
    assert _pushed(plan) == [
        "a >= 3",
        "a < 9",
        "b LIKE 'ab%'",
        "d IS NOT NULL",
        "a BETWEEN 1 AND 20",
        "a IN (4, 5, NULL)",
        "d = '2024-01-02'",
    ]
    spec = plan.spec()
    assert [c.name for c in plan.columns] == ["a", "b", "c", "d"]
    kinds = [p.kind for p in spec.predicates]
    assert kinds[:4] == [
        PredicateKind.RANGE,
        PredicateKind.RANGE,
        PredicateKind.PREFIX,
        PredicateKind.IS_NOT_NULL,
    ]
    assert spec.predicates[5].values == (4, 5)
    assert spec.predicates[6].value == dt.date(2024, 1, 2)


def test_what_does_not_convert_exactly_stays_above_the_scan(cat):
    (plan,) = _plans(
        cat,
        "select * from t where a = 1.5 or a = 2 and a = '7' and c > 1 and b like 'a_%' "
        "and a <> 3 and not a = 4 and a = 99999999999",
    )
    assert plan.predicates == []


def test_parameters_are_read_at_run_time_and_bad_ones_are_not_pushed(cat):
    (plan,) = _plans(cat, "select b from t where a = $1 limit 1")
    spec = plan.spec([7])
    assert spec.predicates[0].value == 7 and spec.limit == 1
    spec = plan.spec(["seven"])
    assert spec.predicates == () and spec.limit is None
    spec = plan.spec([None])
    assert spec.predicates == () and spec.limit is None


def test_limit_is_pushed_only_when_the_scan_decides_the_rows(cat):
    (plan,) = _plans(cat, "select a from t where a > 1 limit 5 offset 2")
    assert plan.spec().limit == 7
    for sql in (
        "select a from t order by a limit 5",
        "select count(*) from t limit 5",
        "select a from t where c > 0.5 limit 5",
        "select distinct b from t limit 5",
        "select a from t group by a limit 5",
    ):
        (plan,) = _plans(cat, sql)
        assert plan.spec().limit is None, sql


def test_outer_join_nullable_side_keeps_its_rows(cat):
    left, right = _plans(cat, "select * from t left join u on t.a = u.a where u.x = 1 and t.a = 2")
    assert _pushed(left) == ["a = 2"] and _pushed(right) == []
    left, right = _plans(cat, "select * from t join u on t.a = u.a where u.x = 1 limit 3")
    assert _pushed(right) == ["x = 1"] and right.spec().limit is None


def test_each_scope_pushes_its_own_where(cat):
    outer, inner = _plans(
        cat, "select a from t where a = 1 and exists (select 1 from u where u.x = 5 and u.a = t.a)"
    )
    assert _pushed(outer) == ["a = 1"]
    assert _pushed(inner) == ["x = 5"]


def test_direct_columns_only_for_queries_the_scan_answers_alone(cat):
    from sql.planner.pushdown import direct_columns

    def direct(sql):
        bound = bind_query(parser.parse(sql)[0].ast, cat)
        columns = direct_columns(bound, plan_scans(bound))
        return None if columns is None else [c.name for c in columns]

    assert direct("select b, a from t where a = $1") == ["b", "a"]
    assert direct("select b from t where a = 1 limit 2") == ["b"]
    for sql in (
        "select b || 'x' from t where a = 1",
        "select b from t where c > 0.5",
        "select b from t where a = 1 order by b",
        "select b from t limit 2 offset 1",
        "select count(*) from t",
        "select t.b from t join u on t.a = u.a",
    ):
        assert direct(sql) is None, sql


def test_short_reads_are_direct_reads_by_the_whole_key_or_a_small_literal_limit(cat):
    from sql.planner.pushdown import SHORT_LIMIT_ROWS, direct_columns, is_short

    def short(sql):
        bound = bind_query(parser.parse(sql)[0].ast, cat)
        scans = plan_scans(bound)
        return is_short(bound, scans, direct_columns(bound, scans))

    assert short("select b, c from t where a = $1")
    assert short("select b from t where a = 3 and b = 'x'")
    assert short(f"select b from t where b > 'q' limit {SHORT_LIMIT_ROWS}")
    for sql in (
        "select b from t where a > $1",
        "select b from t where b = 'x'",
        f"select b from t limit {SHORT_LIMIT_ROWS + 1}",
        "select b from t where a > 1 limit $1",
        "select count(*) from t where a = 1",
        "select b from t where a = 1 order by b",
    ):
        assert not short(sql), sql


def test_an_equality_on_a_whole_unique_index_is_a_short_read():
    import dataclasses

    from catalog.indexes import IndexInfo
    from sql.planner.pushdown import direct_columns, is_short

    table = make_table(3, "w", [("id", t.INT64), ("code", t.INT64), ("name", t.STRING)])
    indexes = (
        IndexInfo("w_code", 1, TabletId(31), (ColumnId(1),), unique=True),
        IndexInfo("w_name", 2, TabletId(32), (ColumnId(2),)),
        IndexInfo("w_part", 3, TabletId(33), (ColumnId(2),), unique=True, predicate="code > 0"),
    )
    cat = CatalogDouble([dataclasses.replace(table, indexes=indexes)])

    def short(sql):
        bound = bind_query(parser.parse(sql)[0].ast, cat)
        scans = plan_scans(bound)
        return is_short(bound, scans, direct_columns(bound, scans))

    assert short("select id from w where code = $1")
    assert not short("select id from w where name = $1")  # not unique, nor is the partial one
    assert not short("select id from w where code > $1")


def test_ors_of_equalities_on_one_column_become_in_lists(cat):
    (plan,) = _plans(cat, "select a from t where a = 1 or (a = 2 or a in (3, 4))")
    assert _pushed(plan) == ["a IN (1, 2, 3, 4)"]
    (plan,) = _plans(cat, "select a from t where a = 1 or b = 'x'")
    assert _pushed(plan) == []
    (plan,) = _plans(cat, "select a from t where a = 1 or a > 5")
    assert _pushed(plan) == []


def test_join_conditions_push_into_inner_sides_and_the_joined_side_of_left_joins(cat):
    left, right = _plans(cat, "select * from t join u on t.a = u.a and u.x = 3 and t.b = 'q'")
    assert _pushed(left) == ["b = 'q'"] and _pushed(right) == ["x = 3"]
    left, right = _plans(
        cat, "select * from t left join u on t.a = u.a and u.x is null and t.b = 'q'"
    )
    assert _pushed(left) == [] and _pushed(right) == ["x IS NULL"]
    left, right = _plans(cat, "select * from t right join u on t.a = u.a and u.x = 3")
    assert _pushed(left) == [] and _pushed(right) == []
