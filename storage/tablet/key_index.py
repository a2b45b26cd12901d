"""KeyIndex: a DiskRowSet's primary-key index, the sorted encoded keys in a CFile.

Each block's largest key is in the CFile's block metadata, so a search reads
one block (from the block cache) and bisects it.  A block is kept (``KEY_BLOCKS``)
in a searchable form built with numpy, never a Python object per key: each key's
suffix past the block's common prefix, zero-padded to the longest and followed by
its length where lengths differ, as big-endian 8-byte words that compare as the
keys do; word ``j`` of every key is one native ``uint64`` array.  ``bisect`` runs
on a memoryview of such an array (its items are Python ints, read in C), so a
lookup is a few C-level bisects, narrowing word by word: about 1 µs where
``numpy.searchsorted`` of a scalar cost 4 µs for an integer key and 11 µs for an
index tablet's (several calls to order the keys padding makes equal).  The cache is
big enough that random lookups into a table of millions of rows hit.
"""

from __future__ import annotations

import bisect
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.reader import BlockMeta, CFileReader


class _KeyBlock:
    """One block of keys in the form a lookup searches (see the module's docstring).

    A key's record: its suffix past ``prefix`` zero-padded to ``width`` bytes, then, when
    the suffixes' lengths differ, the length in ``tag`` big-endian bytes, then zeros to a
    whole number of words.  Records compare bytewise exactly as their keys do (padding
    makes a key equal to its extensions by zero bytes only, and the length, compared
    next, puts the shorter first), so a bisect of records is a bisect of keys.  Keys too
    uneven to pad cheaply (a few long ones) are kept as a list of bytes instead."""

    __slots__ = (
        "rows", "prefix", "width", "tag", "size", "single", "columns", "words", "unpack",
        "listed", "nbytes",
    )  # fmt: skip

    def __init__(self, keys: pa.Array) -> None:
        self.rows = len(keys)
        self.prefix = b""
        self.width = self.tag = self.size = 0
        self.columns: list[np.ndarray] = []
        """Word ``j`` of every record, as native unsigned integers (kept alive for ``words``)."""
        self.words: list[memoryview] = []
        self.single = False
        """Keys of one width, at most 8 bytes, no prefix: a record is the key itself."""
        self.listed: list[bytes] | None = None
        made = _records(keys)
        if made is None:
            self.listed = keys.to_pylist()
            self.nbytes = 128 + keys.nbytes + 50 * self.rows
            return
        self.prefix, self.width, self.tag, self.columns = made
        self.size = 8 * len(self.columns)
        self.unpack = struct.Struct(f">{len(self.columns)}Q").unpack
        """A record's words as ints, in one call."""
        self.words = [c.data for c in self.columns]
        self.single = not self.prefix and not self.tag and len(self.columns) == 1
        self.nbytes = 128 + sum(c.nbytes for c in self.columns)

    def locate(self, key: bytes) -> tuple[int, bool]:
        """Where ``key`` would go in the block (bisect_left), and whether it is there."""
        listed = self.listed
        if listed is not None:
            pos = bisect.bisect_left(listed, key)
            return pos, pos < self.rows and listed[pos] == key
        if self.single:
            column = self.words[0]
            width = self.width
            if len(key) > width:
                return bisect.bisect_right(
                    column, int.from_bytes(key[:width].ljust(8, b"\0"))
                ), False
            word = int.from_bytes(key.ljust(8, b"\0"))
            pos = bisect.bisect_left(column, word)
            return pos, pos < self.rows and column[pos] == word and len(key) == width
        prefix = self.prefix
        if prefix:
            head = key[: len(prefix)]
            if head != prefix:
                return (0 if head < prefix else self.rows), False
            key = key[len(prefix) :]
        width = self.width
        # A probe longer than the records: the keys below it are those at or below its
        # first ``width`` bytes (those bytes are a prefix of the probe, so below it).
        right = len(key) > width
        if right:
            key = key[:width]
        tag = self.tag
        record = key.ljust(width, b"\0")
        if tag:
            record += len(key).to_bytes(tag)
        if len(record) < self.size:
            record = record.ljust(self.size, b"\0")
        probe = self.unpack(record)
        exact = tag > 0 or len(key) == width
        words = self.words
        last = len(words) - 1
        lo, hi = 0, self.rows
        for j, column in enumerate(words):
            word = probe[j]
            if j == last:
                if right:
                    return bisect.bisect_right(column, word, lo, hi), False
                pos = bisect.bisect_left(column, word, lo, hi)
                return pos, exact and pos < hi and column[pos] == word
            pos = bisect.bisect_left(column, word, lo, hi)
            if pos == hi or column[pos] != word:
                return pos, False
            if pos + 1 == hi or column[pos + 1] != word:
                # One key left that could equal the probe: its other words decide.
                for k in range(j + 1, last + 1):
                    held = words[k][pos]
                    if held != probe[k]:
                        return (pos + 1 if held < probe[k] else pos), False
                return (pos + 1, False) if right else (pos, exact)
            lo, hi = pos, bisect.bisect_right(column, word, pos + 1, hi)
        raise AssertionError("a block of records has at least one word")

    def locate_many(self, keys: list[bytes]) -> np.ndarray | None:
        """The position of each of ``keys`` in the block, -1 where it is absent, with one
        ``numpy.searchsorted`` for them all; None unless the block's keys are one integer
        word each (``single``) and every probe is as wide as they are."""
        width = self.width
        if not self.single or any(len(key) != width for key in keys):
            return None
        column = self.columns[0]
        raw = np.frombuffer(b"".join(keys), np.uint8).reshape(len(keys), width)
        padded = np.zeros((len(keys), 8), np.uint8)
        padded[:, :width] = raw
        words = padded.view(">u8").ravel().astype(np.uint64)
        pos = np.searchsorted(column, words)
        inside = pos < self.rows
        hit = np.zeros(len(keys), bool)
        hit[inside] = column[pos[inside]] == words[inside]
        return np.where(hit, pos, -1)

    def bounds(self, lower: bytes, upper: bytes) -> tuple[int, int]:
        """``search`` of ``lower`` and of ``upper`` (``lower <= upper``).  When the keys are
        of one width of at least a word past the prefix and neither bound is longer than a
        word past it (an index lookup's prefix and its successor), a key is at or above a
        bound exactly when its first word is at or above the bound's zero-padded one: two
        C-level bisects of that word rather than two ``locate``s."""
        words = self.words
        if words and not self.tag and self.width >= 8:
            prefix = self.prefix
            n = len(prefix)
            if (
                len(lower) <= n + 8
                and len(upper) <= n + 8
                and lower[:n] == prefix
                and upper[:n] == prefix
            ):
                column = words[0]
                lo = bisect.bisect_left(column, int.from_bytes(lower[n:].ljust(8, b"\0")))
                return lo, bisect.bisect_left(column, int.from_bytes(upper[n:].ljust(8, b"\0")), lo)
        return self.locate(lower)[0], self.locate(upper)[0]

    def search(self, key: bytes) -> int:
        """Where ``key`` would go in the block (bisect_left)."""
        return self.locate(key)[0]

    def key_at(self, pos: int) -> bytes:
        """The key at ``pos`` (< the block's rows)."""
        if self.listed is not None:
            return self.listed[pos]
        record = b"".join([column[pos].to_bytes(8) for column in self.words])
        tag, width = self.tag, self.width
        size = int.from_bytes(record[width : width + tag]) if tag else width
        return self.prefix + record[:size]


