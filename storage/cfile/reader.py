"""Reading a cfile: the footer's ordinal index, and blocks decoded lazily, checked by CRC32C.

The file is memory-mapped; a block is read, checked and decoded only when a
scan asks for it, so a DiskRowSet's memory is its footers plus the blocks in
use.  A decoded ``Block`` keeps its values encoded where that helps
predicates (dictionary codewords, run-length runs) and builds Arrow arrays
only for the rows a scan selects.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import crc32c
import numpy as np
import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.compression import CompressionType, decompress
from storage.cfile.encoding import (
    EncodingType,
    FixedValues,
    decode_codes,
    decode_fixed,
    decode_var,
    is_fixed_width,
    physical_dtype,
    var_arrow_type,
)
from storage.cfile.footer import open_with_footer
from storage.cfile.writer import BLOCK_HEADER, MAGIC
from storage.data_type import DataType, TypeKind
from storage.errors import DataCorrupted
from storage.predicate import ColumnPredicate, PredicateKind


@dataclass(frozen=True, slots=True)
class BlockMeta:
    """One ordinal-index entry: where a block is and what its values span."""

    offset: int
    size: int
    first_rowid: int
    rows: int
    null_count: int
    min: object
    max: object


class CFileReader:
    """One open cfile; thread-safe for reads (blocks are decoded per call)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file, footer = open_with_footer(self.path, MAGIC, "cfile")
        self.data_type = DataType.from_json(footer["type"])
        self.encoding = EncodingType(footer["encoding"])
        self.compression = CompressionType(footer["compression"])
        self.rows: int = footer["rows"]
        self.blocks = [BlockMeta(*entry) for entry in footer["blocks"]]
        self._first_rowids = np.array([b.first_rowid for b in self.blocks], dtype=np.int64)
        self._dict_entry = footer["dictionary"]
        self._dictionary: pa.Array | None = None
        self._cache_owner = BLOCK_CACHE.new_owner()
        self._arrow_owner = ARROW_BLOCKS.new_owner()

    @property
    def size_bytes(self) -> int:
        size: int = self._file.size()
        return size

    def close(self) -> None:
        self._file.close()

    def block_index(self, rowid: int) -> int:
        """The index of the block holding ``rowid``."""
        return int(np.searchsorted(self._first_rowids, rowid, side="right")) - 1

    @property
    def dictionary(self) -> pa.Array:
        """The dictionary of a DICT_ENCODING file, as the column's Arrow type."""
        if self._dictionary is None:
            offset, size, _entries = self._dict_entry
            _rows, _nulls, payload, _valid = self._read_frame(offset, size)
            values = decode_var(
                payload, EncodingType.PLAIN_ENCODING, var_arrow_type(self.data_type)
            )
            self._dictionary = values.cast(self.data_type.arrow_type)
        return self._dictionary

    def read_block(self, idx: int) -> Block:
        """Block ``idx``, decoded, from the process's block cache when it is there."""
        block = BLOCK_CACHE.get(self._cache_owner, idx)
        if block is not None:
            return block
        return BLOCK_CACHE.get_or_load(
            self._cache_owner, idx, lambda: self._decode_block(idx), Block.nbytes
        )

    def read_block_arrow(self, idx: int) -> pa.Array:
        """Block ``idx`` whole as the column's Arrow type, kept in ``ARROW_BLOCKS``: a point
        read's value is a zero-copy slice of it, not a decode of the row."""
        array = ARROW_BLOCKS.get(self._arrow_owner, idx)
        if array is not None:
            return array
        return ARROW_BLOCKS.get_or_load(
            self._arrow_owner, idx, lambda: self.read_block(idx).to_arrow(), _arrow_nbytes
        )

    def _decode_block(self, idx: int) -> Block:
        meta = self.blocks[idx]
        rows, null_count, payload, validity = self._read_frame(meta.offset, meta.size)
        if rows != meta.rows or null_count != meta.null_count:
            raise DataCorrupted(f"cfile {self.path} block {idx} disagrees with its index entry")
        non_null = rows - null_count
        data_type = self.data_type
        if self.encoding is EncodingType.DICT_ENCODING:
            return Block(self, meta, validity, codes=decode_codes(payload, non_null))
        if is_fixed_width(data_type):
            fixed = decode_fixed(payload, self.encoding, physical_dtype(data_type), non_null)
            return Block(self, meta, validity, fixed=fixed)
        values = decode_var(payload, self.encoding, var_arrow_type(data_type))
        if len(values) != non_null:
            raise DataCorrupted(f"cfile {self.path} block {idx} holds the wrong number of values")
        return Block(self, meta, validity, var=values.cast(data_type.arrow_type))

    def read_all(self) -> pa.Array:
        """Every value of the column (tests and small files)."""
        arrays = [self.read_block(i).to_arrow() for i in range(len(self.blocks))]
        return pa.concat_arrays(arrays) if arrays else pa.array([], self.data_type.arrow_type)

    def _read_frame(
        self, offset: int, size: int
    ) -> tuple[int, int, bytes | memoryview, np.ndarray | None]:
        """A block's rows, null count, payload and validity.  The block is copied out of the
        map once; the payload is a view of that copy (three copies of a 256 KiB block were a
        tenth of a cold point read's decode)."""
        raw = memoryview(bytes(self._file.read_at(size, offset)))
        if len(raw) != size or size < BLOCK_HEADER.size + 4:
            raise DataCorrupted(f"cfile {self.path} is truncated at {offset}")
        body = raw[:-4]
        (crc,) = struct.unpack_from("<I", raw, size - 4)
        if crc32c.crc32c(body) != crc:
            raise DataCorrupted(f"cfile {self.path}: block at {offset} fails its CRC32C")
        rows, null_count, has_bitmap = BLOCK_HEADER.unpack_from(body, 0)
        pos = BLOCK_HEADER.size
        validity = None
        if has_bitmap:
            nbytes = (rows + 7) // 8
            bits = np.frombuffer(body, np.uint8, nbytes, pos)
            validity = np.unpackbits(bits, count=rows, bitorder="little").astype(bool)
            pos += nbytes
        payload = body[pos:]
        if self.compression.resolve() is CompressionType.NO_COMPRESSION:
            return rows, null_count, payload, validity
        return rows, null_count, decompress(payload, self.compression), validity


