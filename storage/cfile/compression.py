"""Per-column block compression codecs: none, LZ4, Snappy, zlib and zstd.

Kudu compresses each cfile block with the column's codec after encoding it;
DEFAULT_COMPRESSION means none, as Kudu's ``cfile_default_compression_codec``
does (bitshuffle already carries LZ4 inside the encoding).
"""

from __future__ import annotations

import enum
import zlib

import cramjam
import lz4.block

from storage.errors import DataCorrupted


class CompressionType(enum.Enum):
    """The codecs a column may name (Impala's COMPRESSION words)."""

    DEFAULT_COMPRESSION = "DEFAULT_COMPRESSION"
    NO_COMPRESSION = "NO_COMPRESSION"
    LZ4 = "LZ4"
    SNAPPY = "SNAPPY"
    ZLIB = "ZLIB"
    ZSTD = "ZSTD"

    def resolve(self) -> CompressionType:
        return (
            CompressionType.NO_COMPRESSION if self is CompressionType.DEFAULT_COMPRESSION else self
        )


def compress(data: bytes, codec: CompressionType) -> bytes:
    codec = codec.resolve()
    if codec is CompressionType.NO_COMPRESSION or not data:
        return bytes(data)
    if codec is CompressionType.LZ4:
        compressed: bytes = lz4.block.compress(data, store_size=True)
        return compressed
    if codec is CompressionType.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if codec is CompressionType.ZLIB:
        return zlib.compress(data, 6)
    return bytes(cramjam.zstd.compress(data))


def decompress(data: bytes | memoryview, codec: CompressionType) -> bytes:
    codec = codec.resolve()
    if codec is CompressionType.NO_COMPRESSION or not data:
        return bytes(data)
    try:
        if codec is CompressionType.LZ4:
            decompressed: bytes = lz4.block.decompress(data)
            return decompressed
        if codec is CompressionType.SNAPPY:
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec is CompressionType.ZLIB:
            return zlib.decompress(data)
        return bytes(cramjam.zstd.decompress(data))
    except Exception as exc:  # each codec raises its own error type on bad input
        raise DataCorrupted(f"cannot decompress {codec.value} block: {exc}") from exc
