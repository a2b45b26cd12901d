"""Assigned values: a key write's values checked as PostgreSQL checks an assignment, as Arrow.

The key-write path (key_writes.py) stores parameters and literals without
DuckDB's casts, so it applies PostgreSQL's assignment rules itself: NOT NULL,
integer ranges (22003), float4 overflow, numeric rounding and precision, and
varchar lengths (22001, trailing spaces cut).  A value it cannot judge raises
``Fallback``, and the statement runs the general way.  ``row_batch`` builds a
one-row write as one Arrow struct conversion: a single-row INSERT or UPDATE
is the common case, and a conversion per column cost more than the checks.
"""

from __future__ import annotations

import decimal
import math
from typing import cast

import numpy as np
import pyarrow as pa

from catalog.table import TableInfo
from storage.data_type import TypeKind
from storage.errors import (
    FeatureNotSupported,
    NotNullViolation,
    NumericValueOutOfRange,
    StringDataRightTruncation,
)
from storage.schema import ColumnSchema

INT_LIMITS = {
    TypeKind.INT8: (2**7, "smallint"),
    TypeKind.INT16: (2**15, "smallint"),
    TypeKind.INT32: (2**31, "integer"),
    TypeKind.INT64: (2**63, "bigint"),
}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


class Fallback(Exception):
    """A value the key-write path cannot judge: run the statement the general way."""


def row_type(columns: list[ColumnSchema]) -> pa.StructType:
    """The Arrow struct of one written row: fields named by column ID, as storage reads them."""
    return pa.struct([pa.field(str(c.id), c.type.arrow_type) for c in columns])


def row_batch(values: tuple[object, ...], struct: pa.StructType) -> pa.RecordBatch:
    """One row of checked ``values`` as a batch of ``struct``'s fields (Fallback if a value
    does not convert, as ``as_arrow``)."""
    return rows_batch([values], struct)


def rows_batch(rows: list[tuple[object, ...]], struct: pa.StructType) -> pa.RecordBatch:
    """Rows of checked values as one batch of ``struct``'s fields, converted at once
    (Fallback if a value does not convert, as ``as_arrow``)."""
    try:
        return pa.RecordBatch.from_struct_array(pa.array(rows, type=struct))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise Fallback from exc


def assigned(values: list[object], column: ColumnSchema, table: TableInfo) -> pa.Array:
    """``values`` as the column's Arrow type, checked as PostgreSQL checks an assignment."""
    return as_arrow(checked(values, column, table), column)


def compared(value: object, column: ColumnSchema, table: TableInfo) -> object:
    """A key value an UPDATE's or DELETE's WHERE compares with, as the key stores it; a
    value the assignment checks would refuse or change (NULL, too long, out of range,
    rounded) is compared, not assigned, in PostgreSQL: Fallback, for the general path."""
    if value is None:
        raise Fallback
    limits = INT_LIMITS.get(column.type.kind)
    if limits is not None and type(value) is int:  # the usual key: what _checked gives
        if not -limits[0] <= value < limits[0]:
            raise Fallback
        return value
    try:
        (stored,) = checked([value], column, table)
    except (NotNullViolation, NumericValueOutOfRange, StringDataRightTruncation) as exc:
        raise Fallback from exc
    if stored != value or (
        column.type.kind is TypeKind.FLOAT and float(np.float32(stored)) != stored  # type: ignore[arg-type]  # a float column's cells are floats
    ):
        raise Fallback
    return stored


def compared_all(values: list[object], column: ColumnSchema, table: TableInfo) -> list[object]:
    """``_compared`` of each of ``values`` (a batch's keys), checked as one column."""
    if None in values:
        raise Fallback
    limits = INT_LIMITS.get(column.type.kind)
    if limits is not None and all(type(v) is int for v in values):
        ints = cast(list[int], values)
        if not (-limits[0] <= min(ints) and max(ints) < limits[0]):
            raise Fallback
        return values
    try:
        stored = checked(values, column, table)
    except (NotNullViolation, NumericValueOutOfRange, StringDataRightTruncation) as exc:
        raise Fallback from exc
    if column.type.kind not in (TypeKind.FLOAT, TypeKind.DOUBLE):
        # No NaN here (numeric refuses it), so the lists' own comparison is the elementwise one.
        if stored is not values and stored != values:
            raise Fallback
        return stored
    if any(s != v for s, v in zip(stored, values, strict=True)):
        raise Fallback
    if column.type.kind is TypeKind.FLOAT and any(
        float(np.float32(s)) != s  # type: ignore[arg-type]  # a float column's cells are floats
        for s in stored
    ):
        raise Fallback
    return stored


