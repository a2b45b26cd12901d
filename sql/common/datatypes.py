"""Map SQL type spellings onto Kudu's DataTypes and query-result Arrow types onto PostgreSQL OIDs.

CREATE TABLE accepts PostgreSQL's names for Kudu's types plus Impala's
(TINYINT for int8, STRING, BINARY).  Query results come back from DuckDB as
Arrow; ``wire_oid`` says which PostgreSQL type each DuckDB column is sent as,
and ``to_wire`` casts its Arrow array to the type the wire encoder for that
OID expects.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from sql.common.uuid_values import engine_uuid
from storage import data_type as t
from storage.data_type import (
    MAX_DECIMAL_PRECISION,
    MAX_NUMERIC_PRECISION,
    UNCONSTRAINED_NUMERIC_SCALE,
    DataType,
    TypeKind,
)
from storage.errors import FeatureNotSupported, InvalidParameterValue
from storage.type_oids import ARRAY_OID, TypeOid

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
    DT.UUID: t.UUID,
    DT.JSON: t.JSON,
    DT.JSONB: t.JSONB,
}

# OIDs of the PostgreSQL types query results are sent as.


def _int_arg(node: exp.Expr, what: str) -> int:
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
    if kind in (DT.CHAR, DT.NCHAR, DT.BPCHAR):
        # char without a length is char(1); bpchar without one has no limit (PostgreSQL).
        if not node.expressions:
            return t.bpchar(None if kind is DT.BPCHAR else 1)
        length = _int_arg(node.expressions[0], "length")
        if length < 1:
            raise InvalidParameterValue("length for type char must be at least 1")
        return t.bpchar(length)
    if kind is DT.DECIMAL:
        if not node.expressions:
            return t.unconstrained_numeric()
        precision = _int_arg(node.expressions[0], "precision")
        scale = _int_arg(node.expressions[1], "scale") if len(node.expressions) > 1 else 0
        if not 1 <= precision <= MAX_NUMERIC_PRECISION:
            raise InvalidParameterValue(
                f"NUMERIC precision {precision} must be between 1 and {MAX_NUMERIC_PRECISION}"
            )
        if not 0 <= scale <= precision:
            raise InvalidParameterValue(
                f"NUMERIC scale {scale} must be between 0 and precision {precision}"
            )
        if scale > MAX_DECIMAL_PRECISION:
            raise FeatureNotSupported(
                f"NUMERIC scale {scale} is above nyala's limit of {MAX_DECIMAL_PRECISION}",
                hint="Values are held in 128 bits: at most 38 digits, all of them may be fraction.",
            )
        return t.decimal(precision, scale)
    raise FeatureNotSupported(f"type {node.sql(dialect='postgres').lower()} is not supported")


def duckdb_type(dtype: DataType) -> str:
    """Spell a Kudu type for a DuckDB CAST."""
    k = dtype.kind
    if k is TypeKind.DECIMAL:
        precision = min(dtype.precision or MAX_DECIMAL_PRECISION, MAX_DECIMAL_PRECISION)
        return f"DECIMAL({precision},{dtype.scale or 0})"
    if k is TypeKind.TIMESTAMP:
        return "TIMESTAMPTZ" if dtype.with_time_zone else "TIMESTAMP"
    if dtype.text_type:
        # jsonb is DuckDB's JSON too; the planner normalises what is cast to it.
        return "UUID" if dtype.text_type == "uuid" else "JSON"
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
            return TypeOid.NUMERIC
        # Times are no column type yet, but are values (``$1::time``, ``'12:30'::timetz``).
        return _TIME_OIDS.get(node.this, 0)


_TIME_OIDS = {DT.TIME: int(TypeOid.TIME), DT.TIMETZ: int(TypeOid.TIMETZ)}


def oid_type_name(oid: int) -> str | None:
    """DuckDB type name to CAST a parameter of PostgreSQL type ``oid`` to (None: leave it)."""
    return _DUCKDB_BY_OID.get(TypeOid(oid)) if oid in _DUCKDB_BY_OID else None


_DUCKDB_BY_OID = {
    TypeOid.BOOL: "BOOLEAN",
    TypeOid.BYTEA: "BLOB",
    TypeOid.INT8: "BIGINT",
    TypeOid.INT2: "SMALLINT",
    TypeOid.INT4: "INTEGER",
    TypeOid.TEXT: "VARCHAR",
    TypeOid.VARCHAR: "VARCHAR",
    TypeOid.FLOAT4: "REAL",
    TypeOid.FLOAT8: "DOUBLE",
    TypeOid.DATE: "DATE",
    TypeOid.TIMESTAMP: "TIMESTAMP",
    TypeOid.TIMESTAMPTZ: "TIMESTAMPTZ",
    TypeOid.TIME: "TIME",
    TypeOid.TIMETZ: "TIMETZ",
    TypeOid.NUMERIC: f"DECIMAL({MAX_DECIMAL_PRECISION},{UNCONSTRAINED_NUMERIC_SCALE})",
    TypeOid.UUID: "UUID",
    TypeOid.JSON: "JSON",
    TypeOid.JSONB: "JSON",
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
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return pa.array(
            [None if v is None else array_literal(v) for v in array.to_pylist()], pa.string()
        )
    try:
        return pc.cast(array, pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        # No Arrow kernel formats this type (intervals, nested types); it is rare in results.
        values = array.to_pylist()
        return pa.array([None if v is None else str(v) for v in values], pa.string())


_ARRAY_SPECIAL = set('{},"\\') | set(" \t\n\r\v\f")


def _timestamp_text(value: dt.datetime) -> str:
    """PostgreSQL's ISO text of a timestamp: no trailing fraction zeros, offset ``+00``."""
    text = value.replace(tzinfo=None).isoformat(sep=" ")
    if "." in text:
        text = text.rstrip("0")
    offset = value.utcoffset()
    if offset is None:
        return text
    seconds = int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    zone = f"{sign}{hours:02d}" + (f":{minutes:02d}" if minutes or secs else "")
    return text + zone + (f":{secs:02d}" if secs else "")


