from __future__ import annotations

from sql.common.result import Result, ResultColumn


def test_a_result_without_columns_has_no_rows():
    result = Result(command_tag="CREATE TABLE")
    assert result.columns is None
    assert list(result.batches) == []
    assert result.deallocate is None and not result.is_empty_query


def test_result_columns_default_to_no_source_table():
    column = ResultColumn("x", 23)
    assert (column.typmod, column.table_oid, column.attnum) == (-1, 0, 0)
