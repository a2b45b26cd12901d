"""Encode primary keys to bytes that sort in the same order as the key tuples (Kudu's "memcmp" keys).

The MemRowSet is keyed by these bytes, and scans turn key-column predicates
into byte bounds ``[lower, upper)`` over them.  Each key column is encoded in
turn and the pieces are concatenated:

=======================  ==============================================================
column type              encoding
=======================  ==============================================================
int8/16/32/64            big-endian two's complement, sign bit flipped (1, 2, 4, 8 bytes)
date                     as int32 (days since 1970-01-01)
timestamp                as int64 (microseconds since 1970-01-01, UTC for timestamptz)
decimal(p, s)            the unscaled value as int128, big-endian, sign bit flipped
string, varchar, binary  UTF-8 / raw bytes; in every column but the last, each ``00`` byte
                         becomes ``00 01`` and the value ends with ``00 00``
=======================  ==============================================================

Flipping the sign bit makes negative numbers sort below positive ones; the
``00 00`` terminator sorts below any escaped byte, so ``"a"`` < ``"a\\0"`` <
``"ab"`` still holds when a later column follows.  The last column needs no
terminator because nothing follows it.  Floating-point and boolean columns
cannot be key columns (as in Kudu).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import DataType, TypeKind

_INT_WIDTH_BYTES = {
    TypeKind.INT8: 1,
    TypeKind.INT16: 2,
    TypeKind.INT32: 4,
    TypeKind.INT64: 8,
    TypeKind.DATE: 4,
    TypeKind.TIMESTAMP: 8,
}
_PLAIN_INTEGERS = (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64)
_ARROW_INT = {1: pa.int8(), 2: pa.int16(), 4: pa.int32(), 8: pa.int64()}
_BYTES_KINDS = (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.BINARY)
_DECIMAL_WIDTH_BYTES = 16
_TERMINATOR = b"\x00\x00"
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH_NAIVE = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def is_key_type(data_type: DataType) -> bool:
    """Whether a column of this type may be part of a primary key."""
    return data_type.kind in _INT_WIDTH_BYTES or data_type.kind in (
        TypeKind.DECIMAL,
        *_BYTES_KINDS,
    )


def encode_keys(columns: Sequence[pa.Array], types: Sequence[DataType]) -> list[bytes]:
    """Encode the key of every row of a batch, given its key columns in key order.

    Fixed-width columns are encoded with numpy and strings with Arrow kernels;
    the only per-row step is Arrow handing back one ``bytes`` per row.
    """
    keys: list[bytes] = encode_keys_array(columns, types).to_pylist()
    return keys


def encode_keys_array(columns: Sequence[pa.Array], types: Sequence[DataType]) -> pa.Array:
    """``encode_keys`` as an Arrow binary array (for vectorised work on the keys)."""
    assert len(columns) == len(types) > 0, "one array per key column"
    last = len(columns) - 1
    parts = [
        _encode_array(column, data_type, is_last=idx == last)
        for idx, (column, data_type) in enumerate(zip(columns, types))
    ]
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, b"")


def _encode_array(column: pa.Array, data_type: DataType, *, is_last: bool) -> pa.Array:
    assert column.null_count == 0, "key columns are NOT NULL"
    kind = data_type.kind
    if kind in _BYTES_KINDS:
        raw = column.cast(pa.binary())
        if is_last:
            return raw
        escaped = pc.replace_substring(raw, b"\x00", b"\x00\x01")
        return pc.binary_join_element_wise(escaped, pa.scalar(_TERMINATOR), pa.scalar(b""))
    if kind is TypeKind.DECIMAL:
        matrix = np.frombuffer(column.buffers()[1], dtype=np.uint8).reshape(-1, 16)
        matrix = matrix[column.offset : column.offset + len(column), ::-1].copy()
        matrix[:, 0] ^= 0x80
        return _fixed_width_to_binary(matrix, _DECIMAL_WIDTH_BYTES)
    width = _INT_WIDTH_BYTES.get(kind)
    if width is None:
        raise ValueError(f"{data_type.pg_name()} cannot be a key column")
    values = column.cast(_ARROW_INT[width]).to_numpy(zero_copy_only=False)
    unsigned = values.astype(f"i{width}").view(f"u{width}")
    flipped = unsigned ^ np.array(1 << (8 * width - 1), dtype=f"u{width}")
    return _fixed_width_to_binary(flipped.astype(f">u{width}"), width)


def _fixed_width_to_binary(values: np.ndarray, width: int) -> pa.Array:
    buffer = pa.py_buffer(np.ascontiguousarray(values).tobytes())
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(values), [None, buffer])
    return fixed.cast(pa.binary())


def encode_key(values: Sequence[object], types: Sequence[DataType]) -> bytes:
    """Encode one whole key given as Python values (ints, str, bytes, Decimal, date, datetime).

    Raises ValueError when a value is not exactly representable in its column's type.

    Example:
        >>> from storage.data_type import INT32, STRING
        >>> encode_key([1, "a"], [INT32, STRING])
        b'\\x80\\x00\\x00\\x01a'
    """
    assert len(values) == len(types), "one value per key column"
    last = len(values) - 1
    return b"".join(
        encode_value(value, data_type, is_last=idx == last)
        for idx, (value, data_type) in enumerate(zip(values, types))
    )


def integer_key_width(types: Sequence[DataType]) -> int | None:
    """The byte width of a key of one integer column (int8 to int64), which
    ``encode_integer_keys`` encodes; None for any other key."""
    if len(types) != 1 or types[0].kind not in _PLAIN_INTEGERS:
        return None
    return _INT_WIDTH_BYTES[types[0].kind]


def encode_integer_keys(values: Sequence[int], width: int) -> list[bytes]:
    """``encode_key`` of each of a few one-column integer keys already in their column's
    range (an Arrow array of its type gave them): without the per-value type dispatch a
    write by key would pay for every statement."""
    bias = 1 << (8 * width - 1)
    return [(value + bias).to_bytes(width) for value in values]


def encode_value(value: object, data_type: DataType, *, is_last: bool) -> bytes:
    """Encode one key column's value; ``is_last`` says whether it is the key's last column."""
    kind = data_type.kind
    if kind in _BYTES_KINDS:
        if isinstance(value, str):
            raw = value.encode()
        elif isinstance(value, bytes | bytearray | memoryview):
            raw = bytes(value)
        else:
            raise ValueError(f"{value!r} is not a {data_type.pg_name()}")
        return raw if is_last else raw.replace(b"\x00", b"\x00\x01") + _TERMINATOR
    if kind is TypeKind.DECIMAL:
        return _flip_sign(_unscaled_decimal(value, data_type.scale or 0), _DECIMAL_WIDTH_BYTES)
    width = _INT_WIDTH_BYTES.get(kind)
    if width is None:
        raise ValueError(f"{data_type.pg_name()} cannot be a key column")
    return _flip_sign(_integer_value(value, kind), width)


def _flip_sign(number: int, width: int) -> bytes:
    bits = 8 * width
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise ValueError(f"{number} does not fit in {width} bytes")
    return (number + (1 << (bits - 1))).to_bytes(width, "big")


def _integer_value(value: object, kind: TypeKind) -> int:
    if kind is TypeKind.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return (value - _EPOCH_DATE).days
    if kind is TypeKind.TIMESTAMP and isinstance(value, dt.datetime):
        delta = value - (_EPOCH_NAIVE if value.tzinfo is None else _EPOCH_UTC)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"{value!r} is not an integer key value")


def _unscaled_decimal(value: object, scale: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        value = decimal.Decimal(value)
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise ValueError(f"{value!r} is not a decimal key value")
    unscaled = value.scaleb(scale)
    if unscaled != unscaled.to_integral_value():
        raise ValueError(f"{value} has more than {scale} fractional digits")
    return int(unscaled)


def decode_key(data: bytes, types: Sequence[DataType]) -> tuple[object, ...]:
    """Decode a key made by ``encode_key`` back to Python values of the column types."""
    out: list[object] = []
    pos = 0
    last = len(types) - 1
    for idx, data_type in enumerate(types):
        kind = data_type.kind
        if kind in _BYTES_KINDS:
            if idx == last:
                raw, pos = data[pos:], len(data)
            else:
                raw, pos = _read_escaped(data, pos)
            out.append(raw.decode() if data_type.is_string else raw)
            continue
        width = _DECIMAL_WIDTH_BYTES if kind is TypeKind.DECIMAL else _INT_WIDTH_BYTES[kind]
        number = int.from_bytes(data[pos : pos + width], "big") - (1 << (8 * width - 1))
        pos += width
        if kind is TypeKind.DECIMAL:
            out.append(decimal.Decimal(number).scaleb(-(data_type.scale or 0)))
        elif kind is TypeKind.DATE:
            out.append(_EPOCH_DATE + dt.timedelta(days=number))
        elif kind is TypeKind.TIMESTAMP:
            epoch = _EPOCH_UTC if data_type.with_time_zone else _EPOCH_NAIVE
            out.append(epoch + dt.timedelta(microseconds=number))
        else:
            out.append(number)
    return tuple(out)


def key_of_sortable(data: bytes, types: Sequence[DataType]) -> bytes | None:
    """The ``encode_key`` of a key whose columns ``encode_sortable`` wrote (one row's
    bytes, as a secondary index entry holds its row's primary key), or None when a column
    is NULL or ``data`` holds no whole key: the same bytes but for each column's flag, and
    the last column unescaped, as a key's last column is stored raw."""
    parts = []
    pos = 0
    last = len(types) - 1
    for idx, data_type in enumerate(types):
        if data[pos : pos + 1] != _NOT_NULL:
            return None
        pos += 1
        kind = data_type.kind
        if kind in _BYTES_KINDS:
            end = data.find(_TERMINATOR, pos)
            if end < 0:
                return None
            if idx == last:
                raw, pos = _read_escaped(data, pos)
                parts.append(raw)
                continue
            parts.append(data[pos : end + 2])
            pos = end + 2
            continue
        width = _DECIMAL_WIDTH_BYTES if kind is TypeKind.DECIMAL else _INT_WIDTH_BYTES.get(kind)
        if width is None or pos + width > len(data):
            return None
        parts.append(data[pos : pos + width])
        pos += width
    return b"".join(parts) if pos == len(data) else None


def _read_escaped(data: bytes, pos: int) -> tuple[bytes, int]:
    out = bytearray()
    while True:
        zero = data.index(b"\x00", pos)
        out += data[pos:zero]
        if data[zero + 1] == 0:
            return bytes(out), zero + 2
        out.append(0)
        pos = zero + 2


def prefix_successor(key: bytes) -> bytes | None:
    """Smallest byte string greater than every string that starts with ``key`` (None: no bound).

    Example:
        >>> prefix_successor(b"ab\\xff")
        b'ac'
    """
    stripped = key.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


_NOT_NULL = b"\x00"
_NULL = b"\x01"


def encode_sortable(columns: Sequence[pa.Array], types: Sequence[DataType]) -> pa.Array:
    """Encode rows of possibly-NULL values of any comparable type to one binary array whose
    bytes sort as the tuples do, NULLs last (PostgreSQL's ascending order).

    This is how a secondary index's key holds its columns (``catalog.indexes``): each value
    is a flag byte (``00`` a value, ``01`` NULL) then the value as a non-last key column, so a
    prefix of the columns encodes to a prefix of the bytes.  Booleans and floats, which
    cannot be primary-key columns, get order-preserving encodings of their own.
    """
    parts = []
    for column, data_type in zip(columns, types):
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        valid = column.is_valid()
        filled = column.fill_null(_zero_of(column.type)) if column.null_count else column
        if data_type.kind is TypeKind.BOOL:
            values = filled.cast(pa.uint8()).to_numpy(zero_copy_only=False).astype(">u1")
            encoded = _fixed_width_to_binary(values, 1)
        elif data_type.kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
            encoded = _encode_float(filled)
        else:
            encoded = _encode_array(filled, data_type, is_last=False)
        flags = pc.if_else(valid, pa.scalar(_NOT_NULL), pa.scalar(_NULL))
        nulls_blank = pc.if_else(valid, encoded, pa.scalar(b""))
        parts.append(pc.binary_join_element_wise(flags, nulls_blank, b""))
    if not parts:
        return pa.array([], pa.binary())
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, b"")