def _float_text(value: float) -> str:
    """PostgreSQL's shortest exact text of a float (``1``, ``1.5``, ``1e+20``, ``NaN``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _element_text(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, list):
        return array_literal(value)
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dt.datetime):
        text = _timestamp_text(value)
    elif isinstance(value, dt.date):
        text = value.isoformat()
    elif isinstance(value, float):
        text = _float_text(value)
    elif isinstance(value, Decimal):
        text = format(value, "f")
    else:
        text = str(value)
    if isinstance(value, (str, dt.datetime)) and (
        not text or text.upper() == "NULL" or any(c in _ARRAY_SPECIAL for c in text)
    ):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def array_literal(values: list[object]) -> str:
    """An array value as PostgreSQL's array_out writes it: ``{1,2,NULL}``, ``{"a b",c}``."""
    return "{" + ",".join(_element_text(v) for v in values) + "}"


_OID_BY_DUCKDB = {
    "BOOLEAN": TypeOid.BOOL,
    "TINYINT": TypeOid.INT2,
    "SMALLINT": TypeOid.INT2,
    "UTINYINT": TypeOid.INT2,
    "INTEGER": TypeOid.INT4,
    "USMALLINT": TypeOid.INT4,
    "BIGINT": TypeOid.INT8,
    "UINTEGER": TypeOid.INT8,
    "UBIGINT": TypeOid.NUMERIC,
    "HUGEINT": TypeOid.NUMERIC,
    "UHUGEINT": TypeOid.NUMERIC,
    "FLOAT": TypeOid.FLOAT4,
    "DOUBLE": TypeOid.FLOAT8,
    "VARCHAR": TypeOid.TEXT,
    "BLOB": TypeOid.BYTEA,
    "DATE": TypeOid.DATE,
    "TIMESTAMP": TypeOid.TIMESTAMP,
    "TIMESTAMP WITH TIME ZONE": TypeOid.TIMESTAMPTZ,
    "TIMESTAMP_S": TypeOid.TIMESTAMP,
    "TIMESTAMP_MS": TypeOid.TIMESTAMP,
    "TIMESTAMP_NS": TypeOid.TIMESTAMP,
    "INTERVAL": TypeOid.INTERVAL,
    "TIME": TypeOid.TIME,
    "UUID": TypeOid.UUID,
    "JSON": TypeOid.JSON,
}


# DuckDB's spellings in DDL (the emulated catalogs declare columns so) beside its result names.
_OID_BY_DUCKDB["REAL"] = TypeOid.FLOAT4
_OID_BY_DUCKDB["TIMESTAMPTZ"] = TypeOid.TIMESTAMPTZ


INT2VECTOR_DUCKDB = "USMALLINT[]"
"""How the emulated catalogs hold int2vector columns (pg_index.indkey, indoption): an
attnum list DuckDB can unnest and index, sent as PostgreSQL sends int2vector (``1 2``)."""


