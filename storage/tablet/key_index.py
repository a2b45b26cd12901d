"""KeyIndex: a DiskRowSet's primary-key index, the sorted encoded keys in a CFile.

Each block's largest key is in the CFile's block metadata, so a search reads
one block (from the block cache).  A block of keys that all have one width
(integer, date and timestamp keys) is searched with ``numpy.searchsorted``
over its data buffer viewed as fixed-width byte strings, whose order is the
keys' byte order; other blocks with ``bisect`` over the Arrow array, without
decoding the whole block into Python objects.  That searchable form of a block is
itself cached (``KEY_BLOCKS``), so a lookup is a bisect and a ``searchsorted``.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.reader import BlockMeta, CFileReader


class _KeyBlock:
    """One block of keys as a lookup searches it: the Arrow array and, when every key has
    one width, its data as numpy fixed-width strings and as bytes to compare a hit."""

    __slots__ = ("keys", "width", "fixed", "data", "ints", "listed", "nbytes")

    def __init__(self, keys: pa.Array) -> None:
        self.keys = keys
        self.width = _uniform_width(keys)
        self.fixed = _fixed_view(keys, self.width) if self.width else None
        self.data = self.fixed.data.cast("B") if self.fixed is not None else None
        self.ints: np.ndarray | None = None
        """Keys of 1, 2, 4 or 8 bytes as native unsigned integers (big-endian bytes order
        as their values do), searched by a scalar of the same dtype: a Python int would
        be compared as a float64 (searchsorted promotes it), wrong above 2**53."""
        if self.fixed is not None and self.width in _INT_WIDTHS:
            self.ints = self.fixed.view(f">u{self.width}").astype(f"=u{self.width}")
        self.listed: list[bytes] | None = None
        """Keys of differing widths as Python bytes, for ``bisect`` (made once per block)."""
        nbytes: int = keys.nbytes + (self.ints.nbytes if self.ints is not None else 0)
        if self.fixed is None and pa.types.is_binary(keys.type) and not keys.null_count:
            self.listed = keys.to_pylist()
            nbytes += _BYTES_OVERHEAD * len(keys)
        self.nbytes = 128 + nbytes

    def holds_at(self, pos: int, key: bytes) -> bool:
        """Whether the key at ``pos`` (< the block's rows) is ``key``."""
        if self.data is not None:
            return self.data[pos * self.width : (pos + 1) * self.width] == key
        if self.listed is not None:
            return self.listed[pos] == key
        held: bool = self.keys[pos].as_py() == key
        return held


_INT_WIDTHS = (1, 2, 4, 8)
_BYTES_OVERHEAD = 40
"""A Python bytes object's memory beyond its contents."""

KEY_BLOCKS: BlockCache[_KeyBlock] = BlockCache(32 << 20)
"""Key blocks in their searchable form (their buffers are shared with the decoded block)."""


class KeyIndex:
    """Finds rowids by encoded key in a rowset whose rows are stored in key order."""

    def __init__(self, path: Path) -> None:
        self._reader = CFileReader(path)
        # A BINARY cfile's footer holds its block bounds as hex strings.
        self._block_max_keys = [
            bytes.fromhex(b.max)  # type: ignore[arg-type]
            for b in self._reader.blocks
        ]
        self._owner = KEY_BLOCKS.new_owner()
        self.block_starts = np.fromiter(
            (b.first_rowid for b in self._reader.blocks), np.int64, len(self._reader.blocks)
        )
        """Each block's first rowid, for finding the blocks of many rowids at once."""
        self._starts = [b.first_rowid for b in self._reader.blocks]

    @property
    def blocks(self) -> list[BlockMeta]:
        return self._reader.blocks

    def read_all(self) -> pa.Array:
        return self._reader.read_all()

    @property
    def size_bytes(self) -> int:
        return self._reader.size_bytes

    def _block(self, idx: int) -> _KeyBlock:
        return KEY_BLOCKS.get_or_load(
            self._owner, idx, lambda: _KeyBlock(self._reader.read_block(idx).to_arrow()),
            lambda b: b.nbytes,
        )  # fmt: skip

    def _search(self, idx: int, key: bytes) -> tuple[int, _KeyBlock]:
        """Where ``key`` would go in block ``idx`` (bisect_left), and the block."""
        block = self._block(idx)
        width = block.width
        ints = block.ints
        if ints is not None:
            if width == len(key):
                return int(ints.searchsorted(ints.dtype.type(int.from_bytes(key)))), block
            if width + 1 == len(key):
                end = ints.dtype.type(int.from_bytes(key[:width]))
                return int(ints.searchsorted(end, "right")), block
        if block.fixed is not None:
            if width == len(key):
                return int(block.fixed.searchsorted(key)), block
            if width + 1 == len(key):
                # A point range's end (a key and one zero byte): the first key above the key.
                return int(block.fixed.searchsorted(key[:width], "right")), block
        if block.listed is not None:
            return bisect.bisect_left(block.listed, key), block
        return bisect.bisect_left(_Keys(block.keys), key), block

    def find(self, key: bytes) -> int | None:
        """The rowid of ``key``, or None where it is absent."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        if idx >= len(self._block_max_keys):
            return None
        pos, block = self._search(idx, key)
        if pos < len(block.keys) and block.holds_at(pos, key):
            return self._starts[idx] + pos
        return None

    def lookup_sorted(self, keys: list[bytes]) -> list[int | None]:
        """The rowid of each of ``keys`` (in ascending order), or None where it is absent,
        reading each block once however many of the keys fall in it."""
        return [self.find(key) for key in keys]

    def block_of(self, rowid: int) -> tuple[int, int]:
        """The block holding ``rowid`` and the row's position in it."""
        idx = bisect.bisect_right(self._starts, rowid) - 1
        return idx, rowid - self._starts[idx]

    def lower_bound(self, key: bytes) -> int:
        """The first rowid whose key is >= ``key``; ``key`` is at most the largest key."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        return self._starts[idx] + self._search(idx, key)[0]


def _offsets(keys: pa.Array) -> np.ndarray:
    offsets: np.ndarray = np.frombuffer(keys.buffers()[1], dtype=np.int32)
    return offsets[keys.offset : keys.offset + len(keys) + 1]


def _uniform_width(keys: pa.Array) -> int:
    """The byte width every key of the block has, or 0 if they differ (or a type is not
    plain binary)."""
    if not pa.types.is_binary(keys.type) or keys.null_count or not len(keys):
        return 0
    lengths = np.diff(_offsets(keys))
    width = int(lengths[0])
    return width if width and bool((lengths == width).all()) else 0


def _fixed_view(keys: pa.Array, width: int) -> np.ndarray:
    """The keys as a numpy array of ``width``-byte strings, without copying."""
    offsets = _offsets(keys)
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    return data.view(f"S{width}")


class _Keys:
    """A key block's Arrow array as a sequence of bytes, for ``bisect``."""

    __slots__ = ("_array",)

    def __init__(self, array: pa.Array) -> None:
        self._array = array

    def __len__(self) -> int:
        return len(self._array)

    def __getitem__(self, index: int) -> bytes:
        key: bytes = self._array[index].as_py()
        return key
