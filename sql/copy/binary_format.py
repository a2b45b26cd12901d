"""COPY's binary format on input: split the stream into tuples, decode each column with numpy.

The stream is PostgreSQL's ``PGCOPY\\n\\377\\r\\n\\0`` signature, flags and a
header extension, then tuples (int16 field count, then per field an int32
length, -1 for NULL, and the value in the type's binary send format), then
the int16 -1 trailer.  Field lengths vary, so finding where each field starts
is a walk over the length words; that walk only reads integers.  The values
themselves are decoded column by column: fixed-width types by gathering their
bytes into a big-endian numpy view, variable-width ones by building Arrow
offsets over one gathered data buffer.  Numeric is the one type decoded per
value (its base-10000 digit groups do not map onto a numpy dtype).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import (
    BadCopyFileFormat,
    DbError,
    FeatureNotSupported,
    InvalidBinaryRepresentation,
    ProtocolViolation,
)
from storage.type_oids import TypeOid

SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_POSTGRES_EPOCH_DAYS = 10957
_POSTGRES_EPOCH_US = _POSTGRES_EPOCH_DAYS * 86_400_000_000
_FIXED = {
    TypeOid.BOOL: (1, ">u1"),
    TypeOid.INT2: (2, ">i2"),
    TypeOid.INT4: (4, ">i4"),
    TypeOid.INT8: (8, ">i8"),
    TypeOid.FLOAT4: (4, ">f4"),
    TypeOid.FLOAT8: (8, ">f8"),
    TypeOid.DATE: (4, ">i4"),
    TypeOid.TIMESTAMP: (8, ">i8"),
    TypeOid.TIMESTAMPTZ: (8, ">i8"),
}
_INT16 = struct.Struct("!h")
_INT32 = struct.Struct("!i")


@dataclass(slots=True)
class Fields:
    """Where each field of a run of tuples lies in a buffer: start offsets and lengths per column."""

    starts: np.ndarray
    lengths: np.ndarray
    rows: int
    consumed: int
    saw_trailer: bool


def header_length(buffer: bytes | bytearray) -> int | None:
    """Bytes of the file header at the start of ``buffer`` (None: not all of it has arrived)."""
    if len(buffer) < len(SIGNATURE) + 8:
        return None
    if bytes(buffer[: len(SIGNATURE)]) != SIGNATURE:
        raise BadCopyFileFormat("COPY file signature not recognized")
    (flags,) = _INT32.unpack_from(buffer, len(SIGNATURE))
    if flags & 0x10000:
        raise BadCopyFileFormat("invalid COPY file header (WITH OIDS)")
    if flags & ~0xFFFF & ~0x10000:
        raise BadCopyFileFormat("unrecognized critical flags in COPY file header")
    (extension,) = _INT32.unpack_from(buffer, len(SIGNATURE) + 4)
    if extension < 0:
        raise BadCopyFileFormat("invalid COPY file header (missing length)")
    total = len(SIGNATURE) + 8 + extension
    return total if len(buffer) >= total else None


def split_tuples(buffer: bytes | bytearray, start: int, columns: int, line: int) -> Fields:
    """Walk the complete tuples in ``buffer`` from ``start``; stop at a partial one or the trailer.

    ``line`` is the number of tuples before this buffer, for error contexts (the
    erring tuple's number is left on the error as ``copy_line``).
    """
    view = memoryview(buffer)
    end = len(buffer)
    starts: list[int] = []
    lengths: list[int] = []
    pos = start
    rows = 0
    saw_trailer = False
    unpack16, unpack32 = _INT16.unpack_from, _INT32.unpack_from
    while pos + 2 <= end:
        (count,) = unpack16(view, pos)
        if count == -1:
            saw_trailer = True
            pos += 2
            break
        if count != columns:
            error = BadCopyFileFormat(f"row field count is {count}, expected {columns}")
            raise _at(error, line + rows + 1)
        cursor = pos + 2
        row_starts: list[int] = []
        row_lengths: list[int] = []
        complete = True
        for _ in range(columns):
            if cursor + 4 > end:
                complete = False
                break
            (length,) = unpack32(view, cursor)
            if length < -1:
                raise _at(BadCopyFileFormat("invalid field size"), line + rows + 1)
            cursor += 4
            row_starts.append(cursor)
            row_lengths.append(length)
            if length > 0:
                cursor += length
            if cursor > end:
                complete = False
                break
        if not complete:
            break
        starts.extend(row_starts)
        lengths.extend(row_lengths)
        rows += 1
        pos = cursor
    shape = (rows, columns)
    return Fields(
        np.asarray(starts, dtype=np.int64).reshape(shape),
        np.asarray(lengths, dtype=np.int64).reshape(shape),
        rows,
        pos,
        saw_trailer,
    )


def _at(error: DbError, line: int) -> DbError:
    """Note the tuple an error is about (counted from 1); the COPY adds its CONTEXT line."""
    error.copy_line = line
    return error


def decode_column(
    buffer: bytes | bytearray, starts: np.ndarray, lengths: np.ndarray, type_oid: int
) -> pa.Array:
    """One column's values from their field positions, as the Arrow array INSERT reads."""
    raw = np.frombuffer(buffer, dtype=np.uint8)
    valid = lengths >= 0
    mask = ~valid if not valid.all() else None
    if type_oid in _FIXED:
        size, dtype = _FIXED[TypeOid(type_oid)]
        bad = np.flatnonzero(valid & (lengths != size))
        if bad.size:
            first = int(bad[0])
            error: DbError = (
                ProtocolViolation("insufficient data left in message")
                if lengths[first] < size
                else InvalidBinaryRepresentation("incorrect binary data format")
            )
            raise _at(error, first + 1)
        positions = np.where(valid, starts, 0)
        gathered = raw[positions[:, None] + np.arange(size)].reshape(-1, size)
        values = gathered.copy().view(dtype).reshape(-1).astype(dtype[1:])
        return _fixed_array(values, type_oid, mask)
    if type_oid == TypeOid.UUID:
        return _uuid_array(raw, starts, lengths, valid)
    if type_oid == TypeOid.JSONB:
        # jsonb_recv: a version byte (1), then the text.
        versions = raw[np.where(valid & (lengths > 0), starts, 0)]
        bad = np.flatnonzero(valid & ((lengths < 1) | (versions != 1)))
        if bad.size:
            raise _at(BadCopyFileFormat("unsupported jsonb version number"), int(bad[0]) + 1)
        starts, lengths = np.where(valid, starts + 1, starts), np.where(valid, lengths - 1, -1)
        type_oid = TypeOid.TEXT
    if type_oid in (TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.BYTEA, TypeOid.JSON):
        sizes = np.where(valid, lengths, 0)
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        total = int(offsets[-1])
        targets = np.repeat(starts - offsets[:-1], sizes) + np.arange(total)
        data = raw[targets] if total else np.empty(0, np.uint8)
        binary = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(),
            len(sizes),
            [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())],
        )
        if mask is not None:
            binary = pc.if_else(pa.array(valid), binary, pa.scalar(None, pa.large_binary()))
        if type_oid == TypeOid.BYTEA:
            return binary
        try:
            return binary.cast(pa.large_string())
        except pa.ArrowInvalid as exc:
            raise BadCopyFileFormat('invalid byte sequence for encoding "UTF8"') from exc
    if type_oid == TypeOid.NUMERIC:
        return pa.array(
            [
                _numeric(bytes(buffer[s : s + n])) if n >= 0 else None
                for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)
            ],
            pa.string(),
        )
    raise FeatureNotSupported(f"binary COPY input of type OID {type_oid} is not supported")


