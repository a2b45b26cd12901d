"""uuid values: PostgreSQL's input forms, and the 16-byte Arrow form DuckDB reads as UUID.

A uuid is stored as its canonical text (``storage.data_type``); a scan hands
DuckDB Arrow's ``arrow.uuid`` extension type (16 bytes, big-endian, as
PostgreSQL's uuid_send writes them), decoded from that text by a numpy
lookup over the whole column, so DuckDB compares and orders uuids as
PostgreSQL does (by byte).
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import InvalidTextRepresentation

# uuid_in: 32 hex digits, optionally in braces, a hyphen allowed after any group of four.
_INPUT = re.compile(r"\{?[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}\}?")
_HEX_POSITIONS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])
_NIBBLE = np.full(256, 0, dtype=np.uint8)
for _digit in b"0123456789abcdef":
    _NIBBLE[_digit] = int(chr(_digit), 16)
_ZERO_TEXT = "00000000-0000-0000-0000-000000000000"


def canonical_uuid(text: str) -> str:
    """uuid_in's reading of ``text``, in uuid_out's form; 22P02 as PostgreSQL words it.

    Example:
        >>> canonical_uuid("{A0EEBC999C0B4EF8BB6D6BB9BD380A11}")
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
    """
    if not _INPUT.fullmatch(text) or text.startswith("{") != text.endswith("}"):
        raise InvalidTextRepresentation(f'invalid input syntax for type uuid: "{text}"')
    digits = text.strip("{}").replace("-", "").lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def uuid_bytes(texts: pa.Array) -> pa.FixedSizeBinaryArray:
    """Canonical uuid texts as their 16 bytes each (nulls stay null), without a per-row loop."""
    count = len(texts)
    filled = pc.fill_null(texts, _ZERO_TEXT) if texts.null_count else texts
    if not isinstance(filled, pa.StringArray):
        filled = filled.cast(pa.string())
    offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32)[
        filled.offset : filled.offset + count + 1
    ]
    data = np.frombuffer(filled.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    chars = data.reshape(count, 36)[:, _HEX_POSITIONS]
    nibbles = _NIBBLE[chars]
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    validity = None
    if texts.null_count:
        validity = pc.is_valid(texts).buffers()[1]
    return pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(16), count, [validity, pa.py_buffer(packed.tobytes())]
    )


def engine_uuid(texts: pa.Array) -> pa.ExtensionArray:
    """Stored uuid texts as the ``arrow.uuid`` array DuckDB reads as its UUID type."""
    return pa.ExtensionArray.from_storage(pa.uuid(), uuid_bytes(texts))
