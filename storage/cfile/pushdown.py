"""Min/max block skipping: whether a block's value range can hold a row matching a predicate.

A block's index entry carries the min and max of its non-null values in
physical form (dates as days, timestamps as microseconds, decimals as text,
binary as hex).  A predicate constant is brought to the same form; when that
fails the block is read (skipping is an optimisation, never a filter).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa

from storage.cfile.reader import BlockMeta
from storage.data_type import DataType, TypeKind
from storage.predicate import ColumnPredicate, PredicateKind

_UNKNOWN = object()
_EPOCH_DAY = dt.date(1970, 1, 1)


def block_may_match(predicate: ColumnPredicate, meta: BlockMeta, data_type: DataType) -> bool:
    kind = predicate.kind
    if kind is PredicateKind.IS_NULL:
        return meta.null_count > 0
    if kind is PredicateKind.IS_NOT_NULL:
        return meta.null_count < meta.rows
    if meta.null_count == meta.rows:
        return False
    if meta.min is None:
        return True
    lo, hi = _bound(meta.min, data_type), _bound(meta.max, data_type)
    try:
        if kind is PredicateKind.EQUALITY:
            value = physical(predicate.value, data_type)
            return value is _UNKNOWN or lo <= value <= hi
        if kind is PredicateKind.IN_LIST:
            values = [physical(v, data_type) for v in predicate.values]
            return any(v is _UNKNOWN or lo <= v <= hi for v in values)
        if kind is PredicateKind.PREFIX:
            prefix = physical(predicate.value, data_type)
            if prefix is _UNKNOWN:
                return True
            return bool(lo[: len(prefix)] <= prefix <= hi[: len(prefix)])
        if predicate.lower is not None:
            lower = physical(predicate.lower, data_type)
            if lower is not _UNKNOWN and (
                hi < lower or (hi == lower and not predicate.lower_inclusive)
            ):
                return False
        if predicate.upper is not None:
            upper = physical(predicate.upper, data_type)
            if upper is not _UNKNOWN and (
                lo > upper or (lo == upper and not predicate.upper_inclusive)
            ):
                return False
        return True
    except TypeError:
        return True


def _bound(value: Any, data_type: DataType) -> Any:
    """A block's min or max as comparable with ``physical`` values (the footer holds BINARY
    bounds as hex and DECIMAL bounds as strings); Any, since each column type has its own."""
    if data_type.kind is TypeKind.BINARY:
        return bytes.fromhex(value)
    if data_type.kind is TypeKind.DECIMAL:
        return decimal.Decimal(value)
    return value


def physical(value: object, data_type: DataType) -> Any:
    """``value`` in the form block min/max use, or _UNKNOWN (Any: the form depends on the
    column type, and a mismatch surfaces as the TypeError ``block_may_match`` catches)."""
    kind = data_type.kind
    try:
        if kind is TypeKind.DATE:
            if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
                return (value - _EPOCH_DAY).days
            return _UNKNOWN
        if kind is TypeKind.TIMESTAMP:
            if isinstance(value, dt.datetime):
                return pa.scalar(value, data_type.arrow_type).cast(pa.int64()).as_py()
            return _UNKNOWN
        if kind is TypeKind.BOOL:
            return int(value) if isinstance(value, bool) else _UNKNOWN
        if kind is TypeKind.DECIMAL:
            if isinstance(value, (int, decimal.Decimal)):
                return decimal.Decimal(value)
            return _UNKNOWN
        if kind is TypeKind.BINARY:
            return value if isinstance(value, bytes) else _UNKNOWN
        if data_type.is_string:
            return value if isinstance(value, str) else _UNKNOWN
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value if value == value else _UNKNOWN
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError):
        return _UNKNOWN
    return _UNKNOWN
