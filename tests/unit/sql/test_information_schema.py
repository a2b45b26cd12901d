from __future__ import annotations

from sql.pg_catalog.information_schema import VIEWS


def test_the_views_tools_read_exist():
    assert {"tables", "columns", "schemata", "table_constraints", "key_column_usage"} <= set(VIEWS)
    for body in VIEWS.values():
        assert "pgc." in body
