from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest
from sqlglot import exp

from sql.common.datatypes import column_type, duckdb_type, to_wire, wire_oid
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


def test_numeric_precision_goes_to_postgresqls_1000_held_in_38_digits():
    wide = column_type(exp.DataType.build("numeric(50,2)", dialect="postgres"))
    assert (wide.precision, wide.pg_typmod, wide.arrow_type) == (
        50,
        (50 << 16 | 2) + 4,
        pa.decimal128(38, 2),
    )
    with pytest.raises(InvalidParameterValue):
        column_type(exp.DataType.build("numeric(1001,0)", dialect="postgres"))
    with pytest.raises(FeatureNotSupported):
        column_type(exp.DataType.build("numeric(60,40)", dialect="postgres"))


def test_unconstrained_numeric_is_held_at_a_fixed_scale():
    free = column_type(exp.DataType.build("numeric", dialect="postgres"))
    assert (free.pg_name(), free.pg_typmod, free.arrow_type) == (
        "numeric",
        -1,
        pa.decimal128(38, 10),
    )
    assert duckdb_type(free) == "DECIMAL(38,10)"


def test_unconstrained_numeric_shows_each_value_at_its_own_scale():
    values = pa.array(
        [Decimal("1.5"), Decimal("100"), None, Decimal("0.0000001"), Decimal("-2.25")],
        pa.decimal128(38, 10),
    )
    assert to_wire(values, 1700).to_pylist() == ["1.5", "100", None, "0.0000001", "-2.25"]
    assert to_wire(values, 1700, typmod=(38 << 16 | 10) + 4).type == pa.decimal128(38, 10)


def test_unsupported_types_are_0a000():
    with pytest.raises(FeatureNotSupported):
        column_type(exp.DataType.build("xml", dialect="postgres"))


def test_wire_types_for_duckdb_results():
    assert wire_oid("HUGEINT") == 1700
    assert wire_oid("DECIMAL(10,2)") == 1700
    assert wire_oid("TIMESTAMP WITH TIME ZONE") == 1184
    assert wire_oid("INTERVAL") == 1186
    assert wire_oid("TIME") == 1083
    assert wire_oid("TIME WITH TIME ZONE") == 25  # timetz: sent as text for now


def test_to_wire_casts_to_the_encoders_arrow_type():
    assert to_wire(pa.array([1, 2], pa.uint8()), 21).type == pa.int16()
    assert to_wire(pa.nulls(2), 23).type == pa.int32()
    assert to_wire(pa.array([[1], [2]]), 25).to_pylist() == ["{1}", "{2}"]


def test_arrays_are_written_as_postgresql_array_literals():
    from sql.common.datatypes import array_literal

    assert array_literal([1, 2, None]) == "{1,2,NULL}"
    assert array_literal(["a b", "c", "", "NULL", 'x"y', [1, 2]]) == (
        '{"a b",c,"","NULL","x\\"y",{1,2}}'
    )
    assert array_literal([True, 1.5]) == "{t,1.5}"
