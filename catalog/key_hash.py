"""CRC32C of many encoded keys at once: the hash a hash partition level buckets rows by.

The ``crc32c`` package takes one buffer a call, so routing a million-row COPY
cost a million Python calls.  The same table-driven CRC (Castagnoli,
reflected, as ``crc32c.crc32c`` computes it) runs here as numpy over the Arrow
array's bytes: one pass per byte position of the longest key.
"""

from __future__ import annotations

import crc32c
import numpy as np
import pyarrow as pa

_POLY = 0x82F63B78
_MAX_VECTOR_BYTES = 64
"""Keys longer than this are hashed one call each: a pass per byte would cost more."""


def _table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1)
    return table.astype(np.uint32)


_TABLE = _table()


def crc32c_many(keys: pa.Array) -> np.ndarray:
    """``crc32c.crc32c`` of every value of a binary array (no nulls), as uint64."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if keys.type != pa.binary():
        keys = keys.cast(pa.binary())
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32)[keys.offset : keys.offset + n + 1]
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8)
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets)
    longest = int(lengths.max())
    if longest > _MAX_VECTOR_BYTES:
        return np.fromiter((crc32c.crc32c(k) for k in keys.to_pylist()), dtype=np.uint64, count=n)
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    if int(lengths.min()) == longest and longest:
        # Fixed width (an integer key): a matrix, no masks.
        matrix = data[offsets[0] : offsets[0] + n * longest].reshape(n, longest)
        for j in range(longest):
            crc = _TABLE[(crc ^ matrix[:, j]) & 0xFF] ^ (crc >> 8)
    else:
        for j in range(longest):
            active = np.flatnonzero(lengths > j)
            part = crc[active]
            crc[active] = _TABLE[(part ^ data[starts[active] + j]) & 0xFF] ^ (part >> 8)
    return (crc ^ np.uint32(0xFFFFFFFF)).astype(np.uint64)
