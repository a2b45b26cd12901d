import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.data_type import (
    BINARY,
    BOOL,
    DATE,
    DOUBLE,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    TIMESTAMP,
    TIMESTAMPTZ,
    DataType,
    varchar,
)
from storage.data_type import (
    decimal as decimal_type,
)
from storage.key_encoding import (
    decode_key,
    encode_integer_keys,
    encode_key,
    encode_keys,
    encode_sortable,
    integer_key_width,
    is_key_type,
    key_of_sortable,
    prefix_successor,
)

DECIMAL_10_2 = decimal_type(10, 2)

_VALUES = {
    INT8: st.integers(-(2**7), 2**7 - 1),
    INT16: st.integers(-(2**15), 2**15 - 1),
    INT32: st.integers(-(2**31), 2**31 - 1),
    INT64: st.integers(-(2**63), 2**63 - 1),
    STRING: st.text(max_size=6),
    BINARY: st.binary(max_size=6),
    DATE: st.dates(),
    TIMESTAMP: st.datetimes(),
    DECIMAL_10_2: st.decimals(Decimal("-99999999.99"), Decimal("99999999.99"), places=2),
}
KEY_TYPES = list(_VALUES)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _cmp(a: object, b: object) -> int:
    return _sign((a > b) - (a < b))  # type: ignore[operator]


@st.composite
def two_keys_of_one_schema(draw: st.DrawFn) -> tuple[list[DataType], tuple, tuple]:
    types = draw(st.lists(st.sampled_from(KEY_TYPES), min_size=1, max_size=3))
    # Sharing prefixes makes the later columns (and the string escaping) decide the order.
    first = tuple(draw(_VALUES[t]) for t in types)
    second = tuple(
        first[idx] if draw(st.booleans()) else draw(_VALUES[t]) for idx, t in enumerate(types)
    )
    return types, first, second


@settings(max_examples=400, deadline=None)
@given(two_keys_of_one_schema())
def test_encoded_keys_sort_like_key_tuples(case):
    types, a, b = case
    assert _cmp(encode_key(a, types), encode_key(b, types)) == _cmp(a, b)


@settings(max_examples=200, deadline=None)
@given(two_keys_of_one_schema())
def test_decode_inverts_encode(case):
    types, a, _ = case
    assert decode_key(encode_key(a, types), types) == a


def _arrow(values: list, data_type: DataType) -> pa.Array:
    return pa.array(values, type=data_type.arrow_type)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(KEY_TYPES), min_size=1, max_size=3).flatmap(
        lambda types: st.tuples(
            st.just(types),
            st.lists(st.tuples(*(_VALUES[t] for t in types)), min_size=1, max_size=20),
        )
    )
)
def test_batch_encoding_matches_one_key_at_a_time(case):
    types, rows = case
    columns = [_arrow([row[idx] for row in rows], t) for idx, t in enumerate(types)]
    assert encode_keys(columns, types) == [encode_key(row, types) for row in rows]


def test_batch_encoding_respects_array_offsets():
    column = pa.array([5, -1, 7, 9], pa.int32()).slice(1, 2)
    amounts = pa.array([Decimal("1.00"), Decimal("-2.50")] * 2, DECIMAL_10_2.arrow_type)
    assert encode_keys([column], [INT32]) == [encode_key([-1], [INT32]), encode_key([7], [INT32])]
    assert encode_keys([amounts.slice(1, 1)], [DECIMAL_10_2]) == [
        encode_key([Decimal("-2.5")], [DECIMAL_10_2])
    ]


def test_strings_escape_zero_bytes_and_terminate_except_in_last_column():
    assert encode_key(["a\x00b", 1], [STRING, INT8]) == b"a\x00\x01b\x00\x00\x81"
    assert encode_key([1, "a\x00b"], [INT8, STRING]) == b"\x81a\x00b"
    assert encode_key(["a", "b"], [STRING, STRING]) < encode_key(["a\x00", "a"], [STRING, STRING])


def test_negative_integers_sort_below_positive():
    keys = [encode_key([v], [INT64]) for v in (-(2**63), -1, 0, 1, 2**63 - 1)]
    assert keys == sorted(keys)


def test_timestamps_with_and_without_time_zone_encode_the_same_instant():
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC)
    assert encode_key([aware], [TIMESTAMPTZ]) == encode_key(
        [aware.replace(tzinfo=None)], [TIMESTAMP]
    )
    assert decode_key(encode_key([aware], [TIMESTAMPTZ]), [TIMESTAMPTZ]) == (aware,)


def test_values_that_do_not_fit_are_refused():
    with pytest.raises(ValueError):
        encode_key([2**31], [INT32])
    with pytest.raises(ValueError):
        encode_key([Decimal("1.005")], [DECIMAL_10_2])
    with pytest.raises(ValueError):
        encode_key([1.5], [INT64])


def test_floating_point_and_bool_cannot_be_key_columns():
    assert not is_key_type(DOUBLE) and not is_key_type(BOOL)
    assert all(is_key_type(t) for t in [*KEY_TYPES, varchar(10), TIMESTAMPTZ])


def test_prefix_successor_bounds_every_extension():
    assert prefix_successor(b"ab") == b"ac"
    assert prefix_successor(b"a\xff\xff") == b"b"
    assert prefix_successor(b"\xff") is None
    assert prefix_successor(b"ab") > b"ab\xff\xff\xff"


def test_sortable_encoding_of_decimals_with_nulls_sorts_nulls_last():
    """An index over a numeric(10, 2) column holding NULLs (its NULLs were filled with an
    int64 zero, which Arrow would not cast to decimal(10, 2): XX000 on insert)."""
    numeric = decimal_type(10, 2)
    values = pa.array([Decimal("2.25"), None, Decimal("-1.00"), Decimal("0.00")],
                      numeric.arrow_type)  # fmt: skip
    encoded = encode_sortable([values], [numeric]).to_pylist()
    order = sorted(range(4), key=encoded.__getitem__)
    assert order == [2, 3, 0, 1]


@settings(max_examples=300, deadline=None)
@given(two_keys_of_one_schema())
def test_a_sortable_key_converts_to_the_key_encoding(case):
    types, a, _ = case
    sortable = encode_sortable([_arrow([v], t) for v, t in zip(a, types, strict=True)], types)
    assert key_of_sortable(sortable[0].as_py(), types) == encode_key(a, types)


def test_a_sortable_key_with_a_null_or_nothing_has_no_key_encoding():
    nulls = encode_sortable(
        [pa.array([1], pa.int64()), pa.array([None], pa.string())], [INT64, STRING]
    )
    assert key_of_sortable(nulls[0].as_py(), [INT64, STRING]) is None
    assert key_of_sortable(b"", [INT64]) is None
    assert key_of_sortable(b"\x00\x80", [INT64]) is None


@pytest.mark.parametrize("data_type", [INT8, INT16, INT32, INT64])
def test_integer_keys_encode_as_the_general_encoder_does(data_type):
    low, high = data_type.integer_range
    values = [low, low + 1, -1, 0, 1, high - 1, high, *range(-300, 300, 7)]
    values = [v for v in values if low <= v <= high]
    width = integer_key_width([data_type])
    assert width is not None
    assert encode_integer_keys(values, width) == [encode_key([v], [data_type]) for v in values]


def test_only_a_one_column_plain_integer_key_has_an_integer_width():
    assert integer_key_width([INT64]) == 8 and integer_key_width([INT16]) == 2
    for types in ([DATE], [TIMESTAMP], [STRING], [INT64, INT64], [decimal_type(10, 0)]):
        assert integer_key_width(types) is None
