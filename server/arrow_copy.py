"""COPY TO STDOUT (FORMAT arrow): a result's batches as one Arrow IPC stream in CopyData messages.

The first CopyData holds the stream's schema, each later one a record batch,
and the last the end-of-stream marker, so the concatenated CopyData payloads
are a stream ``pyarrow.ipc.open_stream`` reads.  Every column gets one Arrow
type for its PostgreSQL type (``arrow_type``), whatever type the engine
produced it in: int4 is always int32, timestamptz is ``timestamp[us, UTC]``,
numeric with a typmod is ``decimal128(p, s)``.  Types Arrow has no faithful
type for (interval, uuid, json, unconstrained numeric that is not a decimal)
travel as their PostgreSQL text, exactly as text COPY would print them.
"""

from __future__ import annotations

import pyarrow as pa

from server import messages as m
from server import pgtypes
from server.codec import encode
from server.portal import Fetched, ResultStream
from sql.common.result import Result, ResultColumn
from storage.type_oids import TypeOid

END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
# Rows per IPC message: a client reads a few large batches far faster than many small ones.
BATCH_ROWS = 65536
_FIXED: dict[int, pa.DataType] = {
    TypeOid.BOOL: pa.bool_(),
    TypeOid.INT2: pa.int16(),
    TypeOid.INT4: pa.int32(),
    TypeOid.INT8: pa.int64(),
    TypeOid.OID: pa.uint32(),
    TypeOid.FLOAT4: pa.float32(),
    TypeOid.FLOAT8: pa.float64(),
    TypeOid.BYTEA: pa.binary(),
    TypeOid.DATE: pa.date32(),
    TypeOid.TIME: pa.time64("us"),
    TypeOid.TIMESTAMP: pa.timestamp("us"),
    TypeOid.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
}
_STRINGS = (TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.BPCHAR, TypeOid.NAME, TypeOid.CHAR)
_MAX_DECIMAL128 = 38


def arrow_type(column: ResultColumn, produced: pa.DataType | None) -> pa.DataType:
    """The Arrow type a result column travels as; ``produced`` is the engine's type, if known."""
    oid = column.type_oid
    if oid in _FIXED:
        return _FIXED[oid]
    if oid == TypeOid.NUMERIC:
        if column.typmod >= 4:
            precision, scale = ((column.typmod - 4) >> 16) & 0xFFFF, (column.typmod - 4) & 0xFFFF
            if precision <= _MAX_DECIMAL128:
                return pa.decimal128(precision, scale)
        if (
            produced is not None
            and pa.types.is_decimal(produced)
            and produced.precision <= _MAX_DECIMAL128
        ):
            return pa.decimal128(produced.precision, produced.scale)
    return pa.string()


class ArrowCopyOutStream(ResultStream):
    """A COPY TO's rows as one Arrow IPC stream, a record batch per CopyData; tag ``COPY n``."""

    def __init__(self, result: Result) -> None:
        super().__init__(result, (1,) if result.columns else ())
        self._schema: pa.Schema | None = None

    def response(self) -> bytes:
        return encode(m.CopyOutResponse(1, (1,) * len(self.type_oids)))

    def command_tag(self, sent: int) -> str:
        return f"COPY {sent}"

    def fetch(self, max_rows: int) -> Fetched:
        """Pull up to a few batches and send each as an IPC record batch message (worker thread)."""
        parts: list[bytes] = []
        count = 0
        want = max(max_rows, BATCH_ROWS)
        while count < want:
            batch = self.rows.take(want - count)
            if self._schema is None:
                self._schema = self._schema_for(batch)
                parts.append(encode(m.CopyData(self._schema.serialize().to_pybytes())))
            if batch is None:
                break
            message = self._convert(batch).serialize().to_pybytes()
            parts.append(encode(m.CopyData(message)))
            count += batch.num_rows
        if self.rows.is_exhausted:
            parts.append(encode(m.CopyData(END_OF_STREAM)))
            parts.append(encode(m.CopyDone()))
        return Fetched(b"".join(parts), count, self.rows.is_exhausted)

    def _schema_for(self, first: pa.RecordBatch | None) -> pa.Schema:
        columns = self.result.columns or ()
        return pa.schema(
            pa.field(
                column.name,
                arrow_type(column, first.column(i).type if first is not None else None),
            )
            for i, column in enumerate(columns)
        )

    def _convert(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        assert self._schema is not None, "the schema goes out before the first batch"
        arrays = []
        for i, (field, oid) in enumerate(zip(self._schema, self.type_oids, strict=True)):
            array = batch.column(i)
            if pa.types.is_dictionary(array.type):
                array = array.cast(array.type.value_type)
            if array.type == field.type:
                arrays.append(array)
            elif pa.types.is_string(field.type) and oid not in _STRINGS:
                arrays.append(pgtypes.text_column(array, oid).cast(pa.string()))
            else:
                arrays.append(array.cast(field.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self._schema)
