"""PostgreSQL type OIDs and result encoding: Arrow columns to text or binary field values.

Encoding is vectorised over a whole ``pyarrow`` array: Arrow casts and string
kernels for the text format, numpy big-endian views for fixed-width binary
values.  Per-value Python is left only where no kernel exists: binary
``numeric``, the rare float and numeric values whose Arrow spelling differs
from PostgreSQL's, and types Arrow cannot cast to a string.

Text output matches PostgreSQL 15 with ``extra_float_digits`` 1 and
``DateStyle`` ISO (other styles: ``date_styles``); a ``timestamptz`` is written in the zone its Arrow type
carries (the session's ``TimeZone``, set by sql/), UTC when none.  Binary output follows each type's
``*send`` function: integers and floats big-endian, ``date`` as int32 days and
``timestamp[tz]`` as int64 microseconds since 2000-01-01, ``time`` as int64
microseconds since midnight, ``numeric`` as
base-10000 digits.  Any OID without an encoder here is sent as Arrow's text
rendering, in both formats.  Bind parameters go the other way in ``params``.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from server import array_binary, bc_dates, far_dates, intervals
from server import date_styles as server_date_styles
from server.codec import ColumnValues, encode_data_rows, frame_rows
from sql.common import date_styles, reg_values
from sql.common.uuid_values import uuid_bytes
from storage.errors import (
    NumericValueOutOfRange,
)
from storage.type_oids import TypeOid

UNKNOWN = 0
"""A parameter type the client left for the server to infer (not a pg_type OID)."""

_TYPLEN: dict[int, int] = {
    TypeOid.BOOL: 1,
    TypeOid.CHAR: 1,
    TypeOid.NAME: 64,
    TypeOid.INT8: 8,
    TypeOid.INT2: 2,
    TypeOid.INT4: 4,
    TypeOid.OID: 4,
    TypeOid.FLOAT4: 4,
    TypeOid.FLOAT8: 8,
    TypeOid.DATE: 4,
    TypeOid.TIME: 8,
    TypeOid.TIMESTAMP: 8,
    TypeOid.TIMESTAMPTZ: 8,
    TypeOid.INTERVAL: 16,
    TypeOid.UUID: 16,
}


_PG_EPOCH_DAYS_SINCE_UNIX = 10_957
_PG_EPOCH_MICROS_SINCE_UNIX = 946_684_800_000_000


def type_size(type_oid: int) -> int:
    """pg_type.typlen for RowDescription: the fixed width in bytes, -1 for variable width."""
    return _TYPLEN.get(type_oid, -1)


# -- result columns ---------------------------------------------------------------------------


def encode_rows(
    batch: pa.RecordBatch,
    type_oids: Sequence[int],
    formats: Sequence[int],
    type_code: bytes = b"D",
    extra_float_digits: int = 1,
    date_style: str = date_styles.DEFAULT,
    interval_style: str = "postgres",
    bytea_output: str = "hex",
) -> bytes:
    """Encode a batch as framed DataRow messages, column i as ``type_oids[i]`` in ``formats[i]``.

    With ``type_code`` b"d" the same bytes are binary COPY tuples in CopyData messages.
    """
    few = _few_plain_rows(batch, type_oids, formats, type_code)
    if few is not None:
        return few
    columns = [
        encode_column(
            _reg_oids(batch, idx) if formats[idx] == 1 else batch.column(idx),
            type_oids[idx],
            formats[idx],
            extra_float_digits,
            date_style,
            interval_style,
            bytea_output,
        )
        for idx in range(batch.num_columns)
    ]
    return encode_data_rows(columns, batch.num_rows, type_code)


def _reg_oids(batch: pa.RecordBatch, idx: int) -> pa.Array:
    """A reg* column's OIDs for its binary form, where the SQL layer attached them to the
    column's names (``reg_values``); the column as it is otherwise."""
    array = batch.column(idx)
    oids = reg_values.oids_of(batch.schema.field(idx))
    if oids is None:
        return array
    names = pa.array(list(oids), pa.string())
    positions = pc.index_in(array, value_set=names)
    return pc.take(pa.array(list(oids.values()), pa.uint32()), positions)


def text_column(
    array: pa.Array,
    type_oid: int,
    date_style: str = date_styles.DEFAULT,
    interval_style: str = "postgres",
    bytea_output: str = "hex",
) -> pa.Array:
    """One column's values in PostgreSQL's text output form, as a string array (nulls kept)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return _styled_text(array, type_oid, date_style, interval_style, bytea_output)


def encode_column(
    array: pa.Array,
    type_oid: int,
    format_code: int,
    extra_float_digits: int = 1,
    date_style: str = date_styles.DEFAULT,
    interval_style: str = "postgres",
    bytea_output: str = "hex",
) -> ColumnValues:
    """Encode one result column in text (0) or binary (1) format."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if format_code == 1 and type_oid in _BINARY_ENCODERS:
        return _BINARY_ENCODERS[type_oid](array)
    if type_oid in _INTEGER_OIDS and len(array) <= _FEW_ROWS and pa.types.is_integer(array.type):
        return _few_integers_text(array)
    if extra_float_digits <= 0 and type_oid in (TypeOid.FLOAT4, TypeOid.FLOAT8):
        return _from_binary_array(
            _text_float_rounded(array, type_oid == TypeOid.FLOAT4, extra_float_digits)
        )
    return _from_binary_array(
        _styled_text(array, type_oid, date_style, interval_style, bytea_output)
    )


