"""A batch's parameters decoded by column give what decoding each value gives, errors too."""

from __future__ import annotations

import struct

import pytest

from server import param_columns, params
from storage.errors import DbError
from storage.type_oids import TypeOid

TEXT, BINARY = 0, 1

COLUMNS = [
    (TypeOid.INT8, TEXT, [b"1", b"-42", b"007", None, b"9223372036854775807"]),
    (TypeOid.INT8, TEXT, [b"1", b" 2 ", b"+3"]),  # PostgreSQL's other spellings: one by one
    (TypeOid.INT4, TEXT, [b"2147483647", b"-2147483648"]),
    (TypeOid.INT4, TEXT, [b"1", b"2147483648"]),  # 22003
    (TypeOid.INT2, TEXT, [b"1", b"x"]),  # 22P02
    (TypeOid.FLOAT8, TEXT, [b"1.5", b"0", b"-0.0", b"1e300", b"2.5E-3", None, b"3"]),
    (TypeOid.FLOAT8, TEXT, [b"1e-400"]),  # underflow: 22003
    (TypeOid.FLOAT8, TEXT, [b"1e400"]),  # overflow: 22003
    (TypeOid.FLOAT8, TEXT, [b"NaN", b"-Infinity", b".5", b"5."]),
    (
        TypeOid.TIMESTAMP,
        TEXT,
        [
            b"2024-01-01 00:00:00",
            b"2024-01-01 12:34:56.5+00",
            b"1999-12-31 23:59:59.123456-05:30",
            None,
        ],
    ),
    (TypeOid.TIMESTAMP, TEXT, [b"2024-01-01 24:00:00", b"2024-02-28 00:00:00"]),
    (TypeOid.TIMESTAMP, TEXT, [b"2024-02-30 00:00:00"]),  # 22008
    (TypeOid.TIMESTAMP, TEXT, [b"2024-01-01T01:02:03", b"2024-01-01 01:02:03.1234567"]),
    (
        TypeOid.TIMESTAMPTZ,
        TEXT,
        [
            b"2023-11-14 22:13:20+00",
            b"2024-01-01 12:34:56.5+05:30",
            b"1999-12-31 23:59:59.123456-08",
            None,
        ],
    ),
    (TypeOid.TIMESTAMPTZ, TEXT, [b"2024-01-01 00:00:00+00", b"2024-01-01 00:00:00"]),  # no zone
    (TypeOid.TIMESTAMPTZ, TEXT, [b"2024-01-01 24:00:00+00"]),
    (TypeOid.TIMESTAMPTZ, TEXT, [b"2024-02-30 00:00:00+01"]),  # 22008
    (TypeOid.TIMESTAMPTZ, TEXT, [b"9999-12-31 23:00:00-05"]),  # past 9999 in UTC: 22008
    (TypeOid.TEXT, TEXT, ["héllo".encode(), b"", None, b"a\nb"]),
    (TypeOid.VARCHAR, TEXT, [b"ok", b"\xff"]),  # 22021
    (TypeOid.TEXT, TEXT, [b"a\x00b", b"", b"c"]),  # a NUL within: split back one by one
    (TypeOid.TEXT, TEXT, [b"\xc3", b"\xa9"]),  # half a character each: 22021, not "é"
    (TypeOid.TEXT, TEXT, [b""]),
    (TypeOid.INT8, BINARY, [struct.pack("!q", -5), None, struct.pack("!q", 1 << 40)]),
    (TypeOid.INT4, BINARY, [struct.pack("!i", 7), b"\x00"]),  # 22P03
    (TypeOid.FLOAT8, BINARY, [struct.pack("!d", 2.5), struct.pack("!d", float("inf"))]),
    (TypeOid.NUMERIC, TEXT, [b"1.50", b"-2"]),
]


def _one_by_one(raws, oid, fmt):
    return [None if raw is None else params.decode_param(raw, oid, fmt, 1, "MDY") for raw in raws]


def _outcome(decode):
    try:
        return "ok", repr(decode())  # repr: NaN equals itself
    except DbError as exc:
        return "error", exc.sqlstate


@pytest.mark.parametrize(("oid", "fmt", "raws"), COLUMNS)
def test_a_column_decodes_as_its_values_do_one_by_one(oid, fmt, raws):
    by_column = _outcome(lambda: param_columns.decode_column(raws, oid, fmt, 1, "MDY"))
    assert by_column == _outcome(lambda: _one_by_one(raws, oid, fmt))
    if by_column[0] == "ok":
        values = param_columns.decode_column(raws, oid, fmt, 1, "MDY")
        assert [type(v) for v in values] == [type(v) for v in _one_by_one(raws, oid, fmt)]


@pytest.mark.parametrize(
    ("oid", "fmt", "raws"),
    [
        (TypeOid.INT8, TEXT, [b"1", b"-42"]),
        (TypeOid.FLOAT8, TEXT, [b"1.5", b"2"]),
        (TypeOid.TIMESTAMP, TEXT, [b"2024-01-01 00:00:00"]),
        (TypeOid.TIMESTAMPTZ, TEXT, [b"2023-11-14 22:13:20+00", b"2024-01-01 12:34:56.5+05:30"]),
        (TypeOid.TEXT, TEXT, [b"x"]),
        (TypeOid.INT8, BINARY, [struct.pack("!q", 3)]),
    ],
)
def test_plain_spellings_take_the_column_path(oid, fmt, raws, monkeypatch):
    def refuse(*args):
        raise AssertionError("decoded value by value")

    monkeypatch.setattr(params, "decode_param", refuse)
    assert len(param_columns.decode_column(raws, oid, fmt, 1, "MDY")) == len(raws)
