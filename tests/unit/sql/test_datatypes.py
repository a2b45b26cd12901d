from __future__ import annotations

import pyarrow as pa
import pytest
from sqlglot import exp

from sql.common.datatypes import column_type, to_wire, wire_oid
from storage import data_type as t
from storage.errors import FeatureNotSupported, InvalidParameterValue


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("boolean", t.BOOL),
        ("tinyint", t.INT8),
        ("smallint", t.INT16),
        ("integer", t.INT32),
        ("bigint", t.INT64),
        ("real", t.FLOAT),
        ("double precision", t.DOUBLE),
        ("numeric(38,10)", t.decimal(38, 10)),
        ("varchar(7)", t.varchar(7)),
        ("text", t.STRING),
        ("string", t.STRING),
        ("bytea", t.BINARY),
        ("binary", t.BINARY),
        ("date", t.DATE),
        ("timestamp", t.TIMESTAMP),
        ("timestamptz", t.TIMESTAMPTZ),
    ],
)
def test_postgresql_and_impala_spellings_map_to_kudu_types(spelling, expected):
    assert column_type(exp.DataType.build(spelling, dialect="postgres")) == expected


def test_numeric_precision_is_limited_to_38():
    with pytest.raises(InvalidParameterValue):
        column_type(exp.DataType.build("numeric(39,0)", dialect="postgres"))
    with pytest.raises(FeatureNotSupported):
        column_type(exp.DataType.build("numeric", dialect="postgres"))


def test_unsupported_types_are_0a000():
    with pytest.raises(FeatureNotSupported):
        column_type(exp.DataType.build("json", dialect="postgres"))


def test_wire_types_for_duckdb_results():
    assert wire_oid("HUGEINT") == 1700
    assert wire_oid("DECIMAL(10,2)") == 1700
    assert wire_oid("TIMESTAMP WITH TIME ZONE") == 1184
    assert wire_oid("INTERVAL") == 25


def test_to_wire_casts_to_the_encoders_arrow_type():
    assert to_wire(pa.array([1, 2], pa.uint8()), 21).type == pa.int16()
    assert to_wire(pa.nulls(2), 23).type == pa.int32()
    assert to_wire(pa.array([[1], [2]]), 25).to_pylist() == ["[1]", "[2]"]