_INTEGER_OIDS = frozenset((TypeOid.INT2, TypeOid.INT4, TypeOid.INT8))
_FEW_ROWS = 16
"""Up to this many integers are spelt by Python: one Arrow cast costs more than a
point select's whole row (the prepared key lookup's answer)."""


_PLAIN_TEXT_OIDS = frozenset((TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.NAME))
"""Types whose text output is a string column's own UTF-8 bytes (``_fallback_text``)."""


def _few_plain_rows(
    batch: pa.RecordBatch, type_oids: Sequence[int], formats: Sequence[int], type_code: bytes
) -> bytes | None:
    """A few rows of integers and plain strings in text format (a point select's answer),
    framed from Python values: the column-at-a-time encoders' arrays cost more than the row.
    None when a column is of another kind, which ``encode_column`` spells."""
    if batch.num_rows > _FEW_ROWS:
        return None
    fields: list[list[bytes | None]] = []
    for idx, array in enumerate(batch.columns):
        if formats[idx] != 0:
            return None
        type_id = array.type.id
        type_oid = type_oids[idx]
        if type_id in _ARROW_INTEGER_IDS and type_oid in _INTEGER_OIDS:
            fields.append([None if v is None else str(v).encode() for v in array.to_pylist()])
        elif type_id in _ARROW_STRING_IDS and type_oid in _PLAIN_TEXT_OIDS:
            fields.append([None if v is None else v.encode() for v in array.to_pylist()])
        else:
            return None
    return frame_rows(fields, batch.num_rows, type_code)


_ARROW_INTEGER_IDS = frozenset(
    t.id
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())
    + (pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64())
)
_ARROW_STRING_IDS = frozenset((pa.string().id, pa.large_string().id))


def _few_integers_text(array: pa.Array) -> ColumnValues:
    """A few integers' text (``str`` spells them as PostgreSQL does), NULLs as -1 lengths."""
    texts = [None if v is None else str(v).encode() for v in array.to_pylist()]
    lengths = np.array([-1 if t is None else len(t) for t in texts], dtype=np.int32)
    data = np.frombuffer(b"".join(t for t in texts if t is not None), dtype=np.uint8)
    return ColumnValues(lengths, data)


def _styled_text(
    array: pa.Array, type_oid: int, date_style: str, interval_style: str, bytea_output: str = "hex"
) -> pa.Array:
    """The text encoder's output, in the session's DateStyle, IntervalStyle and bytea_output."""
    if type_oid == TypeOid.INTERVAL:
        return intervals.text_interval(array, interval_style)
    if type_oid == TypeOid.BYTEA and bytea_output == "escape":
        return _text_bytea_escape(array)
    text = _TEXT_ENCODERS.get(type_oid, _fallback_text)(array)
    style = date_styles.parse(date_style)
    if style.style == "ISO" or type_oid not in _DATE_TYPES:
        return text
    zoned = type_oid == TypeOid.TIMESTAMPTZ and pa.types.is_timestamp(array.type)
    return server_date_styles.restyle(
        text,
        style,
        is_date=type_oid == TypeOid.DATE,
        zone=(array.type.tz or "UTC") if zoned else None,
        micros=_numbers(_cast(array, pa.timestamp("us", tz="UTC")), pa.timestamp("us", tz="UTC"))
        if zoned
        else None,
    )


_DATE_TYPES = frozenset((TypeOid.DATE, TypeOid.TIMESTAMP, TypeOid.TIMESTAMPTZ))


def _from_binary_array(array: pa.Array) -> ColumnValues:
    """Take lengths and bytes straight from a string/binary array's offset and data buffers."""
    row_count = len(array)
    if pa.types.is_string_view(array.type) or pa.types.is_binary_view(array.type):
        array = array.cast(pa.large_binary())
    valid = None
    if array.null_count:
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        array = pc.drop_null(array)
    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    if buffers[2] is None or len(array) == 0:
        data = np.empty(0, dtype=np.uint8)
    else:
        data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    value_lengths = np.diff(offsets).astype(np.int32)
    if valid is None:
        return ColumnValues(value_lengths, data)
    lengths = np.full(row_count, -1, dtype=np.int32)
    lengths[valid] = value_lengths
    return ColumnValues(lengths, data)


def _from_fixed(values: np.ndarray, array: pa.Array) -> ColumnValues:
    """Encode fixed-width values already in wire byte order; NULL rows are dropped from data."""
    width = values.dtype.itemsize
    if array.null_count:
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(valid, width, -1).astype(np.int32)
        values = values[valid]
    else:
        lengths = np.full(len(values), width, dtype=np.int32)
    return ColumnValues(lengths, np.ascontiguousarray(values).view(np.uint8).reshape(-1))


_NUMPY_TYPES = {
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint32(): np.uint32,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
    pa.date32(): np.int32,
    pa.time64("us"): np.int64,
}


