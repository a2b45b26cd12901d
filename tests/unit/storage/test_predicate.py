import datetime as dt
from decimal import Decimal

import pyarrow as pa

from storage.data_type import BINARY, INT32, INT64, STRING, TIMESTAMPTZ, ColumnId, decimal
from storage.key_encoding import encode_key
from storage.predicate import ColumnPredicate, KeyRange, ScanSpec
from storage.schema import ColumnSchema, Schema

P = ColumnPredicate
A, B, C = ColumnId(1), ColumnId(2), ColumnId(3)


def _mask(predicate: ColumnPredicate, array: pa.Array) -> list[bool]:
    result = predicate.evaluate(array)
    assert result.null_count == 0
    return result.to_pylist()


def test_equality_and_in_list_never_match_null():
    ints = pa.array([1, None, 3, 1], pa.int32())
    assert _mask(P.equality(A, 1), ints) == [True, False, False, True]
    assert _mask(P.in_list(A, [3, 1]), ints) == [True, False, True, True]


def test_range_is_lower_inclusive_upper_exclusive_unless_told():
    ints = pa.array([1, 2, 3, 4, None], pa.int64())
    assert _mask(P.range(A, 2, 4), ints) == [False, True, True, False, False]
    assert _mask(P.range(A, 2, 4, lower_inclusive=False, upper_inclusive=True), ints) == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert _mask(P.range(A, upper=2), ints) == [True, False, False, False, False]


def test_null_checks_and_prefix():
    words = pa.array(["apple", None, "apricot", "banana"])
    assert _mask(P.is_null(A), words) == [False, True, False, False]
    assert _mask(P.is_not_null(A), words) == [True, False, True, True]
    assert _mask(P.prefix(A, "ap"), words) == [True, False, True, False]


def test_predicates_take_python_values_of_the_column_type():
    when = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    stamps = pa.array([when, when + dt.timedelta(days=1)], pa.timestamp("us", tz="UTC"))
    assert _mask(P.range(A, lower=when + dt.timedelta(hours=1)), stamps) == [False, True]
    amounts = pa.array([Decimal("1.50"), Decimal("2.25")], pa.decimal128(10, 2))
    assert _mask(P.range(A, Decimal("1.555")), amounts) == [False, True]
    assert _mask(P.equality(A, 1.5), pa.array([1, 2], pa.int32())) == [False, False]


SCHEMA = Schema(
    (
        ColumnSchema(A, "a", INT32, nullable=False),
        ColumnSchema(B, "b", STRING, nullable=False),
        ColumnSchema(C, "c", INT64, nullable=False),
        ColumnSchema(ColumnId(4), "v", STRING),
    ),
    num_key_columns=3,
)
TYPES = [INT32, STRING, INT64]


def _spec(*predicates: ColumnPredicate) -> ScanSpec:
    return ScanSpec((A,), predicates)


def test_full_key_equality_is_a_point_range():
    key = encode_key([1, "x", 5], TYPES)
    assert _spec(P.equality(A, 1), P.equality(B, "x"), P.equality(C, 5)).key_range(SCHEMA) == (
        KeyRange(key, key + b"\x00")
    )


def test_key_range_covers_exactly_the_matching_keys():
    keys = sorted(
        encode_key([a, b, c], TYPES)
        for a in (-1, 1, 2)
        for b in ("", "x", "x\x00", "xy")
        for c in (-5, 0, 5, 6)
    )
    cases = [
        (P.equality(A, 1),),
        (P.equality(A, 1), P.equality(B, "x")),
        (P.equality(A, 1), P.range(B, "x", "xy")),
        (P.equality(A, 1), P.range(B, "x", "xy", lower_inclusive=False, upper_inclusive=True)),
        (P.equality(A, 1), P.equality(B, "x"), P.range(C, 0, 5, upper_inclusive=True)),
        (P.equality(A, 1), P.equality(B, "x"), P.range(C, lower=0, lower_inclusive=False)),
        (P.range(A, upper=2),),
        (P.range(A, lower=1, lower_inclusive=False),),
    ]
    for predicates in cases:
        key_range = _spec(*predicates).key_range(SCHEMA)
        in_range = [
            k
            for k in keys
            if (key_range.lower is None or k >= key_range.lower)
            and (key_range.upper is None or k < key_range.upper)
        ]
        matching = [k for k in keys if _matches(k, predicates)]
        assert in_range == matching, predicates


def _matches(key: bytes, predicates) -> bool:
    from storage.key_encoding import decode_key

    row = dict(zip((A, B, C), decode_key(key, TYPES)))
    batch_mask = [
        p.evaluate(pa.array([row[p.column_id]], type=SCHEMA.column(p.column_id).type.arrow_type))[
            0
        ].as_py()
        for p in predicates
    ]
    return all(batch_mask)


