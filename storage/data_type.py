"""Kudu's column types, each knowing its Arrow type, numpy dtype and PostgreSQL type OID.

A ``DataType`` is a ``TypeKind`` plus the parameters some kinds take
(precision and scale for DECIMAL, a length limit for VARCHAR, whether a
VARCHAR is PostgreSQL's blank-padded ``char(n)``, whether a TIMESTAMP came
from ``timestamptz``).  A ``char(n)`` is stored as Kudu's string without its
trailing spaces: PostgreSQL ignores them in every comparison and drops them
whenever the value becomes text, so only the wire output pads it again.
``uuid``, ``json`` and ``jsonb`` have no Kudu twin and are stored as Kudu's string
(``text_type`` names which): a uuid as its canonical lower-case text, whose byte
order is the order of the 16 bytes PostgreSQL compares (fixed width, hex digits in
ASCII order), so key order, range partitions and hashing need nothing of their own;
json as the text given (PostgreSQL keeps json verbatim); jsonb as PostgreSQL's
normalised output text (keys sorted, duplicates gone), so equal documents are equal
strings.  Every layer names types this way:
storage lays out values by it, the SQL layer maps PostgreSQL spellings onto
it, and the wire layer asks it for the OID and typmod to describe a column.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NewType

import numpy as np
import pyarrow as pa

from storage.type_oids import TypeOid

ColumnId = NewType("ColumnId", int)
TabletId = NewType("TabletId", int)
RowId = NewType("RowId", int)

MAX_DECIMAL_PRECISION = 38
# PostgreSQL's numeric(p,s) limit.  Values are still held in 128 bits (Arrow's and DuckDB's
# widest decimal), so a numeric(p,s) with p > 38 keeps up to 38 digits and a value needing
# more fails with 22003; an unconstrained ``numeric`` is held at a fixed scale of
# UNCONSTRAINED_NUMERIC_SCALE digits and a value with more fraction digits fails with 22003.
MAX_NUMERIC_PRECISION = 1000
UNCONSTRAINED_NUMERIC_SCALE = 10


class TypeKind(enum.Enum):
    """The physical kinds Kudu stores."""

    BOOL = "bool"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    VARCHAR = "varchar"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "unixtime_micros"


# Kudu's INT8 has no PostgreSQL twin; it is shown as int2.
_PG_OID = {
    TypeKind.BOOL: TypeOid.BOOL,
    TypeKind.INT8: TypeOid.INT2,
    TypeKind.INT16: TypeOid.INT2,
    TypeKind.INT32: TypeOid.INT4,
    TypeKind.INT64: TypeOid.INT8,
    TypeKind.FLOAT: TypeOid.FLOAT4,
    TypeKind.DOUBLE: TypeOid.FLOAT8,
    TypeKind.DECIMAL: TypeOid.NUMERIC,
    TypeKind.VARCHAR: TypeOid.VARCHAR,
    TypeKind.STRING: TypeOid.TEXT,
    TypeKind.BINARY: TypeOid.BYTEA,
    TypeKind.DATE: TypeOid.DATE,
    TypeKind.TIMESTAMP: TypeOid.TIMESTAMP,
}

_INTEGER_RANGES = {
    TypeKind.INT8: (-(2**7), 2**7 - 1),
    TypeKind.INT16: (-(2**15), 2**15 - 1),
    TypeKind.INT32: (-(2**31), 2**31 - 1),
    TypeKind.INT64: (-(2**63), 2**63 - 1),
}


@dataclass(frozen=True, slots=True)
class DataType:
    """One column type: a kind and its parameters."""

    kind: TypeKind
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    with_time_zone: bool = False
    blank_padded: bool = False
    text_type: str = ""
    """``uuid``, ``json`` or ``jsonb`` for those types, which are stored as STRING."""

    @property
    def is_integer(self) -> bool:
        return self.kind in _INTEGER_RANGES

    @property
    def is_floating(self) -> bool:
        return self.kind in (TypeKind.FLOAT, TypeKind.DOUBLE)

    @property
    def is_string(self) -> bool:
        return self.kind in (TypeKind.STRING, TypeKind.VARCHAR)

    @property
    def integer_range(self) -> tuple[int, int]:
        return _INTEGER_RANGES[self.kind]

    @property
    def arrow_type(self) -> pa.DataType:
        k = self.kind
        if k is TypeKind.DECIMAL:
            precision = min(self.precision or MAX_DECIMAL_PRECISION, MAX_DECIMAL_PRECISION)
            return pa.decimal128(precision, self.scale or 0)
        if k is TypeKind.TIMESTAMP:
            return pa.timestamp("us", tz="UTC" if self.with_time_zone else None)
        return _ARROW[k]

    @property
    def numpy_dtype(self) -> np.dtype:
        """The dtype of a decoded fixed-width block; object for variable-width kinds."""
        return _NUMPY.get(self.kind, np.dtype(object))

    @property
    def pg_oid(self) -> int:
        if self.blank_padded:
            return int(TypeOid.BPCHAR)
        if self.text_type:
            return int(_TEXT_TYPE_OID[self.text_type])
        if self.kind is TypeKind.TIMESTAMP and self.with_time_zone:
            return int(TypeOid.TIMESTAMPTZ)
        return int(_PG_OID[self.kind])

    @property
    def pg_typmod(self) -> int:
        """The atttypmod PostgreSQL reports: -1, varchar n+4, numeric ((p<<16)|s)+4."""
        if self.kind is TypeKind.VARCHAR and self.length is not None:
            return self.length + 4
        if self.kind is TypeKind.DECIMAL and self.precision is not None:
            return ((self.precision << 16) | (self.scale or 0)) + 4
        return -1

    def pg_name(self) -> str:
        """Spell the type as PostgreSQL's format_type() would."""
        k = self.kind
        if self.text_type:
            return self.text_type
        if k is TypeKind.DECIMAL and self.precision is None:
            return "numeric"
        if k is TypeKind.DECIMAL:
            return f"numeric({self.precision},{self.scale or 0})"
        if k is TypeKind.VARCHAR and self.blank_padded:
            return f"character({self.length})" if self.length else "bpchar"
        if k is TypeKind.VARCHAR:
            return f"character varying({self.length})" if self.length else "character varying"
        if k is TypeKind.TIMESTAMP:
            return (
                "timestamp with time zone" if self.with_time_zone else "timestamp without time zone"
            )
        return _PG_NAME[k]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind.value}
        for field in ("precision", "scale", "length"):
            value = getattr(self, field)
            if value is not None:
                out[field] = value
        if self.with_time_zone:
            out["with_time_zone"] = True
        if self.blank_padded:
            out["blank_padded"] = True
        if self.text_type:
            out["text_type"] = self.text_type
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> DataType:
        return cls(
            TypeKind(doc["kind"]),
            precision=doc.get("precision"),
            scale=doc.get("scale"),
            length=doc.get("length"),
            with_time_zone=bool(doc.get("with_time_zone", False)),
            blank_padded=bool(doc.get("blank_padded", False)),
            text_type=str(doc.get("text_type", "")),
        )


