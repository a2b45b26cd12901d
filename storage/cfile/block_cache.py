"""BlockCache: decoded cfile blocks kept across scans, within a byte budget (Kudu's block cache).

Decoding a block (CRC check, decompression, bitshuffle or dictionary decode)
costs far more than using it, and point lookups and repeated scans hit the
same blocks again and again.  One process-wide LRU keeps the most recently
used decoded blocks up to ``capacity_bytes`` (``reader.BLOCK_CACHE``, beside the
Block type it holds); cfiles are immutable, so an
entry never goes stale (each opened reader has its own key space).

A hit takes no lock: ``OrderedDict.get`` and ``move_to_end`` are single C calls on keys
of ints (no Python ``__hash__``/``__eq__`` runs), so under the GIL each is atomic against
the locked insert and eviction; a hit racing the eviction of its own entry still returns
the value it got, and only the LRU order and the hit count may be off by that one hit.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

DEFAULT_CAPACITY_BYTES = 128 << 20

V = TypeVar("V")


class BlockCache(Generic[V]):
    """A thread-safe LRU of decoded blocks, bounded by the bytes they hold."""

    def __init__(self, capacity_bytes: int = DEFAULT_CAPACITY_BYTES) -> None:
        self.capacity_bytes = capacity_bytes
        self._entries: OrderedDict[tuple[int, int], tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._owners = itertools.count()
        self.hits = 0
        self.misses = 0

    def new_owner(self) -> int:
        """A key space for one opened file."""
        return next(self._owners)

    @property
    def bytes_used(self) -> int:
        return self._bytes

    def get(self, owner: int, idx: int) -> V | None:
        """The cached block, or None: the lock-free hit of ``get_or_load``, for callers that
        would otherwise build a ``load`` closure per call."""
        key = (owner, idx)
        entry = self._entries.get(key)
        if entry is None:
            return None
        try:  # noqa: SIM105  # contextlib.suppress costs a hit several times more
            self._entries.move_to_end(key)
        except KeyError:
            pass  # evicted since the get: the value is still the block's (cfiles are immutable)
        self.hits += 1
        return entry[0]

    def get_or_load(
        self, owner: int, idx: int, load: Callable[[], V], size_of: Callable[[V], int]
    ) -> V:
        found = self.get(owner, idx)
        if found is not None:
            return found
        key = (owner, idx)
        with self._lock:
            self.misses += 1
        value = load()
        size = size_of(value)
        if size > self.capacity_bytes // 8:
            return value  # one huge block must not flush everything else
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (value, size)
                self._bytes += size
                while self._bytes > self.capacity_bytes and self._entries:
                    _, (_, evicted) = self._entries.popitem(last=False)
                    self._bytes -= evicted
        return value