def test_non_key_or_unrepresentable_predicates_give_no_bounds():
    assert _spec(P.equality(ColumnId(4), "v")).key_range(SCHEMA) == KeyRange()
    assert _spec(P.equality(B, "x")).key_range(SCHEMA) == KeyRange()
    assert _spec(P.equality(A, 2**40)).key_range(SCHEMA) == KeyRange()


def test_contradictory_range_is_empty():
    assert _spec(P.range(A, 5, 3)).key_range(SCHEMA).is_empty


def test_decimal_and_timestamp_key_columns_get_bounds():
    schema = Schema(
        (
            ColumnSchema(A, "d", decimal(10, 2), nullable=False),
            ColumnSchema(B, "t", TIMESTAMPTZ, nullable=False),
        ),
        2,
    )
    when = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    key_range = ScanSpec((A,), (P.equality(A, Decimal("1.5")), P.equality(B, when))).key_range(
        schema
    )
    assert key_range.lower == encode_key(
        [Decimal("1.50"), when], [schema.columns[0].type, TIMESTAMPTZ]
    )


def test_in_list_ignores_values_the_column_cannot_hold():
    ints = pa.array([1, 2, None], pa.int32())
    assert _mask(P.in_list(A, [1.5, 2, 2**40]), ints) == [False, True, False]


def test_a_whole_key_range_implies_its_equality_predicates():
    v = ColumnId(4)
    spec = _spec(
        ColumnPredicate.equality(A, 1),
        ColumnPredicate.equality(B, "x"),
        ColumnPredicate.equality(C, 7),
        ColumnPredicate.equality(v, "y"),
        ColumnPredicate.equality(A, 2),  # contradicts the first: it must still be judged
    )
    assert spec.beyond_key(SCHEMA, spec.key_range(SCHEMA)) == (
        ColumnPredicate.equality(v, "y"),
        ColumnPredicate.equality(A, 2),
    )


def test_predicates_stay_unless_the_range_is_one_whole_key():
    prefix = _spec(ColumnPredicate.equality(A, 1), ColumnPredicate.equality(B, "x"))
    assert prefix.beyond_key(SCHEMA, prefix.key_range(SCHEMA)) == prefix.predicates
    ranged = _spec(
        ColumnPredicate.equality(A, 1),
        ColumnPredicate.equality(B, "x"),
        ColumnPredicate.range(C, 7, 7, upper_inclusive=True),
    )
    assert ranged.beyond_key(SCHEMA, ranged.key_range(SCHEMA)) == ranged.predicates
    # A value the key encoding might convert (a float for an integer) is judged as before.
    converted = _spec(
        ColumnPredicate.equality(A, 1),
        ColumnPredicate.equality(B, "x"),
        ColumnPredicate.equality(C, 7.0),
    )
    assert converted.beyond_key(SCHEMA, converted.key_range(SCHEMA)) == converted.predicates


BYTES_KEYED = Schema(
    (
        ColumnSchema(A, "ikey", BINARY, nullable=False),
        ColumnSchema(B, "suffix", BINARY, nullable=False),
        ColumnSchema(C, "v", INT64),
    ),
    num_key_columns=2,
)


def test_a_byte_range_on_a_leading_binary_key_column_is_the_key_range():
    """An index tablet's ``[lower, upper)`` on ``ikey`` is exactly the key range it reads."""
    other = ColumnPredicate.equality(C, 1)
    spec = _spec_on(BYTES_KEYED, ColumnPredicate.range(A, b"a\x00", b"a\x01"), other)
    assert spec.beyond_key(BYTES_KEYED, spec.key_range(BYTES_KEYED)) == (other,)
    open_ended = _spec_on(BYTES_KEYED, ColumnPredicate.range(A, b"a"))
    assert open_ended.beyond_key(BYTES_KEYED, open_ended.key_range(BYTES_KEYED)) == ()


def test_other_byte_ranges_are_still_judged_row_by_row():
    kept = [
        ColumnPredicate.range(A, b"a", b"b", upper_inclusive=True),
        ColumnPredicate.range(A, b"a", b"b", lower_inclusive=False),
        ColumnPredicate.range(A, "a", "b"),  # not bytes
    ]
    for predicate in kept:
        spec = _spec_on(BYTES_KEYED, predicate)
        assert spec.beyond_key(BYTES_KEYED, spec.key_range(BYTES_KEYED)) == (predicate,)
    two = _spec_on(
        BYTES_KEYED, ColumnPredicate.range(A, b"a", b"c"), ColumnPredicate.range(A, b"b", b"d")
    )
    assert two.beyond_key(BYTES_KEYED, two.key_range(BYTES_KEYED)) == two.predicates
    on_second = _spec_on(BYTES_KEYED, ColumnPredicate.range(B, b"a", b"b"))
    assert on_second.beyond_key(BYTES_KEYED, on_second.key_range(BYTES_KEYED)) == (
        on_second.predicates
    )


def _spec_on(schema: Schema, *predicates: ColumnPredicate) -> ScanSpec:
    return ScanSpec(tuple(c.id for c in schema.columns), predicates)