class Block:
    """One decoded block: its validity and its non-null values in their encoded-friendly form."""

    def __init__(
        self,
        reader: CFileReader,
        meta: BlockMeta,
        validity: np.ndarray | None,
        *,
        fixed: FixedValues | None = None,
        var: pa.Array | None = None,
        codes: np.ndarray | None = None,
    ) -> None:
        self.reader = reader
        self.meta = meta
        self.validity = validity
        self.fixed = fixed
        self.var = var
        self.codes = codes

    @property
    def rows(self) -> int:
        return self.meta.rows

    @property
    def is_dictionary(self) -> bool:
        return self.codes is not None

    def nbytes(self) -> int:
        """Roughly the memory the decoded block holds (for the block cache's budget)."""
        size = 256 + (self.validity.nbytes if self.validity is not None else 0)
        if self.fixed is not None:
            size += sum(
                a.nbytes
                for a in (self.fixed.values, self.fixed.run_values, self.fixed.run_lengths)
                if a is not None
            )
        if self.var is not None:
            size += self.var.nbytes
        if self.codes is not None:
            size += self.codes.nbytes
        return size

    def evaluate(self, predicate: ColumnPredicate) -> tuple[np.ndarray, bool]:
        """A row mask where ``predicate`` holds, and whether it ran on encoded data
        (dictionary codewords or run-length runs) rather than decoded values."""
        valid = self.validity
        kind = predicate.kind
        if kind is PredicateKind.IS_NULL:
            return (np.zeros(self.rows, bool) if valid is None else ~valid), True
        if kind is PredicateKind.IS_NOT_NULL:
            return (np.ones(self.rows, bool) if valid is None else valid.copy()), True
        on_encoded = False
        if self.codes is not None:
            bitset = _mask(predicate.evaluate(self.reader.dictionary))
            matches = bitset[self.codes]
            on_encoded = True
        elif self.fixed is not None and self.fixed.values is None:
            run_values, run_lengths = self.fixed.run_values, self.fixed.run_lengths
            assert run_values is not None and run_lengths is not None, "RLE values keep runs"
            run_mask = _mask(predicate.evaluate(self._fixed_arrow(run_values)))
            matches = np.repeat(run_mask, run_lengths)
            on_encoded = True
        elif self.fixed is not None:
            matches = _mask(predicate.evaluate(self._fixed_arrow(self.fixed.materialise())))
        else:
            matches = _mask(predicate.evaluate(self.var))
        if valid is None:
            return matches, on_encoded
        full = np.zeros(self.rows, bool)
        full[valid] = matches
        return full, on_encoded

    def to_arrow(self, selection: np.ndarray | None = None) -> pa.Array:
        """The block's values (or only the rows at ``selection``) as the column's Arrow type."""
        valid = self.validity
        if selection is None and valid is None and self.var is not None:
            return self.var
        if selection is None:
            selection = np.arange(self.rows)
        if valid is None:
            positions, null_mask = selection, None
        else:
            positions = (np.cumsum(valid) - 1)[selection]
            null_mask = ~valid[selection]
            positions = np.where(null_mask, 0, positions)
        if self.fixed is not None:
            values = self.fixed.materialise()
            picked = values[positions] if len(values) else np.zeros(len(positions), values.dtype)
            return self._fixed_arrow(picked, null_mask)
        indices = pa.array(positions, type=pa.int64(), mask=null_mask)
        if self.codes is not None:
            codes = pa.array(self.codes, pa.uint32()).take(indices)
            return self.reader.dictionary.take(codes)
        assert self.var is not None, "a block holds fixed, dictionary or variable-width values"
        return self.var.take(indices)

    def _fixed_arrow(self, values: np.ndarray, null_mask: np.ndarray | None = None) -> pa.Array:
        data_type = self.reader.data_type
        arrow_type = data_type.arrow_type
        kind = data_type.kind
        if kind is TypeKind.BOOL:
            return pa.array(values.astype(bool), mask=null_mask)
        if kind is TypeKind.DECIMAL:
            validity = None
            if null_mask is not None and null_mask.any():
                validity = pa.py_buffer(np.packbits(~null_mask, bitorder="little"))
            data = pa.py_buffer(np.ascontiguousarray(values).tobytes())
            return pa.Array.from_buffers(arrow_type, len(values), [validity, data])
        array = pa.array(values, mask=null_mask)
        return array if array.type == arrow_type else array.view(arrow_type)


def _mask(result: pa.Array) -> np.ndarray:
    mask: np.ndarray = result.to_numpy(zero_copy_only=False).astype(bool, copy=False)
    return mask


def _arrow_nbytes(array: pa.Array) -> int:
    nbytes: int = array.nbytes
    return 64 + nbytes


BLOCK_CACHE: BlockCache[Block] = BlockCache()
"""The process's cache of decoded blocks (128 MiB)."""
ARROW_BLOCKS: BlockCache[pa.Array] = BlockCache(64 << 20)
"""Blocks point reads touched, whole as Arrow arrays (64 MiB): beside ``BLOCK_CACHE``, whose
blocks stay in their encoded-friendly form for scans and predicates."""
