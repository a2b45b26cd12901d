from __future__ import annotations

from sql.frontend.parser import parse
from sql.planner.values_lists import shape_values


def _shaped(sql: str) -> str:
    return shape_values(parse(sql)[0].ast).sql(dialect="postgres")


def test_a_values_statement_reads_from_a_values_table_keeping_order_and_limit():
    assert _shaped("VALUES (1, 'a'), (2, 'b') ORDER BY 2 DESC LIMIT 1") == (
        "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS \"*VALUES*\"(column1, column2) "
        "ORDER BY 2 DESC LIMIT 1"
    )


def test_values_in_from_and_in_lists_get_postgresql_column_names():
    assert _shaped("SELECT * FROM (VALUES (1)) AS t") == (
        "SELECT * FROM (VALUES (1)) AS t(column1)"
    )
    assert _shaped("SELECT * FROM (VALUES (1)) AS t(x)") == "SELECT * FROM (VALUES (1)) AS t(x)"
    assert _shaped("SELECT 1 WHERE 1 IN (VALUES (1), (2))") == (
        'SELECT 1 WHERE 1 IN (SELECT * FROM (VALUES (1), (2)) AS "*VALUES*"(column1))'
    )


def test_set_operation_operands_become_selects():
    assert _shaped("VALUES (1) UNION VALUES (2)") == (
        'SELECT * FROM (VALUES (1)) AS "*VALUES*"(column1) UNION '
        'SELECT * FROM (VALUES (2)) AS "*VALUES*"(column1)'
    )
