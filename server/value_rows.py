"""DataRows framed straight from a few rows' Python values (a read by key's ``ShortRows``).

A point select or an index lookup answers with a row or two.  Encoding them column by
column through Arrow kernels (``pgtypes.encode_rows``) costs more than the rows: here
each column's encoder is chosen once per result shape (type OIDs, formats, bytea_output)
and the rows are framed value by value.  Only types whose row-wise spelling is exactly
``pgtypes``' are here (integers, bool, text and varchar, bytea, and floats in binary);
for any other column the rows go through ``ShortRows.batch`` and ``pgtypes`` as before.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from typing import Any

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
}
"""Text output (``*out``) of the types whose values ``ShortRows.values`` gives as
Python's int, bool, str and bytes.  Floats are not here: float4out's shortest digits
are not Python's."""

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
}
"""Binary output (``*send``) of the same, and of floats (IEEE 754, big-endian)."""


def encode(
    rows: ShortRows,
    type_oids: tuple[int, ...],
    formats: tuple[int, ...],
    bytea_output: str,
    type_code: bytes = b"D",
) -> bytes | None:
    """``rows`` as framed DataRow messages, or None when a column has no encoder here or
    its values are not plain (``ShortRows.values``): ``pgtypes.encode_rows`` spells them."""
    encoders = encoders_for(type_oids, formats, bytea_output)
    if encoders is None:
        return None
    values = rows.values()
    if values is None:
        return None
    return frame(values, encoders, type_code)


@functools.lru_cache(maxsize=512)
def encoders_for(
    type_oids: tuple[int, ...], formats: tuple[int, ...], bytea_output: str
) -> tuple[Encoder, ...] | None:
    """Each column's encoder, worked out once per result shape; None when one has none."""
    out = []
    for oid, format_code in zip(type_oids, formats, strict=True):
        if format_code == 0 and oid == TypeOid.BYTEA and bytea_output != "hex":
            return None
        encoder = (_BINARY if format_code == 1 else _TEXT).get(oid)
        if encoder is None:
            return None
        out.append(encoder)
    return tuple(out)


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
