"""The index lookup's own key-range encoding and the per-statement ScanSpec memo."""

from __future__ import annotations

import dataclasses
import random
from decimal import Decimal

import pytest

from catalog.indexes import IKEY, IndexInfo, index_schema
from catalog.table import TableInfo
from sql.execution import index_scan
from sql.execution.runner import execution_spec
from sql.frontend import parser
from sql.planner.binder import bind_query
from sql.planner.pushdown import plan_scans
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.predicate import ColumnPredicate, ScanSpec
from tests.unit.sql.conftest import CatalogDouble, make_table

_BOUNDS = [
    (b"\x00", b"\x01"),
    (b"\x00\x80\x00\x00\x05", b"\x00\x80\x00\x00\x06"),
    (b"\x00\xff\x00\xff", b"\x00\xff\x01"),
    (b"\x00ab\x00\x00c", None),
    (b"\x00z", b"\x00a"),
]


@pytest.mark.parametrize(("lower", "upper"), _BOUNDS)
def test_entry_range_is_the_key_range_a_spec_on_ikey_derives(lower, upper):
    table = make_table(1, "t", [("a", t.INT32), ("b", t.STRING)])
    index = IndexInfo("t_b", 1, TabletId(9), (ColumnId(2),), include=(ColumnId(1),))
    schema = index_schema(table.schema, index)
    predicate = (
        ColumnPredicate.range(IKEY, lower, upper)
        if upper is not None
        else ColumnPredicate.range(IKEY, lower)
    )
    spec = ScanSpec(projection=(), predicates=(predicate,))
    derived = spec.key_range(schema)
    assert index_scan._entry_range(lower, upper) == derived
    assert spec.beyond_key(schema, derived) == ()


def test_execution_spec_is_remade_for_new_parameters_or_a_new_plan():
    cat = CatalogDouble([make_table(1, "t", [("a", t.INT32), ("b", t.INT64)])])
    (scan,) = plan_scans(bind_query(parser.parse("select b from t where a = $1")[0].ast, cat))
    (again,) = plan_scans(bind_query(parser.parse("select b from t where a = $1")[0].ast, cat))
    first = execution_spec(scan, [5])
    assert execution_spec(scan, [5]) == scan.spec([5])
    big = 10**6
    params = [big]
    made = execution_spec(scan, params)
    assert execution_spec(scan, params) is made
    assert execution_spec(scan, [big + 1]).predicates[0].value == big + 1
    assert execution_spec(again, params) is not made
    assert execution_spec(scan, [5]) == first


_VALUES = (0, 7, -5, 2**40, 2**70, True, 1.5, Decimal("2"), Decimal("2.5"), "x", "", "a\x00b",
           None, b"\x01")  # fmt: skip


def _indexed_table() -> TableInfo:
    table = make_table(
        7,
        "t",
        [("id", t.INT64), ("b", t.INT32), ("c", t.STRING), ("d", t.bpchar(4)),
         ("e", t.DOUBLE), ("f", t.decimal(10, 2)), ("g", t.varchar(8))],
    )  # fmt: skip
    b, c, d, e, f, g = (ColumnId(i) for i in range(1, 7))
    indexes = (
        IndexInfo("t_stale", 1, TabletId(20), (b,), valid=False),
        IndexInfo("t_c", 2, TabletId(21), (c,)),
        IndexInfo("t_bc", 3, TabletId(22), (b, c), unique=True),
        IndexInfo("t_cb", 4, TabletId(23), (c, b)),
        IndexInfo("t_d", 5, TabletId(24), (d, e)),
        IndexInfo("t_f_part", 6, TabletId(25), (f,), predicate="f > 0"),
        IndexInfo("t_gb", 7, TabletId(26), (g, b)),
        IndexInfo("t_e", 8, TabletId(27), (e,)),
    )
    return dataclasses.replace(table, indexes=indexes)


def test_index_chosen_per_shape_is_the_index_judged_per_execution():
    # ``choose`` keeps the index an all-equality shape reads through; for every value it
    # must give what judging each index against the values gives (``_choose``), including
    # values that fail to encode for the kept index, so another index or none serves.
    table = _indexed_table()
    rng = random.Random(5)
    columns = [ColumnId(i) for i in range(0, 7)]
    plans: index_scan.IndexPlans = {}
    for _ in range(3000):
        chosen = rng.sample(columns, rng.randint(1, 3))
        if rng.random() < 0.2:
            chosen.append(chosen[0])  # a second equality on a column: the first wins
        predicates = tuple(ColumnPredicate.equality(c, rng.choice(_VALUES)) for c in chosen)
        spec = ScanSpec(projection=(ColumnId(0),), predicates=predicates)
        for partial in (frozenset(), frozenset({"t_f_part"})):
            assert index_scan.choose(table, spec, partial, plans) == index_scan._choose(
                table, spec, partial
            ), (predicates, partial)
    assert len(plans) > 20  # the shapes were planned once each, then kept


def test_index_chosen_per_shape_follows_a_changed_table():
    # DDL makes a new TableInfo, planned anew (a new ScanPlan, whose ``index_plans`` start
    # empty): the index kept for the old one must not serve it.
    table = _indexed_table()
    spec = ScanSpec((ColumnId(0),), (ColumnPredicate.equality(ColumnId(2), "x"),))
    kept: index_scan.IndexPlans = {}
    found = index_scan.choose(table, spec, plans=kept)
    assert found is not None and found.index.name == "t_c"
    dropped = dataclasses.replace(table, indexes=tuple(i for i in table.indexes if i.name != "t_c"))
    found = index_scan.choose(dropped, spec, plans={})
    assert found is not None and found.index.name == "t_cb"
    bare = dataclasses.replace(table, indexes=())
    assert index_scan.choose(bare, spec, plans={}) is None
    valid = dataclasses.replace(
        bare, indexes=(IndexInfo("t_c2", 9, TabletId(30), (ColumnId(2),), valid=False),)
    )
    assert index_scan.choose(valid, spec, plans={}) is None
    made_valid = dataclasses.replace(
        valid, indexes=(dataclasses.replace(valid.indexes[0], valid=True),)
    )
    found = index_scan.choose(made_valid, spec, plans={})
    assert found is not None and found.index.name == "t_c2"
    assert index_scan.choose(table, spec, plans=kept).index.name == "t_c"  # type: ignore[union-attr]
