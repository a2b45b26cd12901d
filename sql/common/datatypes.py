"""Map SQL type spellings onto Kudu's DataTypes and query-result Arrow types onto PostgreSQL OIDs.

CREATE TABLE accepts PostgreSQL's names for Kudu's types plus Impala's
(TINYINT for int8, STRING, BINARY).  Query results come back from DuckDB as
Arrow; ``wire_oid`` says which PostgreSQL type each DuckDB column is sent as,
and ``to_wire`` casts its Arrow array to the type the wire encoder for that
OID expects.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from storage import types as t
from storage.errors import FeatureNotSupported, InvalidParameterValue
from storage.types import MAX_DECIMAL_PRECISION, DataType, TypeKind

DT = exp.DataType.Type

_SIMPLE = {
    DT.BOOLEAN: t.BOOL,
    DT.TINYINT: t.INT8,
    DT.SMALLINT: t.INT16,
    DT.INT: t.INT32,
    DT.BIGINT: t.INT64,
    DT.FLOAT: t.FLOAT,
    DT.DOUBLE: t.DOUBLE,
    DT.TEXT: t.STRING,
    DT.VARBINARY: t.BINARY,
    DT.BINARY: t.BINARY,
    DT.DATE: t.DATE,
    DT.TIMESTAMP: t.TIMESTAMP,
    DT.TIMESTAMPTZ: t.TIMESTAMPTZ,
}

# OIDs of the PostgreSQL types query results are sent as.
OID_BOOL, OID_BYTEA, OID_INT8, OID_INT2, OID_INT4, OID_TEXT = 16, 17, 20, 21, 23, 25
OID_FLOAT4, OID_FLOAT8, OID_VARCHAR, OID_DATE = 700, 701, 1043, 1082
OID_TIMESTAMP, OID_TIMESTAMPTZ, OID_NUMERIC = 1114, 1184, 1700


def _int_arg(node: exp.Expression, what: str) -> int:
    try:
        return int(node.name if isinstance(node, exp.DataTypeParam) else node.sql())
    except ValueError as exc:
        raise InvalidParameterValue(f"invalid {what} {node.sql()!r}") from exc


def column_type(node: exp.DataType) -> DataType:
    """Return the Kudu type a column declared as ``node`` is stored as."""
    kind = node.this
    if kind in _SIMPLE and not node.expressions:
        return _SIMPLE[kind]
    if kind in (DT.FLOAT, DT.DOUBLE) and len(node.expressions) == 1:
        # float(p): real up to 24 bits of precision, double precision up to 53 (PostgreSQL).
        bits = _int_arg(node.expressions[0], "precision")
        if bits < 1:
            raise InvalidParameterValue("precision for type float must be at least 1 bit")
        if bits > 53:
            raise InvalidParameterValue("precision for type float must be less than 54 bits")
        return t.FLOAT if bits <= 24 else t.DOUBLE
    if kind is DT.VARCHAR:
        if not node.expressions:
            return t.varchar(None)
        length = _int_arg(node.expressions[0], "length")
        if length < 1:
            raise InvalidParameterValue("length for type varchar must be at least 1")
        return t.varchar(length)
    if kind is DT.DECIMAL:
        if not node.expressions:
            raise FeatureNotSupported(
                "numeric columns need a precision",
                hint=f"Declare the column as numeric(p,s) with p <= {MAX_DECIMAL_PRECISION}.",
            )
        precision = _int_arg(node.expressions[0], "precision")
        scale = _int_arg(node.expressions[1], "scale") if len(node.expressions) > 1 else 0
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise InvalidParameterValue(
                f"NUMERIC precision {precision} must be between 1 and {MAX_DECIMAL_PRECISION}"
            )
        if not 0 <= scale <= precision:
            raise InvalidParameterValue(
                f"NUMERIC scale {scale} must be between 0 and precision {precision}"
            )
        return t.decimal(precision, scale)
    raise FeatureNotSupported(f"type {node.sql(dialect='postgres').lower()} is not supported")


def duckdb_type(dtype: DataType) -> str:
    """Spell a Kudu type for a DuckDB CAST."""
    k = dtype.kind
    if k is TypeKind.DECIMAL:
        return f"DECIMAL({dtype.precision},{dtype.scale or 0})"
    if k is TypeKind.TIMESTAMP:
        return "TIMESTAMPTZ" if dtype.with_time_zone else "TIMESTAMP"
    return _DUCKDB[k]


_DUCKDB = {
    TypeKind.BOOL: "BOOLEAN",
    TypeKind.INT8: "TINYINT",
    TypeKind.INT16: "SMALLINT",
    TypeKind.INT32: "INTEGER",
    TypeKind.INT64: "BIGINT",
    TypeKind.FLOAT: "REAL",
    TypeKind.DOUBLE: "DOUBLE",
    TypeKind.VARCHAR: "VARCHAR",
    TypeKind.STRING: "VARCHAR",
    TypeKind.BINARY: "BLOB",
    TypeKind.DATE: "DATE",
}


def oid_for_sqlglot_type(node: exp.DataType) -> int:
    """PostgreSQL OID of a type written in SQL (a cast target), or 0 when unknown."""
    try:
        return column_type(node).pg_oid
    except (FeatureNotSupported, InvalidParameterValue):
        if node.this is DT.DECIMAL:
            return OID_NUMERIC
        return 0


def oid_type_name(oid: int) -> str | None:
    """DuckDB type name to CAST a parameter of PostgreSQL type ``oid`` to (None: leave it)."""
    return _DUCKDB_BY_OID.get(oid)


_DUCKDB_BY_OID = {
    OID_BOOL: "BOOLEAN",
    OID_BYTEA: "BLOB",
    OID_INT8: "BIGINT",
    OID_INT2: "SMALLINT",
    OID_INT4: "INTEGER",
    OID_TEXT: "VARCHAR",
    OID_VARCHAR: "VARCHAR",
    OID_FLOAT4: "REAL",
    OID_FLOAT8: "DOUBLE",
    OID_DATE: "DATE",
    OID_TIMESTAMP: "TIMESTAMP",
    OID_TIMESTAMPTZ: "TIMESTAMPTZ",
    OID_NUMERIC: "DECIMAL(38,10)",
}


def normalize_for_wire(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Cast Arrow types without a wire encoder to one that has one (same values)."""
    typ = array.type
    if pa.types.is_dictionary(typ):
        return normalize_for_wire(array.cast(typ.value_type))
    if pa.types.is_uint8(typ) or pa.types.is_uint16(typ):
        return array.cast(pa.int32())
    if pa.types.is_uint32(typ):
        return array.cast(pa.int64())
    if pa.types.is_uint64(typ):
        return array.cast(pa.decimal128(20, 0))
    if pa.types.is_float16(typ):
        return array.cast(pa.float32())
    if pa.types.is_date64(typ):
        return array.cast(pa.date32())
    if pa.types.is_timestamp(typ) and typ.unit != "us":
        return array.cast(pa.timestamp("us", tz=typ.tz))
    if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return array.cast(pa.string())
    if pa.types.is_large_binary(typ) or pa.types.is_binary_view(typ):
        return array.cast(pa.binary())
    if pa.types.is_decimal(typ) and typ.bit_width == 256:
        return array.cast(pa.decimal128(38, min(typ.scale, 38)))
    known = (
        pa.types.is_boolean(typ)
        or pa.types.is_integer(typ)
        or pa.types.is_floating(typ)
        or pa.types.is_decimal(typ)
        or pa.types.is_date32(typ)
        or pa.types.is_timestamp(typ)
        or pa.types.is_string(typ)
        or pa.types.is_binary(typ)
    )
    if known:
        return array
    try:
        return pc.cast(array, pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        # No Arrow kernel formats this type (intervals, nested types); it is rare in results.
        values = array.to_pylist()
        return pa.array([None if v is None else str(v) for v in values], pa.string())


_OID_BY_DUCKDB = {
    "BOOLEAN": OID_BOOL,
    "TINYINT": OID_INT2,
    "SMALLINT": OID_INT2,
    "UTINYINT": OID_INT2,
    "INTEGER": OID_INT4,
    "USMALLINT": OID_INT4,
    "BIGINT": OID_INT8,
    "UINTEGER": OID_INT8,
    "UBIGINT": OID_NUMERIC,
    "HUGEINT": OID_NUMERIC,
    "UHUGEINT": OID_NUMERIC,
    "FLOAT": OID_FLOAT4,
    "DOUBLE": OID_FLOAT8,
    "VARCHAR": OID_TEXT,
    "BLOB": OID_BYTEA,
    "DATE": OID_DATE,
    "TIMESTAMP": OID_TIMESTAMP,
    "TIMESTAMP WITH TIME ZONE": OID_TIMESTAMPTZ,
    "TIMESTAMP_S": OID_TIMESTAMP,
    "TIMESTAMP_MS": OID_TIMESTAMP,
    "TIMESTAMP_NS": OID_TIMESTAMP,
}


def wire_oid(duckdb_type: str) -> int:
    """The PostgreSQL OID a DuckDB result column is sent as; text for anything exotic."""
    if duckdb_type.startswith("DECIMAL"):
        return OID_NUMERIC
    return _OID_BY_DUCKDB.get(duckdb_type, OID_TEXT)


_ARROW_BY_OID = {
    OID_BOOL: pa.bool_(),
    OID_INT2: pa.int16(),
    OID_INT4: pa.int32(),
    OID_INT8: pa.int64(),
    OID_FLOAT4: pa.float32(),
    OID_FLOAT8: pa.float64(),
    OID_TEXT: pa.string(),
    OID_VARCHAR: pa.string(),
    OID_BYTEA: pa.binary(),
    OID_DATE: pa.date32(),
    OID_TIMESTAMP: pa.timestamp("us"),
    OID_TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
}


def to_wire(array: pa.Array | pa.ChunkedArray, oid: int) -> pa.Array | pa.ChunkedArray:
    """Give a result column exactly the Arrow type the wire layer encodes ``oid`` from."""
    if oid == OID_NUMERIC:
        if pa.types.is_decimal(array.type):
            return normalize_for_wire(array)
        return array.cast(pa.decimal128(38, 0))
    target = _ARROW_BY_OID.get(oid)
    if target is None or array.type == target:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    if oid in (OID_TEXT, OID_VARCHAR):
        return normalize_for_wire(array)
    return array.cast(target)