def as_arrow(values: list[object], column: ColumnSchema) -> pa.Array:
    """Checked ``values`` as the column's Arrow type (Fallback if they do not convert)."""
    try:
        return pa.array(values, type=column.type.arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise Fallback from exc


def checked(values: list[object], column: ColumnSchema, table: TableInfo) -> list[object]:
    """``values`` checked as PostgreSQL checks an assignment to ``column``, as stored
    (numerics rounded to the scale, varchars' trailing spaces past the limit cut)."""
    kind = column.type.kind
    if not column.nullable and None in values:
        raise NotNullViolation(
            f'null value in column "{column.name}" of relation "{table.name}" '
            "violates not-null constraint"
        )
    if kind in INT_LIMITS:
        limit, name = INT_LIMITS[kind]
        if any(v is not None and not -limit <= v < limit for v in values):  # type: ignore[operator]  # an int column's cells are ints
            raise NumericValueOutOfRange(f"{name} out of range")
    elif kind is TypeKind.FLOAT:
        for v in values:
            if v is not None and math.isfinite(v) and abs(v) > _FLOAT32_MAX:  # type: ignore[arg-type]  # a float column's cells are floats
                raise NumericValueOutOfRange("value out of range: overflow")
    elif kind is TypeKind.DECIMAL:
        values = [None if v is None else numeric(v, column) for v in values]
    elif kind is TypeKind.VARCHAR and column.type.length is not None:
        limit = column.type.length
        texts = [None if v is None else str(v) for v in values]  # varchar cells are str
        if any(v is not None and len(v) > limit for v in texts):
            # characters past the limit that are all spaces are cut, as PostgreSQL stores them
            if any(v is not None and v[limit:].strip(" ") for v in texts):
                raise StringDataRightTruncation(f"value too long for type {column.type.pg_name()}")
            values = [None if v is None else v[:limit] for v in texts]
    if column.type.blank_padded:
        values = [None if v is None else str(v).rstrip(" ") for v in values]
    return values


def checked_value(value: object, column: ColumnSchema, table: TableInfo) -> object:
    """``checked`` of one value; the usual ones (an integer in range, unbounded text, NULL
    where it is allowed) pass without building lists."""
    if value is None:
        if column.nullable:
            return None
    elif type(value) is int:
        limits = INT_LIMITS.get(column.type.kind)
        if limits is not None and -limits[0] <= value < limits[0]:
            return value
    elif (
        type(value) is str and column.type.kind is TypeKind.STRING and not column.type.blank_padded
    ):
        return value
    return checked([value], column, table)[0]


_WIDE = decimal.Context(prec=2000)  # quantize never fails for want of digits; the check below


def numeric(value: object, column: ColumnSchema) -> decimal.Decimal:
    """Round to the column's scale (half away from zero, as PostgreSQL) and check precision."""
    if isinstance(value, decimal.Decimal) and value.is_nan():
        # nyala's decimal storage has no NaN (README, numeric): refused, not an overflow.
        raise FeatureNotSupported("numeric value 'NaN' is not supported")
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise Fallback
    precision = min(column.type.precision or 38, 38)
    scale = column.type.scale or 0
    rounded = value.quantize(
        decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP, context=_WIDE
    )
    if column.type.precision is None and rounded != value:
        # An unconstrained numeric is exact in PostgreSQL: never round it silently.
        raise NumericValueOutOfRange(
            "numeric field overflow",
            detail=f"An unconstrained numeric column holds at most {scale} fraction digits.",
        )
    if rounded.adjusted() >= precision - scale:
        raise NumericValueOutOfRange(
            "numeric field overflow",
            detail=f"A field with precision {precision}, scale {scale} must round to an "
            f"absolute value less than 10^{precision - scale}.",
        )
    return rounded
