"""Unit tests for sql.copy_binary: tuple splitting and vectorised column decoding."""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np
import pytest

from sql.copy import binary_format
from storage import errors
from storage.type_oids import TypeOid

HEADER = binary_format.SIGNATURE + struct.pack("!ii", 0, 0)


def tuple_bytes(*fields: bytes | None) -> bytes:
    out = struct.pack("!h", len(fields))
    for field in fields:
        out += struct.pack("!i", -1) if field is None else struct.pack("!i", len(field)) + field
    return out


def test_header_length_waits_for_the_whole_header_and_checks_the_signature():
    assert binary_format.header_length(HEADER[:5]) is None
    assert binary_format.header_length(HEADER) == len(HEADER)
    with pytest.raises(errors.BadCopyFileFormat, match="signature"):
        binary_format.header_length(b"X" * 30)


def test_split_stops_at_a_partial_tuple_and_at_the_trailer():
    rows = tuple_bytes(struct.pack("!i", 1), b"ab") + tuple_bytes(None, b"")
    data = HEADER + rows + tuple_bytes(struct.pack("!i", 3), b"c")[:-2]
    fields = binary_format.split_tuples(data, len(HEADER), 2, 0)
    assert (fields.rows, fields.consumed, fields.saw_trailer) == (2, len(HEADER) + len(rows), False)
    assert fields.lengths.tolist() == [[4, 2], [-1, 0]]
    done = binary_format.split_tuples(HEADER + rows + b"\xff\xff", len(HEADER), 2, 0)
    assert done.saw_trailer and done.rows == 2


def test_field_count_mismatch_names_the_tuple():
    data = tuple_bytes(b"x") + tuple_bytes(b"a", b"b")
    with pytest.raises(errors.BadCopyFileFormat) as info:
        binary_format.split_tuples(data, 0, 1, 10)
    assert info.value.message == "row field count is 2, expected 1"
    assert info.value.copy_line == 12


def decode(values: list[bytes | None], oid: int) -> list:
    data = b"".join(v or b"" for v in values)
    lengths = np.array([-1 if v is None else len(v) for v in values])
    starts = np.cumsum([0] + [max(n, 0) for n in lengths[:-1]])
    return binary_format.decode_column(data, starts, lengths, oid).to_pylist()


def test_fixed_width_columns():
    assert decode([struct.pack("!i", -5), None, struct.pack("!i", 7)], TypeOid.INT4) == [
        -5,
        None,
        7,
    ]
    assert decode([b"\x01", b"\x00"], TypeOid.BOOL) == [True, False]
    assert decode([struct.pack("!i", 1)], TypeOid.DATE) == [dt.date(2000, 1, 2)]
    assert decode([struct.pack("!q", 1_000_000)], TypeOid.TIMESTAMP) == [
        dt.datetime(2000, 1, 1, 0, 0, 1)
    ]
    with pytest.raises(errors.InvalidBinaryRepresentation):
        decode([struct.pack("!q", 1)], TypeOid.INT4)


def test_text_and_numeric_columns():
    assert decode(["héllo".encode(), None, b""], TypeOid.TEXT) == ["héllo", None, ""]
    numeric = struct.pack("!hhHh", 2, 0, 0x4000, 2) + struct.pack("!hh", 12, 3400)
    assert decode([numeric], TypeOid.NUMERIC) == ["-12.34"]