_TEXT_TYPE_OID = {"uuid": TypeOid.UUID, "json": TypeOid.JSON, "jsonb": TypeOid.JSONB}

_ARROW = {
    TypeKind.BOOL: pa.bool_(),
    TypeKind.INT8: pa.int8(),
    TypeKind.INT16: pa.int16(),
    TypeKind.INT32: pa.int32(),
    TypeKind.INT64: pa.int64(),
    TypeKind.FLOAT: pa.float32(),
    TypeKind.DOUBLE: pa.float64(),
    TypeKind.VARCHAR: pa.string(),
    TypeKind.STRING: pa.string(),
    TypeKind.BINARY: pa.binary(),
    TypeKind.DATE: pa.date32(),
}

_NUMPY = {
    TypeKind.BOOL: np.dtype(np.bool_),
    TypeKind.INT8: np.dtype(np.int8),
    TypeKind.INT16: np.dtype(np.int16),
    TypeKind.INT32: np.dtype(np.int32),
    TypeKind.INT64: np.dtype(np.int64),
    TypeKind.FLOAT: np.dtype(np.float32),
    TypeKind.DOUBLE: np.dtype(np.float64),
    TypeKind.DATE: np.dtype(np.int32),
    TypeKind.TIMESTAMP: np.dtype(np.int64),
}

_PG_NAME = {
    TypeKind.BOOL: "boolean",
    TypeKind.INT8: "smallint",
    TypeKind.INT16: "smallint",
    TypeKind.INT32: "integer",
    TypeKind.INT64: "bigint",
    TypeKind.FLOAT: "real",
    TypeKind.DOUBLE: "double precision",
    TypeKind.STRING: "text",
    TypeKind.BINARY: "bytea",
    TypeKind.DATE: "date",
}

BOOL = DataType(TypeKind.BOOL)
INT8 = DataType(TypeKind.INT8)
INT16 = DataType(TypeKind.INT16)
INT32 = DataType(TypeKind.INT32)
INT64 = DataType(TypeKind.INT64)
FLOAT = DataType(TypeKind.FLOAT)
DOUBLE = DataType(TypeKind.DOUBLE)
STRING = DataType(TypeKind.STRING)
BINARY = DataType(TypeKind.BINARY)
DATE = DataType(TypeKind.DATE)
TIMESTAMP = DataType(TypeKind.TIMESTAMP)
TIMESTAMPTZ = DataType(TypeKind.TIMESTAMP, with_time_zone=True)
UUID = DataType(TypeKind.STRING, text_type="uuid")
JSON = DataType(TypeKind.STRING, text_type="json")
JSONB = DataType(TypeKind.STRING, text_type="jsonb")


def decimal(precision: int, scale: int = 0) -> DataType:
    return DataType(TypeKind.DECIMAL, precision=precision, scale=scale)


def unconstrained_numeric() -> DataType:
    """PostgreSQL's ``numeric`` without a typmod (held at UNCONSTRAINED_NUMERIC_SCALE)."""
    return DataType(TypeKind.DECIMAL, scale=UNCONSTRAINED_NUMERIC_SCALE)


def varchar(length: int | None) -> DataType:
    return DataType(TypeKind.VARCHAR, length=length)


def bpchar(length: int | None) -> DataType:
    """PostgreSQL's ``char(n)`` (``bpchar`` when ``length`` is None)."""
    return DataType(TypeKind.VARCHAR, length=length, blank_padded=True)
