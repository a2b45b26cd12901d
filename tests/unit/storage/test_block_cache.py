"""The block cache: LRU by bytes, per-file key spaces, huge blocks not cached."""

from __future__ import annotations

from storage.cfile.block_cache import BlockCache


def test_lru_evicts_least_recently_used_by_bytes():
    cache: BlockCache[str] = BlockCache(capacity_bytes=800)
    owner = cache.new_owner()
    loads: list[int] = []

    def get(idx: int) -> str:
        def load() -> str:
            loads.append(idx)
            return f"block {idx}"

        return cache.get_or_load(owner, idx, load, lambda _: 100)

    for idx in range(8):
        get(idx)
    assert cache.bytes_used == 800
    get(0)  # now the most recent
    get(8)  # evicts 1, the least recent
    assert cache.bytes_used == 800
    loads.clear()
    get(0)
    get(1)
    assert loads == [1]
    assert cache.hits >= 2


def test_owners_do_not_share_entries_and_huge_blocks_are_not_kept():
    cache: BlockCache[int] = BlockCache(capacity_bytes=1000)
    first, second = cache.new_owner(), cache.new_owner()
    assert cache.get_or_load(first, 0, lambda: 1, lambda _: 10) == 1
    assert cache.get_or_load(second, 0, lambda: 2, lambda _: 10) == 2
    assert cache.get_or_load(first, 0, lambda: 3, lambda _: 10) == 1
    assert cache.get_or_load(first, 1, lambda: 4, lambda _: 500) == 4
    assert cache.get_or_load(first, 1, lambda: 5, lambda _: 500) == 5
    assert cache.bytes_used == 20
