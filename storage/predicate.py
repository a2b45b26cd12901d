"""ColumnPredicate and ScanSpec: what a scan reads and which rows it keeps.

The planner pushes conjuncts of the form ``column <op> constant`` down as
``ColumnPredicate``s (Kudu's ``column_predicate.h``); a tablet evaluates them
with Arrow compute kernels and returns only the rows where all of them hold.
A ``ScanSpec`` bundles the projection, the predicates and a row limit, and
derives the primary-key byte range a tablet can seek to instead of scanning.

Predicate values are Python values of the column's type: int, float, str,
bytes, bool, ``decimal.Decimal``, ``datetime.date``, and ``datetime.datetime``
(UTC-aware for timestamptz, naive for timestamp).  SQL NULL semantics hold:
a NULL never satisfies a comparison, so such rows are dropped.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import ColumnId, DataType, TypeKind
from storage.key_encoding import encode_value, prefix_successor
from storage.schema import ColumnSchema, Schema

_INTEGER_KINDS = (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64)


class PredicateKind(enum.Enum):
    """The closed set of pushed-down predicates (Kudu's PredicateType)."""

    EQUALITY = "equality"
    RANGE = "range"
    IN_LIST = "in_list"
    IS_NULL = "is_null"
    IS_NOT_NULL = "is_not_null"
    PREFIX = "prefix"


@dataclass(frozen=True, slots=True)
class ColumnPredicate:
    """One condition on one column; build it with the class-method constructors.

    RANGE: ``lower`` and ``upper`` are optional (None = unbounded); by default
    the lower bound is inclusive and the upper exclusive (Kudu's convention),
    and ``lower_inclusive`` / ``upper_inclusive`` say otherwise, so ``a > 5``
    and ``a <= 9`` need no successor values.
    """

    column_id: ColumnId
    kind: PredicateKind
    value: object = None
    lower: object = None
    upper: object = None
    lower_inclusive: bool = True
    upper_inclusive: bool = False
    values: tuple[object, ...] = ()

    @classmethod
    def equality(cls, column_id: ColumnId, value: object) -> ColumnPredicate:
        return cls(column_id, PredicateKind.EQUALITY, value=value)

    @classmethod
    def range(
        cls,
        column_id: ColumnId,
        lower: object = None,
        upper: object = None,
        *,
        lower_inclusive: bool = True,
        upper_inclusive: bool = False,
    ) -> ColumnPredicate:
        assert lower is not None or upper is not None, "a range needs at least one bound"
        return cls(
            column_id,
            PredicateKind.RANGE,
            lower=lower,
            upper=upper,
            lower_inclusive=lower_inclusive,
            upper_inclusive=upper_inclusive,
        )

    @classmethod
    def in_list(
        cls, column_id: ColumnId, values: tuple[object, ...] | list[object]
    ) -> ColumnPredicate:
        return cls(column_id, PredicateKind.IN_LIST, values=tuple(values))

    @classmethod
    def is_null(cls, column_id: ColumnId) -> ColumnPredicate:
        return cls(column_id, PredicateKind.IS_NULL)

    @classmethod
    def is_not_null(cls, column_id: ColumnId) -> ColumnPredicate:
        return cls(column_id, PredicateKind.IS_NOT_NULL)

    @classmethod
    def prefix(cls, column_id: ColumnId, prefix: str | bytes) -> ColumnPredicate:
        """Strings starting with ``prefix`` (LIKE 'abc%')."""
        return cls(column_id, PredicateKind.PREFIX, value=prefix)

    def evaluate(self, array: pa.Array) -> pa.BooleanArray:
        """Return a mask that is true exactly where the predicate holds (never null)."""
        kind = self.kind
        if kind is PredicateKind.IS_NULL:
            return pc.is_null(array)
        if kind is PredicateKind.IS_NOT_NULL:
            return pc.is_valid(array)
        if kind is PredicateKind.EQUALITY:
            mask = pc.equal(array, _scalar(self.value, array.type))
        elif kind is PredicateKind.IN_LIST:
            value_set = _value_set(self.values, array.type)
            return pc.fill_null(pc.is_in(array, value_set=value_set, skip_nulls=True), False)
        elif kind is PredicateKind.PREFIX:
            prefix = self.value.decode() if isinstance(self.value, bytes) else self.value
            mask = pc.starts_with(array, pattern=prefix)
        else:
            mask = None
            if self.lower is not None:
                compare = pc.greater_equal if self.lower_inclusive else pc.greater
                mask = compare(array, _scalar(self.lower, array.type))
            if self.upper is not None:
                compare = pc.less_equal if self.upper_inclusive else pc.less
                upper_mask = compare(array, _scalar(self.upper, array.type))
                mask = upper_mask if mask is None else pc.and_(mask, upper_mask)
        return pc.fill_null(mask, False)


def _scalar(value: object, arrow_type: pa.DataType) -> pa.Scalar:
    """``value`` as a scalar for comparing with ``arrow_type`` values.  An int against an
    integer column or a str against a string one is built in that type at once (a point
    lookup's key: one call, not an inference and a cast)."""
    if (type(value) is int and pa.types.is_integer(arrow_type)) or (
        type(value) is str and pa.types.is_string(arrow_type)
    ):
        try:
            return pa.scalar(value, type=arrow_type)
        except (pa.ArrowInvalid, OverflowError):
            pass  # out of the column's range: compare in the wider type, as below
    return _make_scalar(value, arrow_type)


def _make_scalar(value: object, arrow_type: pa.DataType) -> pa.Scalar:
    inferred = pa.scalar(value)
    if inferred.type == arrow_type:
        return inferred
    try:
        return inferred.cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        # Not exactly representable (1.5 against an int column): compare in the wider type.
        return inferred


def _value_set(values: tuple[object, ...], arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(list(values)).cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        # Values the column cannot hold cannot match it; keep the others.
        kept = []
        for value in values:
            scalar = _scalar(value, arrow_type)
            if scalar.type == arrow_type:
                kept.append(scalar)
        return pa.array([s.as_py() for s in kept], type=arrow_type)


@dataclass(frozen=True, slots=True)
class KeyRange:
    """A range of encoded primary keys: ``lower <= key < upper``; None means unbounded."""

    lower: bytes | None = None
    upper: bytes | None = None

    @property
    def is_empty(self) -> bool:
        return self.lower is not None and self.upper is not None and self.lower >= self.upper


@dataclass(frozen=True, slots=True)
class ScanSpec:
    """What one scan of a tablet reads: a projection, a conjunction of predicates and a limit.

    Batches come back with fields named ``str(column_id)`` in ``projection``
    order.  Predicates may name columns outside the projection.  ``limit``
    caps the rows returned after predicates are applied.  ``snapshot``, when
    set, reads the tablet as it was at that timestamp (time travel, without
    the transaction's own writes) instead of at the transaction's snapshot.
    """

    projection: tuple[ColumnId, ...]
    predicates: tuple[ColumnPredicate, ...] = ()
    limit: int | None = None
    snapshot: int | None = None

    def key_range(self, schema: Schema) -> KeyRange:
        """Derive the encoded primary-key range from the key-column predicates.

        EQUALITY predicates on a prefix of the key columns fix a key prefix; a
        RANGE on the next key column narrows it further.  Any other predicate
        only filters.  A constant that is not representable in its column's
        type stops the derivation (the scan is then wider, never wrong).
        """
        by_column: dict[int, list[ColumnPredicate]] = {}
        for predicate in self.predicates:
            by_column.setdefault(predicate.column_id, []).append(predicate)
        key_columns = schema.key_columns
        last = len(key_columns) - 1
        prefix = b""
        for idx, column in enumerate(key_columns):
            predicates = by_column.get(column.id, [])
            equality = next((p for p in predicates if p.kind is PredicateKind.EQUALITY), None)
            if equality is not None:
                encoded = _try_encode(equality.value, column.type, is_last=idx == last)
                if encoded is None:
                    break
                prefix += encoded
                if idx == last:
                    return KeyRange(prefix, prefix + b"\x00")
                continue
            ranged = next((p for p in predicates if p.kind is PredicateKind.RANGE), None)
            if ranged is not None:
                return _range_on_column(prefix, ranged, column.type, is_last=idx == last)
            break
        if not prefix:
            return KeyRange()
        return KeyRange(prefix, prefix_successor(prefix))

    def beyond_key(self, schema: Schema, key_range: KeyRange) -> tuple[ColumnPredicate, ...]:
        """The predicates a scan of ``key_range`` (``key_range(schema)``) must still check.

        When the range is one whole key, every row in it already has the key the
        equality predicates name: those (the first on each key column, an int or
        str compared with an integer or string column, exactly as it was encoded)
        are dropped, so a point lookup judges no predicate row by row.
        """
        if key_range.lower is None or key_range.upper != key_range.lower + b"\x00":
            return self._beyond_byte_range(schema, key_range)
        implied: set[int] = set()
        for column in schema.key_columns:
            equality = next(
                (
                    i
                    for i, p in enumerate(self.predicates)
                    if p.column_id == column.id and p.kind is PredicateKind.EQUALITY
                ),
                None,
            )
            if equality is None or not _exactly_encoded(self.predicates[equality].value, column):
                return self.predicates
            implied.add(equality)
        return tuple(p for i, p in enumerate(self.predicates) if i not in implied)

    def _beyond_byte_range(
        self, schema: Schema, key_range: KeyRange
    ) -> tuple[ColumnPredicate, ...]:
        """A key whose first column is binary (a secondary index's tablet: ``ikey`` then the
        row's key) keeps the order of that column's bytes, so a ``[lower, upper)`` range of
        bytes on it is exactly the key range read: an index lookup then judges no predicate
        row by row either."""
        key_columns = schema.key_columns
        first = key_columns[0]
        if first.type.kind is not TypeKind.BINARY:
            return self.predicates
        on_key = [i for i, p in enumerate(self.predicates) if p.column_id == first.id]
        if len(on_key) != 1:
            return self.predicates
        ranged = self.predicates[on_key[0]]
        if (
            ranged.kind is not PredicateKind.RANGE
            or not ranged.lower_inclusive
            or ranged.upper_inclusive
            or not isinstance(ranged.lower, bytes | None)
            or not isinstance(ranged.upper, bytes | None)
        ):
            return self.predicates
        is_last = len(key_columns) == 1
        bounds = [
            None if bound is None else _try_encode(bound, first.type, is_last=is_last)
            for bound in (ranged.lower, ranged.upper)
        ]
        if any(b is None and v is not None for b, v in zip(bounds, (ranged.lower, ranged.upper))):
            return self.predicates
        if key_range != KeyRange(bounds[0], bounds[1]):
            return self.predicates
        return tuple(p for i, p in enumerate(self.predicates) if i != on_key[0])


def _exactly_encoded(value: object, column: ColumnSchema) -> bool:
    """Whether ``value``'s key encoding means equality with it: an int in an integer column or
    a str in a string one (no rounding or conversion between them)."""
    kind = column.type.kind
    if type(value) is int:
        return kind in _INTEGER_KINDS
    return type(value) is str and kind in (TypeKind.STRING, TypeKind.VARCHAR)


def _range_on_column(
    prefix: bytes, predicate: ColumnPredicate, data_type: DataType, *, is_last: bool
) -> KeyRange:
    lower: bytes | None = prefix or None
    upper = prefix_successor(prefix) if prefix else None
    if predicate.lower is not None:
        encoded = _try_encode(predicate.lower, data_type, is_last=is_last)
        if encoded is not None:
            lower = prefix + encoded
            if not predicate.lower_inclusive:
                lower = _after_all_starting_with(lower, is_last=is_last)
    if predicate.upper is not None:
        encoded = _try_encode(predicate.upper, data_type, is_last=is_last)
        if encoded is not None:
            upper = prefix + encoded
            if predicate.upper_inclusive:
                upper = _after_all_starting_with(upper, is_last=is_last)
    return KeyRange(lower, upper)


def _after_all_starting_with(encoded: bytes, *, is_last: bool) -> bytes | None:
    # The last column's value ends the key, so its immediate successor is one 00 byte longer;
    # an earlier column's encoding is followed by more columns, so skip the whole prefix.
    return encoded + b"\x00" if is_last else prefix_successor(encoded)


def _try_encode(value: object, data_type: DataType, *, is_last: bool) -> bytes | None:
    try:
        return encode_value(value, data_type, is_last=is_last)
    except (ValueError, OverflowError):
        return None
