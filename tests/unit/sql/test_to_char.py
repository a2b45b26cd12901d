from __future__ import annotations

import duckdb
import pytest
from sqlglot import exp

from sql.planner.to_char import rewrite_to_char

TS = "TIMESTAMP '2024-03-05 09:07:09.123456'"


def _formatted(pattern: str) -> str:
    value = exp.cast(exp.Literal.string("2024-03-05 09:07:09.123456"), "TIMESTAMP")
    value.type = exp.DataType.build("TIMESTAMP")
    node = exp.Anonymous(this="to_char", expressions=[value, exp.Literal.string(pattern)])
    sql = rewrite_to_char(node).sql(dialect="duckdb")
    return duckdb.connect().execute(f"SELECT {sql}").fetchone()[0]


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("YYYY-MM-DD HH24:MI:SS", "2024-03-05 09:07:09"),
        ("HH12:MI AM", "09:07 AM"),
        ("Day, DD Month YYYY", "Tuesday  , 05 March     2024"),
        ("FMDay FMMonth FMDD", "Tuesday March 5"),
        ("DY Mon dy", "TUE Mar tue"),
        ('YYYY"Q"Q WW DDD', "2024Q1 10 065"),
        ("MS US", "123 123456"),
        ("YYYY 100%", "2024 100%"),
    ],
)
def test_date_time_patterns_format_as_postgresql(pattern, text):
    assert _formatted(pattern) == text


def test_a_numeric_value_is_left_alone():
    node = exp.Anonymous(
        this="to_char", expressions=[exp.Literal.number(1), exp.Literal.string("999")]
    )
    assert rewrite_to_char(node) is node