def _zero_of(arrow_type: pa.DataType) -> pa.Scalar:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pa.scalar("", arrow_type)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.scalar(b"", arrow_type)
    if pa.types.is_boolean(arrow_type):
        return pa.scalar(False)
    if pa.types.is_date32(arrow_type):
        return pa.scalar(0, pa.int32()).cast(arrow_type)
    if pa.types.is_decimal(arrow_type):
        # An int64 0 cast to decimal(10, 2) fails: the cast wants precision for any int64.
        return pa.scalar(decimal.Decimal(0), arrow_type)
    return pa.scalar(0).cast(arrow_type)


def _encode_float(column: pa.Array) -> pa.Array:
    """IEEE doubles as big-endian bytes that sort numerically: negatives have every bit
    flipped, others only the sign bit; -0.0 is folded into 0.0 and NaN sorts last."""
    values = column.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
    values = np.where(values == 0.0, 0.0, values)
    values = np.where(np.isnan(values), np.inf, values)
    bits = values.view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    flipped = np.where(negative, ~bits, bits | np.uint64(1 << 63))
    nan = np.isnan(column.cast(pa.float64()).to_numpy(zero_copy_only=False))
    flipped = np.where(nan, np.uint64(0xFFFFFFFFFFFFFFFF), flipped)
    return _fixed_width_to_binary(flipped.astype(">u8"), 8)
