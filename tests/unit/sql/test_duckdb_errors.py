from __future__ import annotations

import duckdb
import pytest

from sql.common.duckdb_errors import translate
from storage import errors


@pytest.fixture(scope="module")
def duck():
    connection = duckdb.connect()
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("select 1 // 0", errors.DivisionByZero),
        ("select 2147483647::int + 1::int", errors.NumericValueOutOfRange),
        ("select 'abc'::int", errors.InvalidTextRepresentation),
        ("select 300::tinyint", errors.NumericValueOutOfRange),
        ("select 12345.6::decimal(5,2)", errors.NumericValueOutOfRange),
        ("select no_such_function(1)", errors.UndefinedFunction),
        ("select error('division by zero')", errors.DivisionByZero),
    ],
)
def test_duckdb_errors_map_to_postgresql_sqlstates(duck, sql, expected):
    with pytest.raises(duckdb.Error) as info:
        duck.sql(sql).fetchall()
    assert isinstance(translate(info.value), expected)


def test_conversion_message_uses_postgresql_words(duck):
    with pytest.raises(duckdb.Error) as info:
        duck.sql("select 'abc'::int").fetchall()
    assert translate(info.value).message == 'invalid input syntax for type integer: "abc"'
