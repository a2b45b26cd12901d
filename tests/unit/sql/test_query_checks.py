from __future__ import annotations

import pytest

from sql.frontend.parser import parse
from sql.planner.binder import bind_query
from storage.errors import DatatypeMismatch, InvalidColumnReference


def _bind(sql, catalog):
    return bind_query(parse(sql)[0].ast, catalog)


def test_set_operations_refuse_columns_of_different_categories(catalog):
    with pytest.raises(DatatypeMismatch):
        _bind("SELECT a FROM t UNION SELECT b FROM t", catalog)
    with pytest.raises(DatatypeMismatch):
        _bind("SELECT b FROM t EXCEPT SELECT 1", catalog)
    _bind("SELECT a FROM t UNION SELECT c FROM t", catalog)  # both numeric
    _bind("SELECT b FROM t UNION SELECT v FROM t", catalog)  # both strings


def test_a_string_literal_takes_the_type_of_the_column_it_meets(catalog):
    bound = _bind("SELECT a FROM t UNION SELECT 'x'", catalog)
    assert "CAST('x' AS INT)" in bound.ast.sql(dialect="postgres")


def test_distinct_on_must_lead_the_order_by(catalog):
    _bind("SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b", catalog)
    _bind("SELECT DISTINCT ON (a, b) a, b FROM t ORDER BY b, a, c", catalog)
    _bind("SELECT DISTINCT ON (a, b) a, b FROM t ORDER BY b", catalog)
    with pytest.raises(InvalidColumnReference):
        _bind("SELECT DISTINCT ON (a) a, b FROM t ORDER BY b", catalog)
