"""Bind parameter decoding against what PostgreSQL 15.18 accepts and rejects.

Every accepted spelling and every SQLSTATE below was checked on a real
PostgreSQL 15.18 with ``SELECT %s::<type>`` (text) or against its binary
``*send`` output, so these tests need no PostgreSQL to run.
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server import params
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
from storage.type_oids import TypeOid

UTC = dt.UTC


def text_param(value: str, oid: int) -> object:
    return decode_param(value.encode(), oid, 0)


@pytest.mark.parametrize(
    ("text", "oid", "expected"),
    [
        (" 12 ", TypeOid.INT4, 12),
        ("+5", TypeOid.INT2, 5),
        ("-9223372036854775808", TypeOid.INT8, -(2**63)),
        (" 1.5 ", TypeOid.FLOAT8, 1.5),
        ("infinity", TypeOid.FLOAT8, float("inf")),
        ("-Infinity", TypeOid.FLOAT4, float("-inf")),
        (" Infinity ", TypeOid.DATE, "infinity"),
        ("-infinity", TypeOid.TIMESTAMPTZ, "-infinity"),
        ("0044-03-15 BC", TypeOid.DATE, "-0043-03-15"),
        ("12000-01-01 10:00", TypeOid.TIMESTAMP, "12000-01-01 10:00"),
        ("1230", TypeOid.TIME, "12:30:00"),
        ("12:30 pm+02", TypeOid.TIMETZ, "12:30:00+02"),
        ("0.1", TypeOid.FLOAT4, float(np.float32(0.1))),
        (" 1.50 ", TypeOid.NUMERIC, Decimal("1.50")),
        ("1e5", TypeOid.NUMERIC, Decimal("1e5")),
        ("Infinity", TypeOid.NUMERIC, Decimal("Infinity")),
        ("NaN", TypeOid.NUMERIC, Decimal("NaN")),
        ("ye", TypeOid.BOOL, True),
        ("of", TypeOid.BOOL, False),
        ("TRUE", TypeOid.BOOL, True),
        (" t ", TypeOid.BOOL, True),
        ("1", TypeOid.BOOL, True),
        ("0", TypeOid.BOOL, False),
        ("\\x41 42", TypeOid.BYTEA, b"AB"),
        ("ab\\\\c\\101", TypeOid.BYTEA, b"ab\\cA"),
        ("2024-01-02", TypeOid.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 +00", TypeOid.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 03:04:05", TypeOid.DATE, dt.date(2024, 1, 2)),
        ("20240102", TypeOid.DATE, dt.date(2024, 1, 2)),
        ("2024-01-02 03:04:05+02", TypeOid.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5)),
        ("2024-01-02T03:04:05", TypeOid.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5)),
        ("2024-01-02", TypeOid.TIMESTAMP, dt.datetime(2024, 1, 2)),
        ("2024-01-02 03:04:05.1234567", TypeOid.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5, 123457)),
        ("2024-01-02 03:04:05+00", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05+05:30", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 1, 21, 34, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05 UTC", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05Z", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05-0130", TypeOid.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 4, 34, 5, tzinfo=UTC)),
        ("héllo", t.UNKNOWN, "héllo"),
        ("x", TypeOid.TEXT, "x"),
        ("x", TypeOid.VARCHAR, "x"),
        ("{1,2}", 1005, [1, 2]),
        ("{{1,NULL},{3,4}}", 1016, [[1, None], [3, 4]]),
        ('{"a b",NULL,"NULL",""}', 1009, ["a b", None, "NULL", ""]),
        ("{2020-01-02}", 1182, [dt.date(2020, 1, 2)]),
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
        ("x", TypeOid.INT4, InvalidTextRepresentation),
        ("1_000", TypeOid.INT4, InvalidTextRepresentation),
        ("99999999999", TypeOid.INT4, NumericValueOutOfRange),
        ("32768", TypeOid.INT2, NumericValueOutOfRange),
        ("1e400", TypeOid.FLOAT8, NumericValueOutOfRange),
        ("1e-400", TypeOid.FLOAT8, NumericValueOutOfRange),
        ("1e39", TypeOid.FLOAT4, NumericValueOutOfRange),
        ("abc", TypeOid.FLOAT8, InvalidTextRepresentation),
        ("1_0", TypeOid.FLOAT8, InvalidTextRepresentation),
        ("x", TypeOid.NUMERIC, InvalidTextRepresentation),
        ("x", TypeOid.BOOL, InvalidTextRepresentation),
        ("o", TypeOid.BOOL, InvalidTextRepresentation),
        ("x", TypeOid.DATE, InvalidDatetimeFormat),
        ("2024-13-01", TypeOid.DATE, DatetimeFieldOverflow),
        ("x", TypeOid.TIMESTAMP, InvalidDatetimeFormat),
        ("2024-01-02 25:00:00", TypeOid.TIMESTAMP, DatetimeFieldOverflow),
        ("5874898-01-01", TypeOid.DATE, DatetimeFieldOverflow),
        ("4714-11-23 BC", TypeOid.DATE, DatetimeFieldOverflow),
        ("\\x4g", TypeOid.BYTEA, InvalidParameterValue),
        ("\\x414", TypeOid.BYTEA, InvalidParameterValue),
        ("a\\", TypeOid.BYTEA, InvalidTextRepresentation),
    ],
)
def test_bad_text_parameters_raise_the_postgresql_sqlstate(text, oid, error):
    with pytest.raises(error):
        text_param(text, oid)


def test_bad_parameter_sqlstates():
    codes = {}
    for text, oid in (
        ("x", TypeOid.INT4),
        ("1e400", TypeOid.FLOAT8),
        ("x", TypeOid.DATE),
        ("\\x4g", TypeOid.BYTEA),
    ):
        with pytest.raises(DbError) as caught:
            text_param(text, oid)
        codes[(text, oid)] = caught.value.sqlstate
    assert list(codes.values()) == ["22P02", "22003", "22007", "22023"]


def test_invalid_utf8_parameter_is_22021():
    with pytest.raises(CharacterNotInRepertoire):
        decode_param(b"\xff", TypeOid.TEXT, 0)


@pytest.mark.parametrize(
    ("data", "oid", "expected"),
    [
        (b"\x01", TypeOid.BOOL, True),
        (b"\xde\xad", TypeOid.BYTEA, b"\xde\xad"),
        (b"\x80\x00", TypeOid.INT2, -32768),
        (b"\x7f\xff\xff\xff", TypeOid.INT4, 2**31 - 1),
        (b"\x80" + b"\x00" * 7, TypeOid.INT8, -(2**63)),
        (b"?\xc0\x00\x00", TypeOid.FLOAT4, 1.5),
        (b"?\xb9\x99\x99\x99\x99\x99\x9a", TypeOid.FLOAT8, 0.1),
        (b"\x00\x02\x00\x00\x00\x00\x00\x02\x00{\x0f\xa0", TypeOid.NUMERIC, Decimal("123.40")),
        (b"\x00\x01\xff\xfd@\x00\x00\n\x00d", TypeOid.NUMERIC, Decimal("-0.0000000001")),
        (b"\x00\x01\x00\x05\x00\x00\x00\x00\x00\x01", TypeOid.NUMERIC, Decimal("100000000000000000000")),
        (b"\x00\x00\x00\x00\xc0\x00\x00\x00", TypeOid.NUMERIC, Decimal("NaN")),
        (b"hi", TypeOid.TEXT, "hi"),
        (b"hi", t.UNKNOWN, "hi"),
        (b'\x00\x00"?', TypeOid.DATE, dt.date(2024, 1, 2)),
        (b"\xff" * 8, TypeOid.TIMESTAMP, dt.datetime(1999, 12, 31, 23, 59, 59, 999999)),
        (b"\x00\x02\xb0\xec\x85\x1d\x94`", TypeOid.TIMESTAMPTZ,
         dt.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC)),
        (bytes.fromhex("a1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8"), TypeOid.UUID,
         "a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8"),
        (b"\x01{}", TypeOid.JSONB, "{}"),
        (b"\x7f\xff\xff\xff", TypeOid.DATE, "infinity"),
        (b"\x80\x00\x00\x00", TypeOid.DATE, "-infinity"),
        (struct.pack("!i", -(730119 + 15766)), TypeOid.DATE, "-0043-11-02"),
        (struct.pack("!i", 4_000_000), TypeOid.DATE, "12951-08-18"),
        (b"\x7f" + b"\xff" * 7, TypeOid.TIMESTAMP, "infinity"),
        (b"\x80" + b"\x00" * 7, TypeOid.TIMESTAMPTZ, "-infinity"),
        (struct.pack("!q", 4_000_000 * 86_400_000_000 + 1), TypeOid.TIMESTAMPTZ,
         "12951-08-18 00:00:00.000001+00"),
        (struct.pack("!q", 86_400_000_000), TypeOid.TIME, "24:00:00"),
        (struct.pack("!q", 45_000_500_000), TypeOid.TIME, "12:30:00.5"),
        (struct.pack("!qi", 45_000_000_000, -19800), TypeOid.TIMETZ, "12:30:00+05:30"),
    ],
)  # fmt: skip
def test_binary_parameters_decode(data, oid, expected):
    value = decode_param(data, oid, 1)
    assert repr(value) == repr(expected)
    assert type(value) is type(expected)


def test_numeric_binary_keeps_the_display_scale():
    value = decode_param(b"\x00\x01\x00\x00\x00\x00\x00\x02\x00\x05", TypeOid.NUMERIC, 1)
    assert str(value) == "5.00"


@pytest.mark.parametrize(("data", "oid"), [(b"\x00\x01\x02", TypeOid.INT4), (b"", TypeOid.INT8),
                                           (b"\x02\x00", TypeOid.BOOL), (b"\x00", TypeOid.NUMERIC)])  # fmt: skip
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
    assert decode_param(data, TypeOid.NUMERIC, 1) == value


def test_binary_array_parameters_decode_as_array_recv_reads_them():
    import struct

    def array(element_oid: int, dims: list[int], items: list[bytes | None]) -> bytes:
        head = struct.pack(f"!iii{2 * len(dims)}i", len(dims), int(None in items), element_oid,
                           *[v for d in dims for v in (d, 1)])  # fmt: skip
        body = b"".join(
            struct.pack("!i", -1) if i is None else struct.pack("!i", len(i)) + i for i in items
        )
        return head + body

    four = [struct.pack("!i", n) for n in (1, 2, 3, 4)]
    assert decode_param(array(23, [2, 2], four), 1007, 1) == [[1, 2], [3, 4]]
    assert decode_param(array(25, [2], [b"x", None]), 1009, 1) == ["x", None]
    assert decode_param(array(23, [], []), 1007, 1) == []
    with pytest.raises(InvalidBinaryRepresentation):
        decode_param(array(23, [3], four[:2]), 1007, 1)
    with pytest.raises(InvalidBinaryRepresentation):
        decode_param(array(23, [2], four[:2]) + b"\0", 1007, 1)
    with pytest.raises(InvalidTextRepresentation):
        decode_param(b"{1,x}", 1007, 0)
    with pytest.raises(InvalidTextRepresentation):
        decode_param(b"{1,2", 1007, 0)


def _outcome(decode, raw):
    try:
        return ("value", repr(decode(raw)))  # repr: NaN equals itself
    except DbError as exc:
        return ("error", exc.sqlstate, str(exc))


_DECODER_OIDS = [
    *(getattr(TypeOid, name) for name in (
        "BOOL", "INT2", "INT4", "INT8", "FLOAT4", "FLOAT8", "NUMERIC", "TEXT", "VARCHAR",
        "DATE", "TIMESTAMP", "TIMESTAMPTZ", "BYTEA",
    )),
    t.UNKNOWN, 1007, 1009, 2950,
]  # fmt: skip
_RAWS = [
    b"", b"1", b"-7", b"t", b"2024-01-02", b"01/02/2024", b"1.5", b"NaN", b"{1,NULL}",
    b"\x00\x00\x00\x05", b"\x00\x00\x00\x00\x00\x00\x00\x05", b"\x01", b"\xff\xfe", b"abc",
    b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x17\x00\x00\x00\x01\x00\x00\x00\x01"
    b"\x00\x00\x00\x04\x00\x00\x00\x09",
]  # fmt: skip


@pytest.mark.parametrize("order", ["MDY", "DMY"])
@pytest.mark.parametrize("fmt", [0, 1])
def test_decoders_chosen_per_statement_decode_as_decode_param(fmt, order):
    """The decoders a Bind takes from ``decoders`` (once per statement and formats) give
    the values and SQLSTATEs ``decode_param`` gives, with the parameter's number."""
    oids = tuple(_DECODER_OIDS)
    decoders = params.decoders(oids, (fmt,) * len(oids), order)
    for number, (oid, decode) in enumerate(zip(oids, decoders, strict=True), start=1):
        for raw in _RAWS:
            expected = _outcome(lambda r: decode_param(r, oid, fmt, number, order), raw)  # noqa: B023
            assert _outcome(decode, raw) == expected, (oid, fmt, raw)
