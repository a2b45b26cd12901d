"""KeyIndex: a DiskRowSet's primary-key index, the sorted encoded keys in a CFile.

Each block's largest key is in the CFile's block metadata, so a search reads
one block (from the block cache) and searches it with ``numpy.searchsorted``:
keys of 1, 2, 4 or 8 bytes (integer, date and timestamp keys) as native
integers, other keys of one width as fixed-width byte strings, and keys of
differing widths (an index tablet's, whose escaped columns vary) as their
suffixes past the block's common prefix, zero-padded to one width, with their
lengths to order the keys that padding makes equal.  That searchable form of a
block is built with numpy, never a Python object per key, and cached
(``KEY_BLOCKS``) big enough that random lookups into a table of millions of rows
hit, so a lookup is a bisect and a ``searchsorted``.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.reader import BlockMeta, CFileReader


class _KeyBlock:
    """One block of keys in the form a lookup searches, built once per block with numpy (no
    per-key Python objects): keys of one width as native integers (1, 2, 4 or 8 bytes)
    or fixed-width numpy strings; keys of differing widths (an index tablet's, whose
    escaped columns vary) as their suffixes past the block's common prefix, zero-padded
    to one width, with their lengths to order keys that padding makes equal."""

    __slots__ = ("rows", "width", "ints", "fixed", "data", "prefix", "lengths", "keys", "nbytes")

    def __init__(self, keys: pa.Array) -> None:
        self.rows = len(keys)
        self.width = _uniform_width(keys)
        self.ints: np.ndarray | None = None
        """Keys of 1, 2, 4 or 8 bytes as native unsigned integers (big-endian bytes order
        as their values do), searched by a scalar of the same dtype: a Python int would
        be compared as a float64 (searchsorted promotes it), wrong above 2**53."""
        self.fixed: np.ndarray | None = None
        self.data: memoryview | None = None
        self.prefix = b""
        self.lengths: np.ndarray | None = None
        self.keys: pa.Array | None = None
        """Only for keys too uneven to pad (a few long ones), bisected as Arrow scalars."""
        if self.width in _INT_WIDTHS:
            fixed = _fixed_view(keys, self.width)
            self.ints = fixed.view(f">u{self.width}").astype(f"=u{self.width}")
            nbytes = self.ints.nbytes
        elif self.width:
            self.fixed = _fixed_view(keys, self.width)
            self.data = self.fixed.data.cast("B")
            nbytes = self.fixed.nbytes
        else:
            padded = _padded(keys)
            if padded is None:
                self.keys = keys
                nbytes = keys.nbytes
            else:
                self.prefix, self.fixed, self.lengths = padded
                self.width = self.fixed.itemsize
                self.data = self.fixed.data.cast("B")
                nbytes = self.fixed.nbytes + self.lengths.nbytes
        self.nbytes = 128 + nbytes

    def search(self, key: bytes) -> int:
        """Where ``key`` would go in the block (bisect_left)."""
        width = self.width
        ints = self.ints
        if ints is not None:
            if len(key) <= width:
                return int(
                    ints.searchsorted(ints.dtype.type(int.from_bytes(key.ljust(width, b"\0"))))
                )
            # Keys equal to the probe's first ``width`` bytes are its prefixes, so below it
            # (a point range's end, a key and one zero byte, finds the first key above it).
            return int(ints.searchsorted(ints.dtype.type(int.from_bytes(key[:width])), "right"))
        fixed = self.fixed
        if fixed is None:
            assert self.keys is not None, "a block is searchable one way or another"
            return bisect.bisect_left(_Keys(self.keys), key)
        lengths = self.lengths
        if lengths is None:
            # numpy compares byte strings as if zero-padded to one width: a shorter probe
            # sorts as its padded form, below the keys it is a prefix of.
            if len(key) <= width:
                return int(fixed.searchsorted(key))
            return int(fixed.searchsorted(key[:width], "right"))
        prefix = self.prefix
        head = key[: len(prefix)]
        if head != prefix:
            return 0 if head < prefix else self.rows
        suffix = key[len(prefix) :]
        if len(suffix) > width:
            # Keys padded equal to the suffix's first ``width`` bytes are its prefixes: below.
            return int(fixed.searchsorted(suffix[:width], "right"))
        lo = int(fixed.searchsorted(suffix))
        if lo == self.rows or fixed[lo] != suffix.rstrip(b"\0"):
            return lo  # no key pads equal to the suffix (numpy drops trailing zeros)
        hi = int(fixed.searchsorted(suffix, "right"))
        # Keys that padding makes equal differ only in trailing zeros: shorter sorts first.
        return lo + int(np.count_nonzero(lengths[lo:hi] < len(suffix)))

    def holds_at(self, pos: int, key: bytes) -> bool:
        """Whether the key at ``pos`` (< the block's rows) is ``key``."""
        if self.ints is not None:
            return len(key) == self.width and int(self.ints[pos]) == int.from_bytes(key)
        if self.data is not None:
            if self.lengths is None:
                return self.data[pos * self.width : (pos + 1) * self.width] == key
            prefix = self.prefix
            size = len(key) - len(prefix)
            start = pos * self.width
            return (
                int(self.lengths[pos]) == size
                and key.startswith(prefix)
                and self.data[start : start + size] == key[len(prefix) :]
            )
        assert self.keys is not None, "a block is searchable one way or another"
        held: bool = self.keys[pos].as_py() == key
        return held

    def key_at(self, pos: int) -> bytes:
        """The key at ``pos`` (< the block's rows)."""
        width = self.width
        if self.ints is not None:
            return int(self.ints[pos]).to_bytes(width)
        if self.data is not None:
            start = pos * width
            if self.lengths is None:
                return bytes(self.data[start : start + width])
            return self.prefix + bytes(self.data[start : start + int(self.lengths[pos])])
        assert self.keys is not None, "a block is searchable one way or another"
        key: bytes = self.keys[pos].as_py()
        return key


_INT_WIDTHS = (1, 2, 4, 8)
_PAD_SLACK = 2
"""Keys of differing widths are padded when that at most doubles their bytes (plus 16 a key)."""

KEY_BLOCKS: BlockCache[_KeyBlock] = BlockCache(64 << 20)
"""Key blocks in their searchable form: enough for every block of the key indexes of a
few million rows (about 8 bytes a fixed-width key, 20 an index tablet's), so random
lookups hit."""


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
        block = KEY_BLOCKS.get(self._owner, idx)
        if block is not None:
            return block
        return KEY_BLOCKS.get_or_load(
            self._owner, idx, lambda: _KeyBlock(self._reader.read_block(idx).to_arrow()),
            lambda b: b.nbytes,
        )  # fmt: skip

    def _search(self, idx: int, key: bytes) -> tuple[int, _KeyBlock]:
        """Where ``key`` would go in block ``idx`` (bisect_left), and the block."""
        block = self._block(idx)
        return block.search(key), block

    def find(self, key: bytes) -> int | None:
        """The rowid of ``key``, or None where it is absent."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        if idx >= len(self._block_max_keys):
            return None
        pos, block = self._search(idx, key)
        if pos < block.rows and block.holds_at(pos, key):
            return self._starts[idx] + pos
        return None

    def lookup_sorted(self, keys: list[bytes]) -> list[int | None]:
        """The rowid of each of ``keys`` (in ascending order), or None where it is absent,
        reading each block once however many of the keys fall in it."""
        return [self.find(key) for key in keys]

    def keys_at(self, rowids: list[int]) -> list[bytes]:
        """The keys of ``rowids`` (ascending), from the cached searchable blocks: a few keys
        found by rowid need no column read."""
        out = []
        idx, block = -1, None
        for rowid in rowids:
            if block is None or not self._starts[idx] <= rowid < self._starts[idx] + block.rows:
                idx = bisect.bisect_right(self._starts, rowid) - 1
                block = self._block(idx)
            out.append(block.key_at(rowid - self._starts[idx]))
        return out

    def block_of(self, rowid: int) -> tuple[int, int]:
        """The block holding ``rowid`` and the row's position in it."""
        idx = bisect.bisect_right(self._starts, rowid) - 1
        return idx, rowid - self._starts[idx]

    def lower_bound(self, key: bytes) -> int:
        """The first rowid whose key is >= ``key``; ``key`` is at most the largest key."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        return self._starts[idx] + self._search(idx, key)[0]

    def span(self, lower: bytes, upper: bytes) -> tuple[int, int]:
        """``lower_bound`` of ``lower`` and of ``upper`` (both at most the largest key, and
        ``lower <= upper``) with one bisect of the block bounds and one cache lookup when
        ``upper`` falls in ``lower``'s block, as a short range's (an index lookup's) does."""
        max_keys = self._block_max_keys
        idx = bisect.bisect_left(max_keys, lower)
        block = self._block(idx)
        start = self._starts[idx]
        lo = start + block.search(lower)
        if upper <= max_keys[idx]:
            return lo, start + block.search(upper)
        return lo, self.lower_bound(upper)


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


def _padded(keys: pa.Array) -> tuple[bytes, np.ndarray, np.ndarray] | None:
    """The block's common prefix, and each key's suffix past it zero-padded to the longest
    (a numpy fixed-width string array) with its length; None when padding would cost more
    than ``_PAD_SLACK`` times the keys' bytes, or the keys are not plain binary."""
    if not pa.types.is_binary(keys.type) or keys.null_count or len(keys) < 2:
        return None
    offsets = _offsets(keys).astype(np.int64)
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8)
    first = data[offsets[0] : offsets[1]]
    last = data[offsets[-2] : offsets[-1]]
    shared = min(len(first), len(last))
    differ = np.flatnonzero(first[:shared] != last[:shared])
    common = int(differ[0]) if len(differ) else shared
    starts = offsets[:-1] + common
    lengths = offsets[1:] - starts
    width = int(lengths.max())
    if not width or width * len(keys) > _PAD_SLACK * int(lengths.sum()) + 16 * len(keys):
        return None
    columns = np.arange(width)
    inside = columns < lengths[:, None]
    padded = np.zeros((len(keys), width), np.uint8)
    padded[inside] = data[(starts[:, None] + columns)[inside]]
    return first[:common].tobytes(), padded.reshape(-1).view(f"S{width}"), lengths.astype(np.int32)


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
