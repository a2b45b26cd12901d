"""DataRows framed straight from a few rows' Python values (a read by key's ``ShortRows``).

A point select or an index lookup answers with a row or two.  Encoding them column by
column through Arrow kernels (``pgtypes.encode_rows``) costs more than the rows: here
each column's encoder is chosen once per result shape (type OIDs, formats, bytea_output)
and the rows are framed value by value.  Only types whose row-wise spelling is exactly
``pgtypes``' are here (integers, bool, text and varchar, bytea, and floats in binary);
for any other column the rows go through ``ShortRows.batch`` and ``pgtypes`` as before.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sql.common import date_styles
from sql.common.result import ShortRows
from storage.type_oids import TypeOid

Encoder = Callable[[Any], bytes]

_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_NULL_FIELD = _I32.pack(-1)


def _text_int(value: int) -> bytes:
    return b"%d" % value


def _text_bool(value: bool) -> bytes:
    return b"t" if value else b"f"


def _text_bytea_hex(value: bytes) -> bytes:
    return b"\\x" + value.hex().encode()


def _utf8(value: str) -> bytes:
    return value.encode()


def _text_float8(value: float) -> bytes:
    """float8out with extra_float_digits above 0: the shortest digits that read back as
    ``value`` (Python's ``repr`` finds them), fixed within 1e-4 <= |x| < 1e15."""
    return _float_text(value, repr(value), 15)


def _text_float4(value: float) -> bytes:
    """float4out likewise: the shortest digits of the real (numpy's), fixed below 1e6."""
    return _float_text(value, np.format_float_scientific(np.float32(value), unique=True), 6)


def _float_text(value: float, spelt: str, fixed_below: int) -> bytes:
    if not math.isfinite(value):
        return b"NaN" if value != value else (b"Infinity" if value > 0 else b"-Infinity")
    if value == 0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    sign = "-" if spelt.startswith("-") else ""
    mantissa, _, exponent = spelt.lstrip("-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    run = whole + fraction
    digits = run.strip("0")
    power = len(whole) - 1 - (len(run) - len(run.lstrip("0"))) + int(exponent or 0)
    if power < -4 or power >= fixed_below:
        rest = "." + digits[1:] if len(digits) > 1 else ""
        text = f"{sign}{digits[0]}{rest}e{'-' if power < 0 else '+'}{abs(power):02d}"
    elif power < 0:
        text = f"{sign}0.{'0' * (-power - 1)}{digits}"
    else:
        whole = digits[: power + 1].ljust(power + 1, "0")
        fraction = digits[power + 1 :]
        text = f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"
    return text.encode()


def _text_date(value: dt.date) -> bytes:
    """date_out in ISO DateStyle (a Python date is within years 1 to 9999: no BC, no far
    years, no infinity, which ``ShortRows.values`` leaves to Arrow)."""
    return value.isoformat().encode()


def _text_timestamp(value: dt.datetime) -> bytes:
    """timestamp_out in ISO DateStyle: the fraction without its trailing zeros."""
    text = value.isoformat(" ")
    if value.microsecond:
        text = text.rstrip("0")
    return text.encode()


_PG_EPOCH = dt.datetime(2000, 1, 1)
_PG_EPOCH_DAY = _PG_EPOCH.toordinal()
_MICROSECOND = dt.timedelta(microseconds=1)
_PACK_I4 = struct.Struct("!i").pack
_PACK_I8 = struct.Struct("!q").pack


def _binary_date(value: dt.date) -> bytes:
    return _PACK_I4(value.toordinal() - _PG_EPOCH_DAY)


def _binary_timestamp(value: dt.datetime) -> bytes:
    return _PACK_I8((value - _PG_EPOCH) // _MICROSECOND)


def _binary_bool(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


def _packer(spec: str) -> Encoder:
    return struct.Struct(spec).pack


def _same(value: bytes) -> bytes:
    return value


_TEXT: dict[int, Encoder] = {
    TypeOid.INT2: _text_int,
    TypeOid.INT4: _text_int,
    TypeOid.INT8: _text_int,
    TypeOid.BOOL: _text_bool,
    TypeOid.TEXT: _utf8,
    TypeOid.VARCHAR: _utf8,
    TypeOid.BYTEA: _text_bytea_hex,
    TypeOid.FLOAT4: _text_float4,
    TypeOid.FLOAT8: _text_float8,
    TypeOid.DATE: _text_date,
    TypeOid.TIMESTAMP: _text_timestamp,
}
"""Text output (``*out``) of the types whose values ``ShortRows.values`` gives as
Python's int, bool, str, bytes, float, date and naive datetime; floats only with
extra_float_digits above 0, dates and timestamps only in ISO DateStyle, bytea only in
hex (``encoders_for``)."""

_BINARY: dict[int, Encoder] = {
    TypeOid.INT2: _packer("!h"),
    TypeOid.INT4: _packer("!i"),
    TypeOid.INT8: _packer("!q"),
    TypeOid.BOOL: _binary_bool,
    TypeOid.FLOAT4: _packer("!f"),
    TypeOid.FLOAT8: _packer("!d"),
    TypeOid.TEXT: _utf8,
    TypeOid.VARCHAR: _utf8,
    TypeOid.BYTEA: _same,
    TypeOid.DATE: _binary_date,
    TypeOid.TIMESTAMP: _binary_timestamp,
}
"""Binary output (``*send``) of the same: big-endian integers and IEEE 754 floats, days
and microseconds since 2000-01-01."""


def encode(
    rows: ShortRows,
    type_oids: tuple[int, ...],
    formats: tuple[int, ...],
    extra_float_digits: int,
    date_style: str,
    bytea_output: str,
    type_code: bytes = b"D",
) -> bytes | None:
    """``rows`` as framed DataRow messages, or None when a column has no encoder here or
    its values are not plain (``ShortRows.values``): ``pgtypes.encode_rows`` spells them."""
    encoders = encoders_for(type_oids, formats, extra_float_digits > 0, date_style, bytea_output)
    if encoders is None:
        return None
    values = rows.values()
    if values is None:
        return None
    return frame(values, encoders, type_code)


@functools.lru_cache(maxsize=512)
def encoders_for(
    type_oids: tuple[int, ...],
    formats: tuple[int, ...],
    shortest_floats: bool,
    date_style: str,
    bytea_output: str,
) -> tuple[Encoder, ...] | None:
    """Each column's encoder, worked out once per result shape and settings; None when
    one has none."""
    iso = date_styles.parse(date_style).style == "ISO"
    out = []
    for oid, format_code in zip(type_oids, formats, strict=True):
        if format_code == 0 and (
            (oid == TypeOid.BYTEA and bytea_output != "hex")
            or (oid in _FLOATS and not shortest_floats)
            or (oid in _DATES and not iso)
        ):
            return None
        encoder = (_BINARY if format_code == 1 else _TEXT).get(oid)
        if encoder is None:
            return None
        out.append(encoder)
    return tuple(out)


_FLOATS = frozenset((TypeOid.FLOAT4, TypeOid.FLOAT8))
_DATES = frozenset((TypeOid.DATE, TypeOid.TIMESTAMP))


def frame(
    rows: Sequence[tuple[Any, ...]], encoders: tuple[Encoder, ...], type_code: bytes = b"D"
) -> bytes:
    """DataRow messages of ``rows`` (None for NULL), each value spelt by its column's
    encoder, in one join."""
    column_count = _I16.pack(len(encoders))
    parts: list[bytes] = []
    pack = _I32.pack
    for row in rows:
        at = len(parts) + 1
        parts += (type_code, b"", column_count)
        size = 6
        for value, encoder in zip(row, encoders, strict=True):
            if value is None:
                parts.append(_NULL_FIELD)
                size += 4
            else:
                data = encoder(value)
                parts += (pack(len(data)), data)
                size += 4 + len(data)
        parts[at] = pack(size)
    return b"".join(parts)