def _cast(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    if array.type == arrow_type:
        return array
    try:
        return pc.cast(array, arrow_type)
    except pa.ArrowInvalid as exc:
        raise NumericValueOutOfRange(f"value out of range for the column type: {exc}") from None


def _numbers(array: pa.Array, arrow_type: pa.DataType) -> np.ndarray:
    """The values of a fixed-width array as numpy, zero-copy (NULL slots hold arbitrary values)."""
    array = _cast(array, arrow_type)
    if pa.types.is_boolean(arrow_type):
        values: np.ndarray = pc.fill_null(array, False).to_numpy(zero_copy_only=False)
        return values
    dtype = np.int64 if pa.types.is_timestamp(arrow_type) else _NUMPY_TYPES[arrow_type]
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(len(array), dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype)[array.offset : array.offset + len(array)]


def _binary_fixed(arrow_type: pa.DataType, wire: str) -> Callable[[pa.Array], ColumnValues]:
    def encode(array: pa.Array) -> ColumnValues:
        return _from_fixed(_numbers(array, arrow_type).astype(wire), array)

    return encode


def _binary_bool(array: pa.Array) -> ColumnValues:
    return _from_fixed(_numbers(array, pa.bool_()).astype(np.uint8), array)


# DuckDB's infinity and -infinity of a date or timestamp are the type's largest value and
# its negation; PostgreSQL sends them as the largest and the smallest value.
_DATE_INFINITY = np.iinfo(np.int32).max
_TIMESTAMP_INFINITY = np.iinfo(np.int64).max


def _binary_date(array: pa.Array) -> ColumnValues:
    raw = _numbers(array, pa.date32()).astype(np.int64)
    days = raw - _PG_EPOCH_DAYS_SINCE_UNIX
    days = np.where(raw == _DATE_INFINITY, _DATE_INFINITY, days)
    days = np.where(raw == -_DATE_INFINITY, np.iinfo(np.int32).min, days)
    return _from_fixed(days.astype(">i4"), array)


def _binary_timestamp(tz: str | None) -> Callable[[pa.Array], ColumnValues]:
    def encode(array: pa.Array) -> ColumnValues:
        raw = _numbers(array, pa.timestamp("us", tz=tz))
        finite = (raw != _TIMESTAMP_INFINITY) & (raw != -_TIMESTAMP_INFINITY)
        micros = np.where(finite, raw - np.where(finite, _PG_EPOCH_MICROS_SINCE_UNIX, 0), raw)
        micros = np.where(raw == -_TIMESTAMP_INFINITY, np.iinfo(np.int64).min, micros)
        return _from_fixed(micros.astype(">i8"), array)

    return encode


def _with_infinities(
    array: pa.Array, raw: np.ndarray, top: int, spell: Callable[[pa.Array], pa.Array]
) -> pa.Array:
    """``spell(array)``, with DuckDB's infinite dates and timestamps written as PostgreSQL
    writes them (``infinity``, ``-infinity``); the finite values are spelled without them."""
    plus, minus = raw == top, raw == -top
    if not (plus.any() or minus.any()):
        return spell(array)
    if array.null_count:
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        plus, minus = plus & valid, minus & valid
    text = spell(pc.if_else(pa.array(plus | minus), pa.nulls(1, array.type)[0], array))
    text = pc.if_else(pa.array(plus), _s("infinity"), text)
    return pc.if_else(pa.array(minus), _s("-infinity"), text)


def _binary_bytes(array: pa.Array) -> ColumnValues:
    if not (pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)):
        array = _text(array)
    return _from_binary_array(array)


_NUMERIC_GROUPS = 5  # base-10000 digits of any value below 10**20, so of any uint64


def _binary_numeric(array: pa.Array) -> ColumnValues:
    """numeric_send for a whole column: vectorised while the unscaled values fit in 64 bits."""
    if pa.types.is_decimal128(array.type) and array.type.scale >= 0:
        pad = -array.type.scale % 4
        if array.type.precision + pad <= 19:
            return _binary_numeric_vectorised(array, pad)
    return _binary_numeric_per_value(array)