def _uuid_array(
    raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray, valid: np.ndarray
) -> pa.Array:
    """uuid_recv's 16 bytes per field, as the canonical text a uuid is stored as."""
    bad = np.flatnonzero(valid & (lengths != 16))
    if bad.size:
        raise _at(InvalidBinaryRepresentation("incorrect binary data format"), int(bad[0]) + 1)
    positions = np.where(valid, starts, 0)
    gathered = raw[positions[:, None] + np.arange(16)]
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    hexed = np.empty((len(starts), 32), dtype=np.uint8)
    hexed[:, 0::2] = digits[gathered >> 4]
    hexed[:, 1::2] = digits[gathered & 0x0F]
    dash = np.full((len(starts), 1), ord("-"), dtype=np.uint8)
    text = np.hstack(
        [hexed[:, :8], dash, hexed[:, 8:12], dash, hexed[:, 12:16], dash, hexed[:, 16:20], dash,
         hexed[:, 20:]]
    )  # fmt: skip
    offsets = np.arange(len(starts) + 1, dtype=np.int32) * 36
    validity = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.StringArray.from_buffers(
        len(starts), pa.py_buffer(offsets.tobytes()), pa.py_buffer(text.tobytes()), validity
    )


def _fixed_array(values: np.ndarray, type_oid: int, mask: np.ndarray | None) -> pa.Array:
    if type_oid == TypeOid.BOOL:
        return pa.array(values != 0, pa.bool_(), mask=mask)
    if type_oid == TypeOid.DATE:
        return pa.array(values.astype(np.int32) + _POSTGRES_EPOCH_DAYS, pa.int32(), mask=mask).cast(
            pa.date32()
        )
    if type_oid in (TypeOid.TIMESTAMP, TypeOid.TIMESTAMPTZ):
        zone = "UTC" if type_oid == TypeOid.TIMESTAMPTZ else None
        return pa.array(values + _POSTGRES_EPOCH_US, pa.int64(), mask=mask).cast(
            pa.timestamp("us", tz=zone)
        )
    return pa.array(values, mask=mask)


def _numeric(raw: bytes) -> str:
    """A numeric's binary send format as text (ndigits, weight, sign, dscale, base-10000 digits)."""
    if len(raw) < 8:
        raise InvalidBinaryRepresentation("insufficient data left in message")
    ndigits, weight, sign, dscale = struct.unpack_from("!hhHh", raw)
    if sign == 0xC000:
        return "NaN"
    digits = struct.unpack_from(f"!{ndigits}h", raw, 8)
    value = Decimal(0)
    for index, digit in enumerate(digits):
        value += Decimal(digit).scaleb(4 * (weight - index))
    if sign == 0x4000:
        value = -value
    return f"{value:.{max(dscale, 0)}f}"
