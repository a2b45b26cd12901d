"""Bind parameter decoding against what PostgreSQL 15.18 accepts and rejects.

Every accepted spelling and every SQLSTATE below was checked on a real
PostgreSQL 15.18 with ``SELECT %s::<type>`` (text) or against its binary
``*send`` output, so these tests need no PostgreSQL to run.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server import pgtypes as t
from server.params import decode_param
from storage.errors import (
    CharacterNotInRepertoire,
    DatetimeFieldOverflow,
    DbError,
    FeatureNotSupported,
    InvalidBinaryRepresentation,
    InvalidDatetimeFormat,
    InvalidParameterValue,
    InvalidTextRepresentation,
    NumericValueOutOfRange,
)

UTC = dt.UTC


def text_param(value: str, oid: int) -> object:
    return decode_param(value.encode(), oid, 0)


@pytest.mark.parametrize(
    ("text", "oid", "expected"),
    [
        (" 12 ", t.INT4, 12),
        ("+5", t.INT2, 5),
        ("-9223372036854775808", t.INT8, -(2**63)),
        (" 1.5 ", t.FLOAT8, 1.5),
        ("infinity", t.FLOAT8, float("inf")),
        ("-Infinity", t.FLOAT4, float("-inf")),
        ("0.1", t.FLOAT4, float(np.float32(0.1))),
        (" 1.50 ", t.NUMERIC, Decimal("1.50")),
        ("1e5", t.NUMERIC, Decimal("1e5")),
        ("Infinity", t.NUMERIC, Decimal("Infinity")),
        ("NaN", t.NUMERIC, Decimal("NaN")),
        ("ye", t.BOOL, True),
        ("of", t.BOOL, False),
        ("TRUE", t.BOOL, True),
        (" t ", t.BOOL, True),
        ("1", t.BOOL, True),
        ("0", t.BOOL, False),
        ("\\x41 42", t.BYTEA, b"AB"),
        ("ab\\\\c\\101", t.BYTEA, b"ab\\cA"),
        ("2024-01-02", t.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 +00", t.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 03:04:05", t.DATE, dt.date(2024, 1, 2)),
        ("20240102", t.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 03:04:05+02", t.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5)),
        ("2024-01-02T03:04:05", t.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5)),
        ("2024-01-02", t.TIMESTAMP, dt.datetime(2024, 1, 2)),
        ("2024-01-02 03:04:05.1234567", t.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5, 123457)),
        ("2024-01-02 03:04:05+00", t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05+05:30", t.TIMESTAMPTZ, dt.datetime(2024, 1, 1, 21, 34, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05", t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05 UTC", t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05Z", t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05-0130", t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 4, 34, 5, tzinfo=UTC)),
        ("héllo", t.UNKNOWN, "héllo"),
        ("x", t.TEXT, "x"),
        ("x", t.VARCHAR, "x"),
        ("{1,2}", 1005, "{1,2}"),
    ],
)  # fmt: skip
def test_text_parameters_decode_as_postgresql_accepts_them(text, oid, expected):
    value = text_param(text, oid)
    assert repr(value) == repr(expected)
    assert type(value) is type(expected)
    if isinstance(expected, dt.datetime):
        assert value.tzinfo == expected.tzinfo  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "oid", "error"),
    [
        ("x", t.INT4, InvalidTextRepresentation),
        ("1_000", t.INT4, InvalidTextRepresentation),
        ("99999999999", t.INT4, NumericValueOutOfRange),
        ("32768", t.INT2, NumericValueOutOfRange),
        ("1e400", t.FLOAT8, NumericValueOutOfRange),
        ("1e-400", t.FLOAT8, NumericValueOutOfRange),
        ("1e39", t.FLOAT4, NumericValueOutOfRange),
        ("abc", t.FLOAT8, InvalidTextRepresentation),
        ("1_0", t.FLOAT8, InvalidTextRepresentation),
        ("x", t.NUMERIC, InvalidTextRepresentation),
        ("x", t.BOOL, InvalidTextRepresentation),
        ("o", t.BOOL, InvalidTextRepresentation),
        ("x", t.DATE, InvalidDatetimeFormat),
        ("2024-13-01", t.DATE, DatetimeFieldOverflow),
        ("x", t.TIMESTAMP, InvalidDatetimeFormat),
        ("2024-01-02 25:00:00", t.TIMESTAMP, DatetimeFieldOverflow),
        ("\\x4g", t.BYTEA, InvalidParameterValue),
        ("\\x414", t.BYTEA, InvalidParameterValue),
        ("a\\", t.BYTEA, InvalidTextRepresentation),
    ],
)
def test_bad_text_parameters_raise_the_postgresql_sqlstate(text, oid, error):
    with pytest.raises(error):
        text_param(text, oid)


def test_bad_parameter_sqlstates():
    codes = {}
    for text, oid in (("x", t.INT4), ("1e400", t.FLOAT8), ("x", t.DATE), ("\\x4g", t.BYTEA)):
        with pytest.raises(DbError) as caught:
            text_param(text, oid)
        codes[(text, oid)] = caught.value.sqlstate
    assert list(codes.values()) == ["22P02", "22003", "22007", "22023"]


def test_invalid_utf8_parameter_is_22021():
    with pytest.raises(CharacterNotInRepertoire):
        decode_param(b"\xff", t.TEXT, 0)


@pytest.mark.parametrize(
    ("data", "oid", "expected"),
    [
        (b"\x01", t.BOOL, True),
        (b"\xde\xad", t.BYTEA, b"\xde\xad"),
        (b"\x80\x00", t.INT2, -32768),
        (b"\x7f\xff\xff\xff", t.INT4, 2**31 - 1),
        (b"\x80" + b"\x00" * 7, t.INT8, -(2**63)),
        (b"?\xc0\x00\x00", t.FLOAT4, 1.5),
        (b"?\xb9\x99\x99\x99\x99\x99\x9a", t.FLOAT8, 0.1),
        (b"\x00\x02\x00\x00\x00\x00\x00\x02\x00{\x0f\xa0", t.NUMERIC, Decimal("123.40")),
        (b"\x00\x01\xff\xfd@\x00\x00\n\x00d", t.NUMERIC, Decimal("-0.0000000001")),
        (b"\x00\x01\x00\x05\x00\x00\x00\x00\x00\x01", t.NUMERIC, Decimal("100000000000000000000")),
        (b"\x00\x00\x00\x00\xc0\x00\x00\x00", t.NUMERIC, Decimal("NaN")),
        (b"hi", t.TEXT, "hi"),
        (b"hi", t.UNKNOWN, "hi"),
        (b'\x00\x00"?', t.DATE, dt.date(2024, 1, 2)),
        (b"\xff" * 8, t.TIMESTAMP, dt.datetime(1999, 12, 31, 23, 59, 59, 999999)),
        (b"\x00\x02\xb0\xec\x85\x1d\x94`", t.TIMESTAMPTZ,
         dt.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC)),
        (bytes.fromhex("a1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8"), t.UUID,
         "a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8"),
        (b"\x01{}", t.JSONB, "{}"),
    ],
)  # fmt: skip
def test_binary_parameters_decode(data, oid, expected):
    value = decode_param(data, oid, 1)
    assert repr(value) == repr(expected)
    assert type(value) is type(expected)


def test_numeric_binary_keeps_the_display_scale():
    value = decode_param(b"\x00\x01\x00\x00\x00\x00\x00\x02\x00\x05", t.NUMERIC, 1)
    assert str(value) == "5.00"


@pytest.mark.parametrize(("data", "oid"), [(b"\x00\x01\x02", t.INT4), (b"", t.INT8),
                                           (b"\x02\x00", t.BOOL), (b"\x00", t.NUMERIC)])  # fmt: skip
def test_binary_parameter_of_the_wrong_size_is_22p03(data, oid):
    with pytest.raises(InvalidBinaryRepresentation):
        decode_param(data, oid, 1)


def test_binary_parameter_of_a_type_without_a_decoder_is_refused():
    with pytest.raises(FeatureNotSupported):
        decode_param(b"\x00", 1186, 1)


@given(st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-10**30,
                   max_value=10**30))  # fmt: skip
def test_numeric_binary_reads_back(value):
    data = t.numeric_binary(value, 4)
    assert decode_param(data, t.NUMERIC, 1) == value
