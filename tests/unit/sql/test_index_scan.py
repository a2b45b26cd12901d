"""The index lookup's own key-range encoding and the per-statement ScanSpec memo."""

from __future__ import annotations

import pytest

from catalog.indexes import IKEY, IndexInfo, index_schema
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
