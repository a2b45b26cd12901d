from __future__ import annotations

import pyarrow as pa
import pytest

from storage import data_type as t


@pytest.mark.parametrize(
    ("dtype", "oid", "typmod", "name"),
    [
        (t.INT8, 21, -1, "smallint"),
        (t.INT32, 23, -1, "integer"),
        (t.decimal(10, 2), 1700, 655366, "numeric(10,2)"),
        (t.varchar(20), 1043, 24, "character varying(20)"),
        (t.TIMESTAMPTZ, 1184, -1, "timestamp with time zone"),
        (t.TIMESTAMP, 1114, -1, "timestamp without time zone"),
        (t.BINARY, 17, -1, "bytea"),
    ],
)
def test_postgresql_oid_typmod_and_name(dtype, oid, typmod, name):
    assert (dtype.pg_oid, dtype.pg_typmod, dtype.pg_name()) == (oid, typmod, name)


def test_arrow_types():
    assert t.decimal(38, 10).arrow_type == pa.decimal128(38, 10)
    assert t.TIMESTAMPTZ.arrow_type == pa.timestamp("us", tz="UTC")
    assert t.DATE.arrow_type == pa.date32()


def test_json_round_trip_and_ranges():
    for dtype in (t.varchar(3), t.decimal(5, 1), t.TIMESTAMPTZ, t.BOOL):
        assert t.DataType.from_json(dtype.to_json()) == dtype
    assert t.INT8.integer_range == (-128, 127)