_PAD_SLACK = 2
_VECTORISED = 16
"""From this many keys in one block, ``lookup_sorted`` searches them with numpy at once."""
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

    def find(self, key: bytes) -> int | None:
        """The rowid of ``key``, or None where it is absent."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        if idx >= len(self._block_max_keys):
            return None
        pos, found = self._block(idx).locate(key)
        return self._starts[idx] + pos if found else None

    def find_cached(self, key: bytes) -> int:
        """``find`` when the block that would hold ``key`` is cached: its rowid, or -1 where it
        is absent; -2 when the block is not cached.  A point read probes the bloom filter
        only then: with the block at hand one search answers for certain, and a row that is
        there (the usual case) passes the filter anyway."""
        max_keys = self._block_max_keys
        idx = bisect.bisect_left(max_keys, key)
        if idx >= len(max_keys):
            return -1
        block = KEY_BLOCKS.get(self._owner, idx)
        if block is None:
            return -2
        pos, found = block.locate(key)
        return self._starts[idx] + pos if found else -1

    def keys_between(self, lower: bytes, upper: bytes, most: int) -> tuple[int, list[bytes]] | None:
        """The first rowid at or above ``lower`` and the keys in [``lower``, ``upper``) (``lower
        <= upper``), from one block when ``upper`` falls in ``lower``'s and at most ``most``
        keys are between: an index lookup's entries with one cache lookup and no rowid
        round trip (``span`` then ``keys_at``); None otherwise."""
        max_keys = self._block_max_keys
        idx = bisect.bisect_left(max_keys, lower)
        if idx >= len(max_keys) or upper > max_keys[idx]:
            return None
        block = self._block(idx)
        lo, hi = block.bounds(lower, upper)
        if hi - lo > most:
            return None
        if hi - lo == 1:  # an index lookup of a unique value
            return self._starts[idx] + lo, [block.key_at(lo)]
        return self._starts[idx] + lo, [block.key_at(pos) for pos in range(lo, hi)]

    def lookup_sorted(self, keys: list[bytes]) -> list[int | None]:
        """The rowid of each of ``keys`` (in ascending order), or None where it is absent,
        reading each block once however many of the keys fall in it."""
        max_keys, starts = self._block_max_keys, self._starts
        out: list[int | None] = []
        first, idx = 0, 0
        while first < len(keys):
            idx = bisect.bisect_left(max_keys, keys[first], idx)
            if idx >= len(max_keys):
                out += [None] * (len(keys) - first)
                break
            end = bisect.bisect_right(keys, max_keys[idx], first)
            block, start = self._block(idx), starts[idx]
            inside = keys[first:end]
            found = block.locate_many(inside) if len(inside) >= _VECTORISED else None
            if found is None:
                for key in inside:
                    pos, there = block.locate(key)
                    out.append(start + pos if there else None)
            else:
                out += [start + pos if pos >= 0 else None for pos in found.tolist()]
            first, idx = end, idx + 1
        return out

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
        return self._starts[idx] + self._block(idx).search(key)

    def span(self, lower: bytes, upper: bytes) -> tuple[int, int]:
        """``lower_bound`` of ``lower`` and of ``upper`` (both at most the largest key, and
        ``lower <= upper``) with one bisect of the block bounds and one cache lookup when
        ``upper`` falls in ``lower``'s block, as a short range's (an index lookup's) does."""
        max_keys = self._block_max_keys
        idx = bisect.bisect_left(max_keys, lower)
        block = self._block(idx)
        start = self._starts[idx]
        if upper <= max_keys[idx]:
            lo, hi = block.bounds(lower, upper)
            return start + lo, start + hi
        return start + block.search(lower), self.lower_bound(upper)


def _offsets(keys: pa.Array) -> np.ndarray:
    offsets: np.ndarray = np.frombuffer(keys.buffers()[1], dtype=np.int32)
    return offsets[keys.offset : keys.offset + len(keys) + 1]


def _records(keys: pa.Array) -> tuple[bytes, int, int, list[np.ndarray]] | None:
    """``_KeyBlock``'s form of sorted ``keys``: their common prefix, the suffixes' padded
    width, the length tag's bytes (0 when every suffix has that width) and each word of
    the records as a native ``uint64`` array; None when padding would cost more than
    ``_PAD_SLACK`` times the keys' bytes, or the keys are not plain binary."""
    if not pa.types.is_binary(keys.type) or keys.null_count or not len(keys):
        return None
    rows = len(keys)
    offsets = _offsets(keys).astype(np.int64)
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8)
    first = data[offsets[0] : offsets[1]]
    last = data[offsets[-2] : offsets[-1]]
    shared = min(len(first), len(last))
    differ = np.flatnonzero(first[:shared] != last[:shared])
    common = int(differ[0]) if len(differ) else shared  # sorted: the prefix of them all
    starts = offsets[:-1] + common
    lengths = offsets[1:] - starts
    width = int(lengths.max())
    uniform = bool((lengths == width).all())
    tag = 0 if uniform else 2 if width < 1 << 16 else 4
    size = max(8, -(-(width + tag) // 8) * 8)
    if common and max(8, -(-(common + width + tag) // 8) * 8) == size:
        # Stripping the prefix saves no word: leave it, and the probe's check of it.
        starts -= common
        lengths += common
        width += common
        common = 0
    if not uniform and size * rows > _PAD_SLACK * int(lengths.sum()) + 16 * rows:
        return None
    padded = np.zeros((rows, size), np.uint8)
    if uniform:
        whole = data[offsets[0] : offsets[-1]].reshape(rows, common + width)
        padded[:, :width] = whole[:, common:]
    else:
        columns = np.arange(width)
        inside = columns < lengths[:, None]
        padded[:, :width][inside] = data[(starts[:, None] + columns)[inside]]
        big_endian = lengths.astype(">u2" if tag == 2 else ">u4")
        padded[:, width : width + tag] = big_endian.view(np.uint8).reshape(rows, tag)
    words = padded.view(">u8")
    return (
        first[:common].tobytes(),
        width,
        tag,
        [np.ascontiguousarray(words[:, j], dtype=np.uint64) for j in range(size // 8)],
    )
