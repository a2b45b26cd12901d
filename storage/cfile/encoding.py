"""Column encodings: plain, bitshuffle, run length, dictionary and prefix, with Kudu's defaults.

Values reach an encoder without their NULLs (the block's null bitmap says
where those go).  Two physical shapes exist:

- fixed width (bool as u8, integers, floats, dates as i32, timestamps as
  i64 microseconds, decimals as 16-byte little-endian): a numpy array;
- variable width (string, varchar, binary): an Arrow array, kept in Arrow's
  layout (int32 offsets + bytes) so a PLAIN block maps onto an Arrow array
  without touching each value.

Payload layouts (before the column's compression is applied):

PLAIN        fixed: the values' bytes; variable: u32 count, (count+1) i32 offsets, bytes
BIT_SHUFFLE  bitshuffle+LZ4 of the fixed-width values (bitshuffle's own framing)
RLE          u32 runs, the run values, then u32 run lengths
DICT         bitshuffle+LZ4 of u32 codewords into the cfile's dictionary block
PREFIX       u32 count, u32 shared-prefix lengths, u32 suffix lengths, suffix bytes
"""

from __future__ import annotations

import enum
import os
import struct
from typing import Any

import numpy as np
import pyarrow as pa

from storage.data_type import DataType, TypeKind
from storage.errors import DataCorrupted, FeatureNotSupported

_U32 = struct.Struct("<I")


def _import_bitshuffle_one_thread() -> Any:
    """bitshuffle's vendored OpenMP runtime reads ``OMP_NUM_THREADS`` once, as it loads: one
    thread there.  A point read decodes one block of a few hundred KiB; spread over every
    core, the hand-off cost more than the decode (server CPU of a cold block 300-2,000 µs
    against 80-120 µs on this 2-core machine under load), and sessions decode in parallel
    anyway.  The variable is restored, so nothing else sees it."""
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        import bitshuffle
    finally:
        if saved is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    return bitshuffle


bitshuffle: Any = _import_bitshuffle_one_thread()


class EncodingType(enum.Enum):
    """The encodings a column may name (Impala's ENCODING words)."""

    AUTO_ENCODING = "AUTO_ENCODING"
    PLAIN_ENCODING = "PLAIN_ENCODING"
    BIT_SHUFFLE = "BIT_SHUFFLE"
    RLE = "RLE"
    DICT_ENCODING = "DICT_ENCODING"
    PREFIX_ENCODING = "PREFIX_ENCODING"


E = EncodingType
_INTEGERS = (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64)
# Table 1 of kudu-schema-design.txt: (allowed encodings, default).
_TABLE: dict[TypeKind, tuple[frozenset[EncodingType], EncodingType]] = {
    **{k: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE, E.RLE}), E.BIT_SHUFFLE) for k in _INTEGERS},
    TypeKind.DATE: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE, E.RLE}), E.BIT_SHUFFLE),
    TypeKind.TIMESTAMP: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE, E.RLE}), E.BIT_SHUFFLE),
    TypeKind.FLOAT: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE}), E.BIT_SHUFFLE),
    TypeKind.DOUBLE: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE}), E.BIT_SHUFFLE),
    TypeKind.DECIMAL: (frozenset({E.PLAIN_ENCODING, E.BIT_SHUFFLE}), E.BIT_SHUFFLE),
    TypeKind.BOOL: (frozenset({E.PLAIN_ENCODING, E.RLE}), E.RLE),
    **{
        k: (frozenset({E.PLAIN_ENCODING, E.PREFIX_ENCODING, E.DICT_ENCODING}), E.DICT_ENCODING)
        for k in (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.BINARY)
    },
}

_DECIMAL_DTYPE = np.dtype("V16")


def allowed_encodings(data_type: DataType) -> frozenset[EncodingType]:
    return _TABLE[data_type.kind][0] | {E.AUTO_ENCODING}


def resolve_encoding(data_type: DataType, encoding: EncodingType) -> EncodingType:
    """The concrete encoding for a column: AUTO becomes the type's default; a disallowed one is
    0A000 (checked when a schema is created, so flushes never meet it)."""
    allowed, default = _TABLE[data_type.kind]
    if encoding is E.AUTO_ENCODING:
        return default
    if encoding not in allowed:
        raise FeatureNotSupported(
            f"encoding {encoding.value} is not supported for type {data_type.pg_name()}"
        )
    return encoding