def _binary_numeric_vectorised(array: pa.Array, pad: int) -> ColumnValues:
    """Split |unscaled| * 10**pad into base-10000 groups and keep the non-zero span.

    Padding the fraction to a multiple of four digits aligns the groups on the
    decimal point; each row is then header (ndigits, weight, sign, dscale)
    plus its groups from the first to the last non-zero one, most significant
    first, all as big-endian int16.
    """
    row_count, scale = len(array), array.type.scale
    words = np.frombuffer(array.buffers()[1], dtype=np.int64).reshape(-1, 2)
    unscaled = words[array.offset : array.offset + row_count, 0]
    magnitude = np.abs(unscaled).astype(np.uint64) * np.uint64(10**pad)
    powers = np.uint64(10_000) ** np.arange(_NUMERIC_GROUPS - 1, -1, -1, dtype=np.uint64)
    groups = ((magnitude[:, None] // powers) % np.uint64(10_000)).astype(np.int16)
    nonzero = groups != 0
    has_digits = nonzero.any(axis=1)
    first = np.argmax(nonzero, axis=1)
    last = _NUMERIC_GROUPS - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    ndigits = np.where(has_digits, last - first + 1, 0)
    weight = np.where(has_digits, _NUMERIC_GROUPS - 1 - first - (scale + pad) // 4, 0)
    header = np.stack(
        [ndigits, weight, np.where(unscaled < 0, 0x4000, 0), np.full(row_count, scale)], axis=1
    ).astype(np.int16)
    columns = np.arange(_NUMERIC_GROUPS)
    in_span = (columns >= first[:, None]) & (columns <= last[:, None]) & has_digits[:, None]
    keep = np.concatenate([np.ones((row_count, 4), dtype=bool), in_span], axis=1)
    lengths = (8 + 2 * ndigits).astype(np.int32)
    if array.null_count:
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        keep &= valid[:, None]
        lengths[~valid] = -1
    values = np.concatenate([header, groups], axis=1)[keep].astype(">i2")
    return ColumnValues(lengths, values.view(np.uint8))


def _binary_numeric_per_value(array: pa.Array) -> ColumnValues:
    scale = array.type.scale if pa.types.is_decimal(array.type) else None
    lengths = np.full(len(array), -1, dtype=np.int32)
    parts = []
    # Per value: beyond 64-bit unscaled values there is no numpy kernel for the digit groups.
    for row_idx, value in enumerate(array.to_pylist()):
        if value is None:
            continue
        encoded = numeric_binary(Decimal(str(value)), scale)
        lengths[row_idx] = len(encoded)
        parts.append(encoded)
    return ColumnValues(lengths, np.frombuffer(b"".join(parts), dtype=np.uint8))


def numeric_binary(value: Decimal, scale: int | None = None) -> bytes:
    """Encode a Decimal as numeric_send does: ndigits, weight, sign, dscale, base-10000 digits.

    Example:
        >>> numeric_binary(Decimal("123.40")).hex()
        '0002000000000002007b0fa0'
    """
    if value.is_nan():
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    if value.is_infinite():
        return struct.pack("!hhHh", 0, 0, 0xF000 if value < 0 else 0xD000, 0)
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int), "finite decimals have an integer exponent"
    dscale = max(0, -exponent) if scale is None else max(scale, 0)
    digits = "".join(map(str, digit_tuple))
    if exponent >= 0:
        whole, fraction = digits + "0" * exponent, ""
    else:
        digits = digits.rjust(-exponent + 1, "0")
        whole, fraction = digits[:exponent], digits[exponent:]
    whole = whole.rjust(-(-len(whole) // 4) * 4, "0")
    fraction = fraction.ljust(-(-len(fraction) // 4) * 4, "0")
    groups = [int(whole[i : i + 4]) for i in range(0, len(whole), 4)]
    weight = len(groups) - 1
    groups += [int(fraction[i : i + 4]) for i in range(0, len(fraction), 4)]
    while groups and groups[0] == 0:
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    header = struct.pack("!hhHh", len(groups), weight, 0x4000 if sign else 0, dscale)
    return header + struct.pack(f"!{len(groups)}h", *groups)


@functools.cache
def _s(text: str) -> pa.Scalar:
    """A string scalar for compute kernels (a bare str argument costs ~200 us per call)."""
    return pa.scalar(text, pa.string())


def _text(array: pa.Array) -> pa.Array:
    return pc.cast(array, pa.string())


def _spelt(array: pa.Array) -> pa.Array:
    """A date32 or microsecond timestamp array's text, years past Arrow's reach included."""
    return far_dates.respelt(array, _text(array))


def _fallback_text(array: pa.Array) -> pa.Array:
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array
    if pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type):
        return _text_bytea(array)
    if pa.types.is_timestamp(array.type):
        return _text_timestamp(array, with_zone=array.type.tz is not None)
    try:
        return _text(array)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        # Per value: nested types (lists, structs) have no cast to string.
        return pa.array([None if v is None else str(v) for v in array.to_pylist()], pa.string())


def _text_bool(array: pa.Array) -> pa.Array:
    if not pa.types.is_boolean(array.type):
        array = pc.cast(array, pa.bool_())
    return pc.if_else(array, _s("t"), _s("f"))


_HEX_DIGITS = np.frombuffer(
    b"".join(f"{byte:02x}".encode() for byte in range(256)), dtype=np.uint8
).reshape(256, 2)


def _text_bytea(array: pa.Array) -> pa.Array:
    """bytea_out in hex format: ``\\x`` then two lower-case hex digits per byte."""
    if not (pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)):
        array = _cast(array, pa.binary())
    values = _from_binary_array(array)
    offsets = np.zeros(len(array) + 1, dtype=np.int64)
    np.cumsum(np.maximum(values.lengths, 0) * 2, out=offsets[1:])
    hexed = pa.Array.from_buffers(
        pa.large_binary(),
        len(array),
        [
            _validity(array),
            pa.py_buffer(offsets),
            pa.py_buffer(_HEX_DIGITS[values.data].reshape(-1)),
        ],
    )
    prefix, separator = pa.scalar(b"\\x", pa.large_binary()), pa.scalar(b"", pa.large_binary())
    return pc.binary_join_element_wise(prefix, hexed, separator)


_BACKSLASH = 0x5C


def _text_bytea_escape(array: pa.Array) -> pa.Array:
    """bytea_out in escape format: printable ASCII as is, a backslash doubled, any other
    byte as a backslash and three octal digits."""
    if not (pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)):
        array = _cast(array, pa.binary())
    values = _from_binary_array(array)
    data = values.data
    octal = (data < 0x20) | (data > 0x7E)
    backslash = data == _BACKSLASH
    widths = np.where(octal, 4, np.where(backslash, 2, 1)).astype(np.int64)
    ends = np.cumsum(widths)
    starts = ends - widths
    out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    plain = ~(octal | backslash)
    out[starts[plain]] = data[plain]
    out[starts[backslash]] = _BACKSLASH
    out[starts[backslash] + 1] = _BACKSLASH
    at, byte = starts[octal], data[octal]
    out[at] = _BACKSLASH
    out[at + 1] = ord("0") + (byte >> 6)
    out[at + 2] = ord("0") + ((byte >> 3) & 7)
    out[at + 3] = ord("0") + (byte & 7)
    byte_ends = np.cumsum(np.maximum(values.lengths, 0))
    offsets = np.zeros(len(array) + 1, dtype=np.int64)
    offsets[1:] = np.concatenate(([0], ends))[byte_ends]
    return pa.Array.from_buffers(
        pa.large_binary(),
        len(array),
        [_validity(array), pa.py_buffer(offsets), pa.py_buffer(out)],
    )


def _text_float(array: pa.Array, is_float4: bool) -> pa.Array:
    """float4out/float8out: shortest round-trip digits, laid out as PostgreSQL does.

    Arrow already finds the shortest digits but switches to exponent notation
    outside 1e-6 <= |x| < 1e10; PostgreSQL does outside 1e-4 <= |x| < 1e15
    (1e6 for real) and pads exponents to two digits.  Only the values between
    those limits are re-laid out.
    """
    arrow_type = pa.float32() if is_float4 else pa.float64()
    if array.type != arrow_type:
        array = pc.cast(array, arrow_type)
    text = _text(array)
    magnitude = np.abs(_numbers(array, arrow_type))
    if array.null_count:
        magnitude = np.where(array.is_valid().to_numpy(zero_copy_only=False), magnitude, 1.0)
    bound = arrow_type.to_pandas_dtype()
    small = (magnitude >= bound(1e-6)) & (magnitude < bound(1e-4))
    if is_float4:
        to_exponent = small | ((magnitude >= bound(1e6)) & (magnitude < bound(1e10)))
        to_fixed = np.zeros(len(magnitude), dtype=bool)
    else:
        to_exponent = small
        to_fixed = (magnitude >= 1e10) & (magnitude < 1e15)
    if to_exponent.any():
        text = _relayout(
            text,
            to_exponent,
            _fixed_to_exponent(text.filter(to_exponent), magnitude[to_exponent], bound),
        )
    if to_fixed.any():
        text = _relayout(text, to_fixed, _exponent_to_fixed(text.filter(to_fixed)))
    if ((magnitude >= bound(1e-10)) & (magnitude < bound(1e-6))).any():
        text = pc.replace_substring_regex(text, options=_ONE_DIGIT_EXPONENT)
    if not np.isfinite(magnitude).all():
        text = pc.replace_substring_regex(text, r"^(-?)inf$", r"\1Infinity")
        text = pc.replace_substring(text, "nan", "NaN")
    return text


def _text_float_rounded(array: pa.Array, is_float4: bool, extra_float_digits: int) -> pa.Array:
    """float4out/float8out for extra_float_digits <= 0: ``%.{FLT_DIG|DBL_DIG + n}g``."""
    digits = max((6 if is_float4 else 15) + extra_float_digits, 1)
    arrow_type = pa.float32() if is_float4 else pa.float64()
    values = _numbers(array, arrow_type)
    text = np.char.mod(f"%.{digits}g", values.astype(np.float64))
    text = np.where(np.isnan(values), "NaN", text)
    text = np.where(np.isposinf(values), "Infinity", text)
    text = np.where(np.isneginf(values), "-Infinity", text)
    mask = None if not array.null_count else ~array.is_valid().to_numpy(zero_copy_only=False)
    return pa.array(text, pa.string(), mask=mask)


_ONE_DIGIT_EXPONENT = pc.ReplaceSubstringOptions(r"e([+-])(\d)$", r"e\10\2")


def _relayout(text: pa.Array, mask: np.ndarray, replacements: pa.Array) -> pa.Array:
    return pc.replace_with_mask(text, pa.array(mask), replacements.cast(text.type))


def _split_sign(text: pa.Array) -> tuple[pa.Array, pa.Array]:
    return pc.starts_with(text, "-"), pc.utf8_ltrim(text, characters="-")


def _with_sign(negative: pa.Array, text: pa.Array) -> pa.Array:
    return pc.if_else(negative, pc.binary_join_element_wise(_s("-"), text, _s("")), text)


def _fixed_to_exponent(text: pa.Array, magnitude: np.ndarray, bound: type) -> pa.Array:
    """'0.0000123' -> '1.23e-05', '1234567' -> '1.234567e+06' (decimal exponents -6, -5, 6..9)."""
    negative, body = _split_sign(text)
    exponent = np.full(len(magnitude), -6, dtype=np.int64)
    for power in (-5, 6, 7, 8, 9):
        exponent[magnitude >= bound(10.0**power)] = power
    digits = pc.utf8_trim(pc.replace_substring(body, ".", ""), characters="0")
    first = pc.utf8_slice_codeunits(digits, 0, 1)
    rest = pc.utf8_slice_codeunits(digits, 1)
    has_rest = pc.greater(pc.utf8_length(rest), 0)
    mantissa = pc.if_else(has_rest, pc.binary_join_element_wise(first, rest, _s(".")), first)
    powers, index = np.unique(exponent, return_inverse=True)
    suffix = pa.array([f"e{'-' if p < 0 else '+'}{abs(p):02d}" for p in powers]).take(index)
    return _with_sign(negative, pc.binary_join_element_wise(mantissa, suffix, _s("")))


def _exponent_to_fixed(text: pa.Array) -> pa.Array:
    """'1.2345e+12' -> '1234500000000' and '1.5e+10' -> '15000000000' for exponents 10..14."""
    negative, body = _split_sign(text)
    parts = pc.split_pattern(body, "e")
    mantissa = pc.list_element(parts, 0)
    exponent = pc.cast(pc.utf8_ltrim(pc.list_element(parts, 1), characters="+"), pa.int32())
    exponent = exponent.to_numpy()
    digits = pc.replace_substring(mantissa, ".", "")
    out = pa.nulls(len(text), pa.string())
    for power in np.unique(exponent):
        mask = pa.array(exponent == power)
        group = digits.filter(mask)
        width = int(power) + 1
        padded = pc.utf8_rpad(group, width=width, padding="0")
        split = pc.binary_join_element_wise(
            pc.utf8_slice_codeunits(group, 0, width), pc.utf8_slice_codeunits(group, width), _s(".")
        )
        fixed = pc.if_else(pc.greater(pc.utf8_length(group), width), split, padded)
        out = pc.replace_with_mask(out, mask, fixed.cast(pa.string()))
    return _with_sign(negative, out)


_EXPONENT_MARK = pc.MatchSubstringOptions("E")


def _text_numeric(array: pa.Array) -> pa.Array:
    """numeric_out: Arrow's spelling except where it chose exponent notation (tiny values)."""
    if not pa.types.is_decimal(array.type):
        return _fallback_text(array)
    text = _text(array)
    if 0 <= array.type.scale <= 6:
        return text  # Arrow writes an exponent only below 1e-6 or for a negative scale
    exponent = pc.fill_null(pc.match_substring(text, options=_EXPONENT_MARK), False)
    if pc.any(exponent).as_py():
        # Per value: only values below 1e-6 with a scale above 6 (or a negative scale) get here.
        fixed = [format(Decimal(v), "f") for v in text.filter(exponent).to_pylist()]
        text = pc.replace_with_mask(text, exponent, pa.array(fixed, pa.string()))
    return text


def _text_date(array: pa.Array) -> pa.Array:
    if not pa.types.is_date32(array.type):
        array = pc.cast(array, pa.date32())
    days = _numbers(array, pa.date32())
    text = _with_infinities(array, days, _DATE_INFINITY, _spelt)
    return bc_dates.with_era(text, bc_dates.date_candidates(days[days != -_DATE_INFINITY]))


_FRACTION_ZEROS = pc.ReplaceSubstringOptions(r"(\.\d*[1-9])0+$|\.0+$", r"\1")


_DAY_MICROS = 86_400_000_000
"""``24:00:00``, the end of the day: a time PostgreSQL holds and Arrow cannot spell."""


def _text_time(array: pa.Array) -> pa.Array:
    """time_out: Arrow's six fraction digits without their trailing zeros (and point)."""
    if not pa.types.is_time(array.type):
        return pc.replace_substring_regex(_text(array), options=_FRACTION_ZEROS)
    array = _cast(array, pa.time64("us"))
    day_end = _numbers(array, pa.time64("us")) == _DAY_MICROS
    if not day_end.any():
        return pc.replace_substring_regex(_text(array), options=_FRACTION_ZEROS)
    ends = pc.and_(pa.array(day_end), pc.is_valid(array))
    clock = pc.if_else(ends, pa.scalar(0, pa.time64("us")), array)
    text = pc.replace_substring_regex(_text(clock), options=_FRACTION_ZEROS)
    return pc.if_else(ends, _s("24:00:00"), text)


def _binary_time(array: pa.Array) -> ColumnValues:
    """time_send: int64 microseconds since midnight."""
    micros = _numbers(_cast(array, pa.time64("us")), pa.time64("us"))
    return _from_fixed(micros.astype(">i8"), array)


_TIMETZ_TEXT = re.compile(r"(\d+):(\d\d):(\d\d)(\.\d+)?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?")


def _binary_timetz(array: pa.Array) -> ColumnValues:
    """timetz_send: int64 microseconds of the local time, then int32 seconds west of UTC.

    A timetz result reaches the encoder as DuckDB's text (Arrow's time64 has no zone);
    read back per value, as timetz is a rare type."""
    packed: list[bytes | None] = []
    for text in _fallback_text(array).to_pylist():
        if text is None:
            packed.append(None)
            continue
        match = _TIMETZ_TEXT.fullmatch(text)
        if match is None:
            raise ValueError(f"unexpected timetz text {text!r}")
        hour, minute, second, fraction, sign, zh, zm, zs = match.groups()
        micros = ((int(hour) * 60 + int(minute)) * 60 + int(second)) * 1_000_000
        micros += round(float("0" + fraction) * 1_000_000) if fraction else 0
        east = int(zh) * 3600 + int(zm or 0) * 60 + int(zs or 0)
        packed.append(struct.pack(">qi", micros, east if sign == "-" else -east))
    return _from_binary_array(pa.array(packed, pa.binary()))


_TRAILING_FRACTION_ZEROS = pc.ReplaceSubstringOptions(r"\.?0*$", "")
_TRAILING_FRACTION_ZEROS_UTC = pc.ReplaceSubstringOptions(r"\.?0*$", "+00")
_ISO_TIMESTAMP_WIDTH = len("2000-01-01 00:00:00.000000")
_REGEX_BELOW_ROWS = 32  # below this the regex's fixed cost beats the byte-matrix trim


def _text_timestamp(array: pa.Array, with_zone: bool) -> pa.Array:
    """timestamp_out with ISO DateStyle: Arrow's spelling without the fraction's trailing zeros.

    Arrow always writes six fraction digits; PostgreSQL drops trailing zeros
    (and the point) and, TimeZone being UTC, appends ``+00`` to a timestamptz.
    The UTC value is formatted as a naive one: Arrow formats zoned values
    some thirty times slower.  Large arrays are trimmed as a byte matrix
    (about 2x faster than the regex, which is kept for small ones).
    """
    if pa.types.is_timestamp(array.type):
        raw = _numbers(array, array.type)
        text = _with_infinities(
            array, raw, _TIMESTAMP_INFINITY, lambda a: _text_finite_timestamp(a, with_zone)
        )
        micros = raw if array.type.unit == "us" else _numbers(array, pa.timestamp("us"))
        early = bc_dates.timestamp_candidates(micros[micros != -_TIMESTAMP_INFINITY])
        return bc_dates.with_era(text, early)
    return bc_dates.with_era(_text_finite_timestamp(array, with_zone))


def _text_finite_timestamp(array: pa.Array, with_zone: bool) -> pa.Array:
    zone = array.type.tz if with_zone and pa.types.is_timestamp(array.type) else None
    if zone not in (None, "UTC"):
        return _text_local_timestamp(array)
    zoned = _cast(array, pa.timestamp("us", tz="UTC" if with_zone else None))
    naive = zoned.cast(pa.timestamp("us")) if with_zone else zoned
    text = _spelt(naive)
    if len(text) >= _REGEX_BELOW_ROWS:
        suffix = b"+00" if with_zone else b""
        trimmed = _trim_fractions(text, _numbers(naive, naive.type), suffix)
        if trimmed is not None:
            return trimmed
    options = _TRAILING_FRACTION_ZEROS_UTC if with_zone else _TRAILING_FRACTION_ZEROS
    return pc.replace_substring_regex(text, options=options)


def _text_local_timestamp(array: pa.Array) -> pa.Array:
    """A timestamptz in its array's (the session's) zone: wall-clock time, then the offset
    as PostgreSQL writes it (``-05``, ``+05:30``), per value, DST included."""
    utc = _cast(array, pa.timestamp("us", tz=array.type.tz))
    local = pc.local_timestamp(utc)
    text = _text_finite_timestamp(local, with_zone=False)
    offsets = (_numbers(local, pa.timestamp("us")) - _numbers(utc, utc.type)) // 1_000_000
    distinct, index = np.unique(offsets, return_inverse=True)
    spelled = pa.array([_utc_offset(int(seconds)) for seconds in distinct], pa.string())
    suffixes = spelled.take(pa.array(index.astype(np.int32)))
    return pc.binary_join_element_wise(text, suffixes, _s(""))


def _utc_offset(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    minutes, second = divmod(abs(seconds), 60)
    hour, minute = divmod(minutes, 60)
    text = f"{sign}{hour:02d}"
    if minute or second:
        text += f":{minute:02d}"
    if second:
        text += f":{second:02d}"
    return text


def _trim_fractions(text: pa.Array, micros: np.ndarray, suffix: bytes) -> pa.Array | None:
    """Cut each fixed-width 'YYYY-MM-DD HH:MM:SS.ffffff' to its significant fraction digits.

    Works on the strings as a rows x 26 byte matrix; returns None (use the
    regex) when some year has other than four digits.
    """
    values = _from_binary_array(text)
    valid = values.lengths >= 0
    width = _ISO_TIMESTAMP_WIDTH
    if not (values.lengths[valid] == width).all():
        return None
    fraction = np.mod(micros[valid], 1_000_000)
    digits = np.full(len(fraction), 6)
    for divisor in (10, 100, 1_000, 10_000, 100_000):
        digits -= fraction % divisor == 0
    kept = np.where(fraction == 0, width - 7, width - 6 + digits)
    matrix = np.empty((len(fraction), width + len(suffix)), dtype=np.uint8)
    matrix[:, :width] = values.data.reshape(-1, width)
    if suffix:
        rows = np.arange(len(fraction))[:, None]
        matrix[rows, kept[:, None] + np.arange(len(suffix))] = np.frombuffer(suffix, np.uint8)
    kept += len(suffix)
    data = matrix[np.arange(matrix.shape[1]) < kept[:, None]]
    lengths = np.zeros(len(text), dtype=np.int64)
    lengths[valid] = kept
    offsets = np.zeros(len(text) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    buffers = [_validity(text), pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string(), len(text), buffers)


def _binary_uuid(array: pa.Array) -> ColumnValues:
    """uuid_send: the 16 bytes, decoded from the canonical text for the whole column at once."""
    packed = uuid_bytes(_text(array))
    values = np.frombuffer(packed.buffers()[1], dtype="V16")[: len(packed)]
    return _from_fixed(values, array)


def _binary_jsonb(array: pa.Array) -> ColumnValues:
    """jsonb_send: format version 1, then the text."""
    return _from_binary_array(pc.binary_join_element_wise(_s("\x01"), _text(array), _s("")))


def _validity(array: pa.Array) -> pa.Buffer | None:
    """A validity bitmap for the array starting at offset 0 (None when nothing is NULL)."""
    if not array.null_count:
        return None
    return pa.py_buffer(
        np.packbits(array.is_valid().to_numpy(zero_copy_only=False), bitorder="little")
    )


_TEXT_ENCODERS: dict[int, Callable[[pa.Array], pa.Array]] = {
    TypeOid.BOOL: _text_bool,
    TypeOid.BYTEA: _text_bytea,
    TypeOid.INT2: _text,
    TypeOid.INT4: _text,
    TypeOid.INT8: _text,
    TypeOid.FLOAT4: lambda a: _text_float(a, is_float4=True),
    TypeOid.FLOAT8: lambda a: _text_float(a, is_float4=False),
    TypeOid.NUMERIC: _text_numeric,
    TypeOid.TEXT: _fallback_text,
    TypeOid.VARCHAR: _fallback_text,
    TypeOid.NAME: _fallback_text,
    TypeOid.DATE: _text_date,
    TypeOid.TIME: _text_time,
    TypeOid.TIMESTAMP: lambda a: _text_timestamp(a, with_zone=False),
    TypeOid.TIMESTAMPTZ: lambda a: _text_timestamp(a, with_zone=True),
    TypeOid.INTERVAL: intervals.text_interval,
    TypeOid.UUID: _fallback_text,
    TypeOid.JSON: _fallback_text,
    TypeOid.JSONB: _fallback_text,
}

_REG_OIDS = (TypeOid.REGCLASS, TypeOid.REGTYPE, TypeOid.REGNAMESPACE)
"""The reg* types whose binary form is sent as the OID (``_reg_oids``) where it is known."""


def _binary_reg(array: pa.Array) -> ColumnValues:
    """regclass_send and friends: the 4-byte OID where ``_reg_oids`` found it, else the name
    (a reg* value whose OID nyala cannot give)."""
    if pa.types.is_integer(array.type):
        return _binary_fixed(pa.uint32(), ">u4")(array)
    return _from_binary_array(_fallback_text(array))


_BINARY_ENCODERS: dict[int, Callable[[pa.Array], ColumnValues]] = {
    TypeOid.BOOL: _binary_bool,
    TypeOid.BYTEA: _binary_bytes,
    TypeOid.INT2: _binary_fixed(pa.int16(), ">i2"),
    TypeOid.INT4: _binary_fixed(pa.int32(), ">i4"),
    TypeOid.INT8: _binary_fixed(pa.int64(), ">i8"),
    TypeOid.OID: _binary_fixed(pa.uint32(), ">u4"),
    **dict.fromkeys(_REG_OIDS, _binary_reg),
    TypeOid.FLOAT4: _binary_fixed(pa.float32(), ">f4"),
    TypeOid.FLOAT8: _binary_fixed(pa.float64(), ">f8"),
    TypeOid.NUMERIC: _binary_numeric,
    TypeOid.DATE: _binary_date,
    TypeOid.TIME: _binary_time,
    TypeOid.TIMETZ: _binary_timetz,
    TypeOid.TIMESTAMP: _binary_timestamp(None),
    TypeOid.TIMESTAMPTZ: _binary_timestamp("UTC"),
    TypeOid.INTERVAL: lambda a: _from_fixed(intervals.binary_interval(a), a),
    TypeOid.UUID: _binary_uuid,
    TypeOid.JSON: lambda a: _from_binary_array(_text(a)),
    TypeOid.JSONB: _binary_jsonb,
}
_BINARY_ENCODERS.update(array_binary.array_encoders(_BINARY_ENCODERS))
