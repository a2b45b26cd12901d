"""A direct read's ``DirectShape`` passes a batch through without ``to_wire`` only when a
batch of the very same schema passed through ``to_wire`` unchanged: any other batch, or a
result type ``to_wire`` converts by more than its Arrow type, takes ``to_wire``."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa

from sql.common.datatypes import to_wire
from sql.common.result import ResultColumn
from sql.execution.direct_shape import DirectShape
from storage.type_oids import TypeOid


def _general(shape: DirectShape, batch: pa.RecordBatch, zone: str) -> pa.RecordBatch:
    arrays = [
        to_wire(batch.column(i), oid, zone, typmod)
        for i, oid, typmod in zip(shape.positions, shape.oids, shape.typmods, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, names=shape.names)


def _shape(*columns: ResultColumn, positions: tuple[int, ...]) -> DirectShape:
    return DirectShape(
        columns,
        positions,
        [c.name for c in columns],
        tuple(c.type_oid for c in columns),
        tuple(c.typmod for c in columns),
    )


def _same(shape: DirectShape, batch: pa.RecordBatch, zone: str = "UTC") -> None:
    got = shape.wire_batch(batch, zone)
    want = _general(shape, batch, zone)
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.equals(want)


def test_plain_batches_pass_through_and_other_schemas_are_converted():
    shape = _shape(
        ResultColumn("id", TypeOid.INT8), ResultColumn("name", TypeOid.TEXT), positions=(2, 0)
    )
    schema = pa.schema([pa.field("1", pa.string()), ("2", pa.int32()), ("0", pa.int64(), False)])
    plain = pa.RecordBatch.from_arrays(
        [pa.array(["a", None]), pa.array([1, 2], pa.int32()), pa.array([7, 8])], schema=schema
    )
    _same(shape, plain)
    assert shape.plain == [(plain.schema, False)]
    _same(shape, plain)
    large = pa.RecordBatch.from_arrays(
        [pa.array(["b"], pa.large_string()), pa.array([3], pa.int32()), pa.array([9])],
        names=["1", "2", "0"],
    )
    _same(shape, large)  # another schema: converted
    narrow = pa.RecordBatch.from_arrays(
        [pa.array(["c"]), pa.array([4], pa.int32()), pa.array([5], pa.int32())],
        names=["1", "2", "0"],
    )
    _same(shape, narrow)
    assert shape.plain == [(plain.schema, False)]


def test_types_converted_by_more_than_their_arrow_type_never_pass_through():
    at = pa.array([dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC)], pa.timestamp("us", tz="UTC"))
    cases = [
        (ResultColumn("at", TypeOid.TIMESTAMPTZ), at),
        (ResultColumn("code", TypeOid.BPCHAR, typmod=8), pa.array(["ab"])),
        (ResultColumn("code", TypeOid.BPCHAR), pa.array(["ab"])),
        (ResultColumn("n", TypeOid.NUMERIC), pa.array([Decimal("1.50")], pa.decimal128(10, 2))),
    ]
    for column, array in cases:
        shape = _shape(column, positions=(0,))
        batch = pa.RecordBatch.from_arrays([array], names=["0"])
        for zone in ("UTC", "Europe/Berlin", "UTC"):
            _same(shape, batch, zone)
        assert shape.plain == [], column


def test_a_batch_in_output_order_is_renamed_only_when_that_gives_the_picked_batch():
    columns = (ResultColumn("v", TypeOid.INT8), ResultColumn("s", TypeOid.TEXT))
    nullable = pa.RecordBatch.from_arrays(
        [pa.array([1, None]), pa.array(["a", None])], names=["1", "2"]
    )
    shape = _shape(*columns, positions=(0, 1))
    for _ in range(2):
        _same(shape, nullable)
    assert shape.plain == [(nullable.schema, True)]
    schema = pa.schema([pa.field("0", pa.int64(), False), ("2", pa.string())])
    keyed = pa.RecordBatch.from_arrays([pa.array([1, 2]), pa.array(["a", None])], schema=schema)
    shape = _shape(*columns, positions=(0, 1))
    for _ in range(2):
        _same(shape, keyed)  # NOT NULL would survive a rename: picked instead
    assert shape.plain == [(keyed.schema, False)]
    tagged = nullable.replace_schema_metadata({"k": "v"})
    shape = _shape(*columns, positions=(0, 1))
    for batch in (nullable, tagged, nullable):
        _same(shape, batch)  # another schema's metadata: converted, not renamed
    reordered = _shape(*columns, positions=(1, 0))
    for _ in range(2):
        _same(reordered, pa.RecordBatch.from_arrays(nullable.columns[::-1], names=["2", "1"]))
    assert [r for _, r in reordered.plain] == [False]