def is_fixed_width(data_type: DataType) -> bool:
    return data_type.kind not in (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.BINARY)


def physical_dtype(data_type: DataType) -> np.dtype:
    if data_type.kind is TypeKind.DECIMAL:
        return _DECIMAL_DTYPE
    if data_type.kind is TypeKind.BOOL:
        return np.dtype(np.uint8)
    return data_type.numpy_dtype


def var_arrow_type(data_type: DataType) -> pa.DataType:
    return pa.binary() if data_type.kind is TypeKind.BINARY else pa.string()


def to_physical(array: pa.Array, data_type: DataType) -> np.ndarray | pa.Array:
    """The non-null values of ``array`` in their physical shape (numpy or Arrow var-width)."""
    if array.null_count:
        array = array.drop_null()
    if not is_fixed_width(data_type):
        return array.cast(var_arrow_type(data_type))
    kind = data_type.kind
    if kind is TypeKind.BOOL:
        return array.to_numpy(zero_copy_only=False).astype(np.uint8)
    if kind is TypeKind.DECIMAL:
        array = array.cast(data_type.arrow_type)
        buf = array.buffers()[1]
        raw = np.frombuffer(buf, dtype=_DECIMAL_DTYPE)
        return raw[array.offset : array.offset + len(array)].copy()
    dtype = physical_dtype(data_type)
    storage = pa.from_numpy_dtype(dtype)
    return array.cast(storage).to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def encode_fixed(values: np.ndarray, encoding: EncodingType) -> bytes:
    if encoding is E.PLAIN_ENCODING:
        return values.tobytes()
    if encoding is E.BIT_SHUFFLE:
        if not len(values):
            return b""
        shuffled: bytes = bitshuffle.compress_lz4(np.ascontiguousarray(values)).tobytes()
        return shuffled
    if encoding is E.RLE:
        starts, lengths = runs_of(values)
        encoded: bytes = _U32.pack(len(starts)) + values[starts].tobytes() + lengths.tobytes()
        return encoded
    raise AssertionError(f"{encoding} is not a fixed-width encoding")


