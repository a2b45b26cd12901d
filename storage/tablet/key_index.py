"""KeyIndex: a DiskRowSet's primary-key index, the sorted encoded keys in a CFile.

Each block's largest key is in the CFile's block metadata, so a search reads
one block; a block is searched with ``bisect`` over its Arrow array without
decoding the whole block into Python objects.
"""

from __future__ import annotations

import bisect
from pathlib import Path

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

    @property
    def blocks(self) -> list[BlockMeta]:
        return self._reader.blocks

    def read_all(self) -> pa.Array:
        return self._reader.read_all()

    @property
    def size_bytes(self) -> int:
        return self._reader.size_bytes

    def _block(self, idx: int) -> _Keys:
        return _Keys(self._reader.read_block(idx).to_arrow())

    def lookup_sorted(self, keys: list[bytes]) -> list[int | None]:
        """The rowid of each of ``keys`` (in ascending order), or None where it is absent,
        reading each block once however many of the keys fall in it."""
        out: list[int | None] = []
        loaded = -1
        block = None
        for key in keys:
            idx = bisect.bisect_left(self._block_max_keys, key)
            if idx >= len(self._block_max_keys):
                out.append(None)
                continue
            if idx != loaded:
                block, loaded = self._block(idx), idx
            assert block is not None, "a key block is loaded before it is searched"
            pos = bisect.bisect_left(block, key)
            found = pos < len(block) and block[pos] == key
            out.append(self.blocks[idx].first_rowid + pos if found else None)
        return out

    def lower_bound(self, key: bytes) -> int:
        """The first rowid whose key is >= ``key``; ``key`` is at most the largest key."""
        idx = bisect.bisect_left(self._block_max_keys, key)
        return self.blocks[idx].first_rowid + bisect.bisect_left(self._block(idx), key)


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
