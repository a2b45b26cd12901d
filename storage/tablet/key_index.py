"""KeyIndex: a DiskRowSet's primary-key index, the sorted encoded keys in a CFile.

Each block's largest key is in the CFile's block metadata, so a search reads
one block (from the block cache).  A block of keys that all have one width
(integer, date and timestamp keys) is searched with ``numpy.searchsorted``
over its data buffer viewed as fixed-width byte strings, whose order is the
keys' byte order; other blocks with ``bisect`` over the Arrow array, without
decoding the whole block into Python objects.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.cfile.reader import BlockMeta, CFileReader


class KeyIndex:
    """Finds rowids by encoded key in a rowset whose rows are stored in key order."""

    def __init__(self, path: Path) -> None:
        self._reader = CFileReader(path)
        # A BINARY cfile's footer holds its block bounds as hex strings.
        self._block_max_keys = [
            bytes.fromhex(b.max)  # type: ignore[arg-type]
            for b in self._reader.blocks
        ]
        self.block_starts = np.fromiter(
            (b.first_rowid for b in self._reader.blocks), np.int64, len(self._reader.blocks)
        )
        """Each block's first rowid, for finding the blocks of many rowids at once."""
        self._widths: dict[int, int] = {}
        """Per block read so far, the width all its keys share (0: they differ)."""

    @property
    def blocks(self) -> list[BlockMeta]:
        return self._reader.blocks

    def read_all(self) -> pa.Array:
        return self._reader.read_all()

    @property
    def size_bytes(self) -> int:
        return self._reader.size_bytes

    def _search(self, idx: int, key: bytes) -> tuple[int, pa.Array]:
        """Where ``key`` would go in block ``idx`` (bisect_left), and the block's keys."""
        keys = self._reader.read_block(idx).to_arrow()
        width = self._widths.get(idx)
        if width is None:
            width = self._widths[idx] = _uniform_width(keys)
        if width and width == len(key):
            return int(np.searchsorted(_fixed_view(keys, width), key)), keys
        if width and width + 1 == len(key):
            # A point range's end (a key and one zero byte): the first key above the key.
            return int(np.searchsorted(_fixed_view(keys, width), key[:width], "right")), keys
        return bisect.bisect_left(_Keys(keys), key), keys

    def lookup_sorted(self, keys: list[bytes]) -> list[int | None]:
        """The rowid of each of ``keys`` (in ascending order), or None where it is absent,
        reading each block once however many of the keys fall in it."""
        out: list[int | None] = []
        for key in keys:
            idx = bisect.bisect_left(self._block_max_keys, key)
            if idx >= len(self._block_max_keys):
                out.append(None)
                continue
            pos, block = self._search(idx, key)
            found = pos < len(block) and block[pos].as_py() == key
            out.append(self.blocks[idx].first_rowid + pos if found else None)
        return out

    def lower_bound(self, key: bytes) -> int:
        """The first rowid whose key is >= ``key``; ``key`` is at most the largest key."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        return self.blocks[idx].first_rowid + self._search(idx, key)[0]


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