def runs_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start positions and u32 lengths of the runs of equal consecutive values."""
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32)
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    lengths = np.diff(np.append(starts, n)).astype(np.uint32)
    return starts, lengths


class FixedValues:
    """Decoded fixed-width values; for RLE also the runs, so predicates run once per run."""

    __slots__ = ("values", "run_values", "run_lengths")

    def __init__(
        self,
        values: np.ndarray | None,
        run_values: np.ndarray | None = None,
        run_lengths: np.ndarray | None = None,
    ) -> None:
        self.values = values
        self.run_values = run_values
        self.run_lengths = run_lengths

    def materialise(self) -> np.ndarray:
        """Every value; runs are expanded per call, never kept (blocks are shared, cached and
        meant to stay run-length encoded)."""
        if self.values is None:
            assert self.run_values is not None and self.run_lengths is not None
            return np.repeat(self.run_values, self.run_lengths)
        return self.values


def decode_fixed(
    payload: bytes | memoryview, encoding: EncodingType, dtype: np.dtype, count: int
) -> FixedValues:
    try:
        if encoding is E.PLAIN_ENCODING:
            values = np.frombuffer(payload, dtype=dtype, count=count)
            return FixedValues(values)
        if encoding is E.BIT_SHUFFLE:
            if count == 0:
                return FixedValues(np.zeros(0, dtype))
            raw = np.frombuffer(payload, dtype=np.uint8)
            return FixedValues(bitshuffle.decompress_lz4(raw, (count,), dtype))
        if encoding is E.RLE:
            (runs,) = _U32.unpack_from(payload, 0)
            pos = _U32.size
            run_values = np.frombuffer(payload, dtype=dtype, count=runs, offset=pos)
            pos += runs * dtype.itemsize
            run_lengths = np.frombuffer(payload, dtype=np.uint32, count=runs, offset=pos)
            if int(run_lengths.sum()) != count:
                raise ValueError("run lengths do not add up to the block's value count")
            return FixedValues(None, run_values, run_lengths)
    except (ValueError, struct.error) as exc:
        raise DataCorrupted(f"bad {encoding.value} block: {exc}") from exc
    raise AssertionError(f"{encoding} is not a fixed-width encoding")


def var_buffers(values: pa.Array) -> tuple[np.ndarray, memoryview]:
    """Zero-based int32 offsets and the bytes of a var-width Arrow array."""
    buffers = values.buffers()
    n = len(values)
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[values.offset : values.offset + n + 1]
    if n == 0:
        return np.zeros(1, np.int32), memoryview(b"")
    start, end = int(offsets[0]), int(offsets[-1])
    data = memoryview(buffers[2])[start:end] if buffers[2] is not None else memoryview(b"")
    return (offsets - start).astype(np.int32), data


def encode_var(values: pa.Array, encoding: EncodingType) -> bytes:
    if encoding is E.PLAIN_ENCODING:
        offsets, data = var_buffers(values)
        return _U32.pack(len(values)) + offsets.tobytes() + bytes(data)
    if encoding is E.PREFIX_ENCODING:
        return _encode_prefix(values)
    raise AssertionError(f"{encoding} is not a variable-width block encoding")


def decode_var(
    payload: bytes | memoryview, encoding: EncodingType, arrow_type: pa.DataType
) -> pa.Array:
    try:
        (count,) = _U32.unpack_from(payload, 0)
        if encoding is E.PLAIN_ENCODING:
            offsets = np.frombuffer(payload, dtype=np.int32, count=count + 1, offset=_U32.size)
            data = payload[_U32.size + offsets.nbytes :]
            if int(offsets[-1]) != len(data) or (count and np.any(np.diff(offsets) < 0)):
                raise ValueError("offsets do not match the data")
            return pa.Array.from_buffers(
                arrow_type, count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )
        if encoding is E.PREFIX_ENCODING:
            return _decode_prefix(payload, count, arrow_type)
    except (ValueError, struct.error, pa.ArrowInvalid) as exc:
        raise DataCorrupted(f"bad {encoding.value} block: {exc}") from exc
    raise AssertionError(f"{encoding} is not a variable-width block encoding")


def encode_codes(codes: np.ndarray) -> bytes:
    return encode_fixed(codes.astype(np.uint32, copy=False), E.BIT_SHUFFLE)


def decode_codes(payload: bytes | memoryview, count: int) -> np.ndarray:
    values = decode_fixed(payload, E.BIT_SHUFFLE, np.dtype(np.uint32), count).materialise()
    return values


def _encode_prefix(values: pa.Array) -> bytes:
    # Per-value Python: front coding is sequential by nature (each value against the previous);
    # it is chosen per column by DDL, never by default.
    items = [v if isinstance(v, bytes) else v.encode() for v in values.to_pylist()]
    shared = np.zeros(len(items), np.uint32)
    suffixes = []
    previous = b""
    for idx, item in enumerate(items):
        limit = min(len(previous), len(item))
        common = 0
        while common < limit and previous[common] == item[common]:
            common += 1
        shared[idx] = common
        suffixes.append(item[common:])
        previous = item
    lengths = np.array([len(s) for s in suffixes], np.uint32)
    return _U32.pack(len(items)) + shared.tobytes() + lengths.tobytes() + b"".join(suffixes)


def _decode_prefix(payload: bytes | memoryview, count: int, arrow_type: pa.DataType) -> pa.Array:
    pos = _U32.size
    shared = np.frombuffer(payload, np.uint32, count, pos)
    pos += 4 * count
    lengths = np.frombuffer(payload, np.uint32, count, pos)
    pos += 4 * count
    if pos + int(lengths.sum()) != len(payload):
        raise ValueError("suffix lengths do not match the data")
    items: list[bytes] = []
    previous = b""
    for common, length in zip(shared.tolist(), lengths.tolist()):
        if common > len(previous):
            raise ValueError("shared prefix longer than the previous value")
        previous = previous[:common] + payload[pos : pos + length]
        pos += length
        items.append(previous)
    return pa.array(items, type=pa.binary()).cast(arrow_type)
