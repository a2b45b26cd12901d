"""Arrays in the binary result format, as PostgreSQL's array_send writes them.

An array column reaches the server as PostgreSQL's array text (``{1,2,NULL}``,
``sql.common.datatypes.array_literal``), which is what the text format sends.  A client
that asks for binary (pgjdbc does for int/float/text arrays once a statement is prepared)
gets ndim, a has-NULL flag, the element OID, each dimension's length and lower bound 1,
then each element as a length and the element type's own binary value (``pgtypes``).
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pyarrow as pa

from server.codec import ColumnValues
from sql.common.array_input import flatten, parse_array, shape
from storage.type_oids import ARRAY_OID, TypeOid


def _bool(text: str) -> bool:
    return text in ("t", "true")


def _timestamp(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text)
    return value if value.tzinfo is None else value.astimezone(dt.UTC)


_ELEMENTS: dict[int, tuple[pa.DataType, Callable[[str], object]]] = {
    TypeOid.BOOL: (pa.bool_(), _bool),
    TypeOid.INT2: (pa.int16(), int),
    TypeOid.INT4: (pa.int32(), int),
    TypeOid.INT8: (pa.int64(), int),
    TypeOid.OID: (pa.uint32(), int),
    TypeOid.FLOAT4: (pa.float32(), float),
    TypeOid.FLOAT8: (pa.float64(), float),
    TypeOid.NUMERIC: (pa.decimal128(38, 10), Decimal),
    TypeOid.TEXT: (pa.string(), str),
    TypeOid.VARCHAR: (pa.string(), str),
    TypeOid.NAME: (pa.string(), str),
    TypeOid.DATE: (pa.date32(), dt.date.fromisoformat),
    TypeOid.TIMESTAMP: (pa.timestamp("us"), _timestamp),
    TypeOid.TIMESTAMPTZ: (pa.timestamp("us", tz="UTC"), _timestamp),
}


def _scale(text: str) -> int:
    return len(text.partition(".")[2])


def binary_encoder(
    element_oid: int, element_encoder: Callable[[pa.Array], ColumnValues]
) -> Callable[[pa.Array], ColumnValues]:
    """array_send of an array-text column whose elements ``element_encoder`` sends."""
    arrow_type, convert = _ELEMENTS[element_oid]

    def encode(array: pa.Array) -> ColumnValues:
        lengths = np.full(len(array), -1, dtype=np.int32)
        chunks: list[bytes] = []
        for row, text in enumerate(array.to_pylist()):
            if text is None:
                continue
            parsed = parse_array(text)
            elements = flatten(parsed)
            dims = shape(parsed) if elements else []
            header = struct.pack(
                f">iii{2 * len(dims)}i",
                len(dims),
                int(None in elements),
                element_oid,
                *[v for d in dims for v in (d, 1)],
            )
            typ = arrow_type
            if element_oid == TypeOid.NUMERIC:  # each value's own scale, as numeric_send's
                typ = pa.decimal128(38, max((_scale(e) for e in elements if e), default=0))
            values = element_encoder(
                pa.array([None if e is None else convert(e) for e in elements], typ)
            )
            body = bytearray(header)
            offset = 0
            raw = values.data.tobytes()
            for length in values.lengths.tolist():
                if element_oid == TypeOid.OID and length == 8:  # oid is 4 bytes, unsigned
                    body += struct.pack(">i", 4) + raw[offset + 4 : offset + 8]
                    offset += 8
                    continue
                body += struct.pack(">i", length)
                if length > 0:
                    body += raw[offset : offset + length]
                    offset += length
            chunks.append(bytes(body))
            lengths[row] = len(body)
        return ColumnValues(lengths, np.frombuffer(b"".join(chunks), dtype=np.uint8))

    return encode


def array_encoders(
    element_encoders: dict[int, Callable[[pa.Array], ColumnValues]],
) -> dict[int, Callable[[pa.Array], ColumnValues]]:
    """A binary encoder for each array type whose element type has one."""
    out = {}
    for element_oid in _ELEMENTS:
        send = element_encoders.get(TypeOid.INT8 if element_oid == TypeOid.OID else element_oid)
        if element_oid in (TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.NAME):
            send = _text_send
        if send is not None and TypeOid(element_oid) in ARRAY_OID:
            out[ARRAY_OID[TypeOid(element_oid)]] = binary_encoder(element_oid, send)
    return out


def _text_send(array: pa.Array) -> ColumnValues:
    encoded = [None if v is None else v.encode() for v in array.to_pylist()]
    lengths = np.array([-1 if v is None else len(v) for v in encoded], dtype=np.int32)
    data = np.frombuffer(b"".join(v for v in encoded if v is not None), dtype=np.uint8)
    return ColumnValues(lengths, data)
