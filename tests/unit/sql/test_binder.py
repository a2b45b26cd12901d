from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.planner.binder import bind_query
from storage.errors import UndefinedColumn, UndefinedTable


def _bind(sql, catalog, declared=()):
    return bind_query(parser.parse(sql)[0].ast, catalog, list(declared))


def test_unknown_table_is_42p01_with_the_name_position(catalog):
    with pytest.raises(UndefinedTable) as info:
        _bind("select * from t join nope on true", catalog)
    assert info.value.position == 22


def test_unknown_column_is_42703_with_position(catalog):
    with pytest.raises(UndefinedColumn) as info:
        _bind("select a, zz from t", catalog)
    assert info.value.position == 11


def test_only_referenced_columns_are_scanned(catalog):
    bound = _bind("select b from t where a > 1", catalog)
    assert [c.name for c in bound.tables[0].columns] == ["a", "b"]


def test_star_reads_every_column_in_declared_order(catalog):
    bound = _bind("select * from t", catalog)
    assert [c.name for c in bound.tables[0].columns] == ["a", "b", "c", "v"]


def test_cte_names_are_not_catalog_tables(catalog):
    bound = _bind("with x as (select a from t) select * from x", catalog)
    assert [ref.table.name for ref in bound.tables] == ["t"]


def test_untyped_parameters_take_their_type_from_context(catalog):
    bound = _bind(
        "select $1::int8, b from t where a = $2 and b like $3 and c > $4 limit $5", catalog
    )
    assert bound.param_oids == [20, 23, 25, 701, 20]


def test_declared_parameter_types_win(catalog):
    bound = _bind("select b from t where a = $1", catalog, declared=[21])
    assert bound.param_oids == [21]


def test_parameter_with_no_context_is_text(catalog):
    assert _bind("select $1", catalog).param_oids == [25]
