from __future__ import annotations

import duckdb
import pyarrow as pa
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


def test_a_db_error_raised_in_a_scan_stream_keeps_its_sqlstate():
    """A damaged file found while DuckDB pulls a scan is XX001, not DuckDB's invalid input."""

    def batches():
        yield pa.record_batch([pa.array([1])], names=["x"])
        raise errors.DataCorrupted(
            "cfile tablets/1/rowset-1/col-1.cfile: block at 8 fails its CRC32C"
        )

    class Source:
        def __arrow_c_stream__(self, requested_schema=None):
            schema = pa.schema([("x", pa.int64())])
            reader = pa.RecordBatchReader.from_batches(schema, batches())
            return reader.__arrow_c_stream__(requested_schema)

    con = duckdb.connect()
    con.register("t", Source())
    with pytest.raises(duckdb.Error) as raised:
        for _ in con.sql("SELECT * FROM t ORDER BY x").to_arrow_reader(100):
            pass
    error = translate(raised.value)
    assert isinstance(error, errors.DataCorrupted)
    assert "col-1.cfile" in error.message


def test_an_error_raised_in_a_function_never_closes_the_connection(duck):
    """3D000 is FATAL at connect, but raised from a function it ends only the statement."""

    def missing_database(name: str) -> bool:
        raise errors.InvalidCatalogName(f'database "{name}" does not exist', severity="ERROR")

    duck.create_function("missing_database", missing_database, [str], bool)
    with pytest.raises(duckdb.Error) as info:
        duck.sql("select missing_database('nope')").fetchall()
    error = translate(info.value)
    assert isinstance(error, errors.InvalidCatalogName)
    assert error.severity == "ERROR"
