"""bytea values in text and CSV COPY input: PostgreSQL's hex (``\\x0aff``) and escape formats.

COPY's text is parsed into string columns and cast to the table's types by
the INSERT plan, but DuckDB's VARCHAR -> BLOB cast reads ``\\x61`` as one
escaped byte and the rest as characters, so ``\\x6162`` would be stored as
``a62``.  A bytea column is decoded here first: hex values all at once with a
numpy lookup table, the rare escape-format values with backslashes one by one.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql.planner.transpile import parse_bytea

_HEX = np.full(256, -1, dtype=np.int16)
for _digit in b"0123456789":
    _HEX[_digit] = _digit - ord("0")
for _digit in b"abcdef":
    _HEX[_digit] = _HEX[_digit - 32] = _digit - ord("a") + 10


def decode(column: pa.Array) -> pa.Array:
    """A string column of bytea text as binary values; 22P02 for a value PostgreSQL refuses."""
    column = column.cast(pa.large_string())
    is_hex = pc.fill_null(pc.starts_with(column, "\\x"), False)
    has_backslash = pc.fill_null(pc.match_substring(column, "\\"), False)
    out = column.cast(pa.large_binary())
    if pc.any(is_hex).as_py():
        hex_values = pc.utf8_slice_codeunits(column.filter(is_hex), 2)
        decoded = _decode_hex(hex_values)
        out = pc.replace_with_mask(out, is_hex, decoded)
    escaped = pc.and_(has_backslash, pc.invert(is_hex))
    if pc.any(escaped).as_py():
        values = [parse_bytea(v) for v in column.filter(escaped).to_pylist()]
        out = pc.replace_with_mask(out, escaped, pa.array(values, pa.large_binary()))
    return out


def _decode_hex(values: pa.Array) -> pa.Array:
    """Hex digits to bytes, every value at once; a value with spaces or bad digits one by one."""
    values = values.cast(pa.large_string())
    if values.offset:
        values = pa.concat_arrays([values])
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[
        values.offset : values.offset + len(values) + 1
    ]
    lengths = np.diff(offsets)
    data = values.buffers()[2]
    raw = (
        np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]]
        if data is not None
        else np.empty(0, np.uint8)
    )
    digits = _HEX[raw]
    if (lengths % 2).any() or (digits < 0).any():
        return pa.array(
            [None if v is None else parse_bytea("\\x" + v) for v in values.to_pylist()],
            pa.large_binary(),
        )
    pairs = digits.reshape(-1, 2)
    decoded = (pairs[:, 0] * 16 + pairs[:, 1]).astype(np.uint8)
    new_offsets = (offsets - offsets[0]) // 2
    validity = values.buffers()[0] if values.null_count else None
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(),
        len(values),
        [validity, pa.py_buffer(new_offsets.tobytes()), pa.py_buffer(decoded.tobytes())],
        values.null_count,
    )