def wire_oid(duckdb_type: str, *, catalog: bool = False) -> int:
    """The PostgreSQL OID a DuckDB result column is sent as; text for anything exotic.

    In the emulated catalogs (``catalog``) UINTEGER columns hold OIDs and are sent
    as ``oid``; in user queries a UINTEGER is a number and is sent as ``int8``.  An
    array is sent as its element type's array type (text[] for anything exotic).
    """
    if catalog and duckdb_type == INT2VECTOR_DUCKDB:
        return TypeOid.INT2VECTOR
    if duckdb_type.endswith("[]"):
        element = wire_oid(duckdb_type.removesuffix("[]").rstrip("[]"), catalog=catalog)
        return ARRAY_OID.get(TypeOid(element), ARRAY_OID[TypeOid.TEXT])
    if catalog and duckdb_type == "UINTEGER":
        return TypeOid.OID
    if duckdb_type.startswith("DECIMAL"):
        return TypeOid.NUMERIC
    return _OID_BY_DUCKDB.get(duckdb_type, TypeOid.TEXT)


_ARROW_BY_OID = {
    TypeOid.BOOL: pa.bool_(),
    TypeOid.INT2: pa.int16(),
    TypeOid.INT4: pa.int32(),
    TypeOid.INT8: pa.int64(),
    TypeOid.FLOAT4: pa.float32(),
    TypeOid.FLOAT8: pa.float64(),
    TypeOid.TEXT: pa.string(),
    TypeOid.VARCHAR: pa.string(),
    TypeOid.BYTEA: pa.binary(),
    TypeOid.DATE: pa.date32(),
    TypeOid.TIMESTAMP: pa.timestamp("us"),
    TypeOid.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
    TypeOid.INTERVAL: pa.month_day_nano_interval(),
    TypeOid.TIME: pa.time64("us"),
    TypeOid.UUID: pa.string(),
    TypeOid.JSON: pa.string(),
    TypeOid.JSONB: pa.string(),
}


_UNCONSTRAINED = t.unconstrained_numeric().arrow_type
TRAILING_ZEROS = r"(\.[0-9]*[1-9])0+$|\.0+$"


def unconstrained_numeric_text(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Unconstrained numeric values as text, each at the smallest scale that shows it exactly.

    They are held at a fixed scale, so the input's own trailing zeros are gone: PostgreSQL
    shows ``1.50`` where nyala shows ``1.5`` (the value is the same, exactly).
    """
    text = pc.cast(array, pa.string())
    exponent = pc.fill_null(pc.match_substring(text, "E"), False)
    if pc.any(exponent).as_py():
        # Per value: Arrow writes an exponent only below 1e-6, which few values are.
        values = (
            text.to_pylist() if isinstance(text, pa.Array) else text.combine_chunks().to_pylist()
        )
        text = pa.array(
            [None if v is None else format(Decimal(v), "f") for v in values], pa.string()
        )
    return pc.replace_substring_regex(text, pattern=TRAILING_ZEROS, replacement="\\1")


def to_wire(
    array: pa.Array | pa.ChunkedArray, oid: int, time_zone: str = "UTC", typmod: int = -1
) -> pa.Array | pa.ChunkedArray:
    """Give a result column exactly the Arrow type the wire layer encodes ``oid`` from; a
    ``timestamptz`` carries the session's zone, in which the wire layer writes it as text,
    and a ``char(n)`` (stored without its padding) is padded to n again."""
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        return normalize_for_wire(array)  # array_out's text, which array_send also reads
    if oid == TypeOid.BPCHAR:
        text = normalize_for_wire(array)
        return pc.utf8_rpad(text, width=typmod - 4, padding=" ") if typmod > 4 else text
    if oid == TypeOid.TIMESTAMPTZ and time_zone != "UTC":
        return to_wire(array, oid).cast(pa.timestamp("us", tz=time_zone))
    if oid == TypeOid.NUMERIC:
        if typmod == -1 and array.type == _UNCONSTRAINED:
            return unconstrained_numeric_text(array)
        if pa.types.is_decimal(array.type):
            return normalize_for_wire(array)
        return array.cast(pa.decimal128(38, 0))
    target = _ARROW_BY_OID.get(TypeOid(oid)) if oid in _ARROW_BY_OID else None
    if target is None or array.type == target:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    if oid in (TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.UUID, TypeOid.JSON, TypeOid.JSONB):
        return normalize_for_wire(array)
    return array.cast(target)


def engine_type(dtype: DataType) -> pa.DataType:
    """The Arrow type a scan hands DuckDB a column as: uuid and json(b) as Arrow's canonical
    extension types, which DuckDB reads as its UUID and JSON; anything else as stored."""
    if dtype.text_type == "uuid":
        return pa.uuid()
    if dtype.text_type:
        return pa.json_()
    return dtype.arrow_type


def engine_array(array: pa.Array, dtype: DataType) -> pa.Array:
    """A stored column as ``engine_type`` has it (zero-copy for json, a numpy pass for uuid)."""
    if dtype.text_type == "uuid":
        return engine_uuid(array)
    if dtype.text_type:
        return pa.ExtensionArray.from_storage(pa.json_(), array.cast(pa.string()))
    return array
