"""Writing a cfile: a column's values cut into blocks, each encoded, compressed and checksummed.

File layout::

    "NYCFILE1"
    block 0 .. block n-1
    [dictionary block]                 only for DICT_ENCODING
    footer                             JSON, see below
    u32 footer length, u32 footer CRC32C, "NYCFILE1"

A block is ``u32 rows, u32 null count, u8 has-bitmap``, then the null
bitmap (one bit per row, set = non-null, LSB first) if the block has NULLs,
then the compressed payload of its non-null values (``encoding.py``), then a
u32 CRC32C of everything before it in the block.  The footer names the
type, the encoding actually used (DICT falls back to PLAIN for this file when
its dictionary would be too large, decided here, at flush), the compression,
and the ordinal index: per block its offset, size, first rowid, rows, null
count, min and max.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import crc32c
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.cfile.compression import CompressionType, compress
from storage.cfile.encoding import (
    EncodingType,
    encode_codes,
    encode_fixed,
    encode_var,
    is_fixed_width,
    resolve_encoding,
    to_physical,
    var_buffers,
)
from storage.cfile.footer import footer_tail
from storage.data_type import DataType, TypeKind
from storage.fs import write_file

MAGIC = b"NYCFILE1"
BLOCK_HEADER = struct.Struct("<IIB")
TARGET_BLOCK_BYTES = 256 * 1024
MAX_BLOCK_ROWS = 65_536
MAX_DICT_BYTES = 4 * 1024 * 1024
"""A dictionary past this size (or with more entries than half the values) falls back to PLAIN."""


def write_cfile(
    path: Path,
    array: pa.Array | pa.ChunkedArray,
    data_type: DataType,
    encoding: EncodingType = EncodingType.AUTO_ENCODING,
    compression: CompressionType = CompressionType.DEFAULT_COMPRESSION,
    *,
    fsync: bool = True,
    block_rows: int | None = None,
) -> int:
    """Write ``array`` (rowid order) as a cfile at ``path``; return the bytes written."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], data_type.arrow_type)
    encoding = resolve_encoding(data_type, encoding)
    n = len(array)
    dictionary = codes = None
    if encoding is EncodingType.DICT_ENCODING:
        encoded = pc.dictionary_encode(array.drop_null() if array.null_count else array)
        dictionary = encoded.dictionary
        dict_bytes = len(var_buffers(dictionary)[1])
        if dict_bytes > MAX_DICT_BYTES or len(dictionary) > max(16, (n - array.null_count) // 2):
            encoding = EncodingType.PLAIN_ENCODING
            dictionary = None
        else:
            codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.uint32)
    block_size = block_rows or rows_per_block(array, data_type)
    out = bytearray(MAGIC)
    blocks = []
    code_pos = 0
    for first in range(0, n, block_size) if n else []:
        chunk = array.slice(first, min(block_size, n - first))
        non_null = len(chunk) - chunk.null_count
        if codes is not None:
            payload = encode_codes(codes[code_pos : code_pos + non_null])
            code_pos += non_null
            values = to_physical(chunk, data_type)
        else:
            values = to_physical(chunk, data_type)
            if is_fixed_width(data_type):
                payload = encode_fixed(values, encoding)
            else:
                payload = encode_var(values, encoding)
        lo, hi = _min_max(chunk, values, data_type)
        offset = len(out)
        out += _frame_block(chunk, payload, compression)
        blocks.append([offset, len(out) - offset, first, len(chunk), chunk.null_count, lo, hi])
    footer: dict[str, object] = {
        "type": data_type.to_json(),
        "encoding": encoding.value,
        "compression": compression.resolve().value,
        "rows": n,
        "blocks": blocks,
        "dictionary": None,
    }
    if dictionary is not None:
        offset = len(out)
        out += _frame_block(
            dictionary, encode_var(dictionary, EncodingType.PLAIN_ENCODING), compression
        )
        footer["dictionary"] = [offset, len(out) - offset, len(dictionary)]
    doc = json.dumps(footer, separators=(",", ":")).encode()
    out += footer_tail(doc, MAGIC)
    write_file(Path(path), out, fsync=fsync)
    return len(out)


def rows_per_block(array: pa.Array, data_type: DataType) -> int:
    if is_fixed_width(data_type):
        width = 16 if data_type.kind is TypeKind.DECIMAL else max(1, data_type.numpy_dtype.itemsize)
    else:
        total = int(pc.sum(pc.binary_length(array)).as_py() or 0) if len(array) else 0
        width = max(1, total // max(1, len(array)))
    return max(1, min(MAX_BLOCK_ROWS, TARGET_BLOCK_BYTES // width))


def _frame_block(chunk: pa.Array, payload: bytes, compression: CompressionType) -> bytes:
    n = len(chunk)
    has_bitmap = chunk.null_count > 0
    parts = [BLOCK_HEADER.pack(n, chunk.null_count, int(has_bitmap))]
    if has_bitmap:
        valid = chunk.is_valid().to_numpy(zero_copy_only=False)
        parts.append(np.packbits(valid, bitorder="little").tobytes())
    parts.append(compress(payload, compression))
    body = b"".join(parts)
    return body + struct.pack("<I", crc32c.crc32c(body))


def _min_max(chunk: pa.Array, values: object, data_type: DataType) -> tuple[object, object]:
    """JSON-able min and max of the block's non-null values (None when unknown or empty)."""
    if len(chunk) == chunk.null_count:
        return None, None
    kind = data_type.kind
    if kind is TypeKind.DECIMAL or not is_fixed_width(data_type):
        result = pc.min_max(chunk)
        lo, hi = result["min"].as_py(), result["max"].as_py()
        if isinstance(lo, bytes):
            return lo.hex(), hi.hex()
        return (str(lo), str(hi)) if kind is TypeKind.DECIMAL else (lo, hi)
    assert isinstance(values, np.ndarray)
    if data_type.is_floating and bool(np.isnan(values).any()):
        return None, None
    return values.min().item(), values.max().item()
