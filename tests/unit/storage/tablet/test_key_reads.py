"""The key reads' short cuts against their general paths on the same tablet state.

``keys_in_range`` takes a range's keys from the one key-index block its search lands in
(``KeyIndex.keys_between``, ``DiskRowSet.is_live``) and the one-key ``read_keys`` probes
the bloom filter only when the key's index block is not cached (``find_cached``).  With
blocks of a few rows (``TARGET_BLOCK_BYTES`` shrunk), ranges fall inside a block and
across blocks; after random writes, flushes, delta and rowset compactions and reopens,
each read must give the general path's keys, rows and ScanStats, and a scan's rows, now
and at earlier commits, with the key blocks cached and not.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pyarrow as pa
from hypothesis import HealthCheck, given, settings

from storage.cfile import encoding, writer
from storage.data_type import INT32, ColumnId
from storage.key_encoding import encode_keys
from storage.predicate import KeyRange, ScanSpec
from storage.scan_stats import ScanStats
from storage.tablet import point_read
from storage.tablet.key_index import KEY_BLOCKS
from storage.transaction import Transaction
from tests.support.tablet_model import TID, ModelTablet, ops

K, S, N = ColumnId(1), ColumnId(2), ColumnId(3)
ALL_KEYS = list(range(13))
RANGES = [(-1, 1), (0, 1), (2, 3), (3, 5), (4, 9), (6, 6), (8, 10), (11, 14)]
ONE_KEYS = [0, 3, 7, 12]


def _key(k: int) -> bytes:
    return encode_keys([pa.array([k], pa.int32())], [INT32])[0]


@contextmanager
def _small_blocks():
    """Blocks of two or three rows, so a tablet of a dozen keys has several."""
    with mock.patch.object(writer, "TARGET_BLOCK_BYTES", 16):
        yield


def _uncached() -> None:
    with KEY_BLOCKS._lock:
        KEY_BLOCKS._entries.clear()
        KEY_BLOCKS._bytes = 0


def _keys_both_ways(txn: Transaction, lo: int, hi: int, snapshot: int | None) -> list[bytes]:
    key_range = KeyRange(_key(lo), _key(hi))
    fast_stats, general_stats = ScanStats(), ScanStats()
    tablet = txn._tablets.tablet(TID)
    at, reader = txn._reading(snapshot)
    fast = tablet.keys_in_range(key_range, at, reader, 64, fast_stats)
    with mock.patch.object(point_read, "_keys_in_blocks", lambda *args: None):
        general = tablet.keys_in_range(key_range, at, reader, 64, general_stats)
    assert fast == general, (lo, hi, snapshot)
    assert dataclasses.asdict(fast_stats) == dataclasses.asdict(general_stats), (lo, hi)
    assert fast is not None
    return fast


def _scanned(txn: Transaction, snapshot: int | None) -> dict[int, tuple]:
    spec = ScanSpec((K, S, N), (), snapshot=snapshot)
    return {r["1"]: (r["2"], r["3"]) for b in txn.scan(TID, spec) for r in b.to_pylist()}


def _one_key_cold_and_warm(txn: Transaction, k: int, snapshot: int | None) -> list[dict]:
    stats = []
    rows = []
    for cold in (True, False):
        if cold:
            _uncached()
        counted = ScanStats()
        batch = txn.read_keys(TID, [_key(k)], (K, S, N), snapshot=snapshot, stats=counted)
        rows.append(batch.to_pylist())
        stats.append(dataclasses.asdict(counted))
    general_stats = ScanStats()
    general = txn.read_keys(TID, [_key(k)] * 2, (K, S, N), snapshot=snapshot, stats=general_stats)
    assert rows[0] == rows[1] == general.to_pylist(), (k, snapshot)
    assert stats[0] == stats[1] == dataclasses.asdict(general_stats), (k, snapshot)
    return rows[0]


def _agree(model: ModelTablet, snapshots: list[int | None]) -> None:
    txn = model.engine.begin(read_only=True)
    for snapshot in snapshots:
        scanned = _scanned(txn, snapshot)
        if snapshot is None:
            assert scanned == model.rows
        for lo, hi in RANGES:
            keys = _keys_both_ways(txn, lo, hi, snapshot)
            assert sorted(keys) == [_key(k) for k in sorted(scanned) if lo <= k < hi], (lo, hi)
        _uncached()
        for lo, hi in RANGES[::2]:
            _keys_both_ways(txn, lo, hi, snapshot)
        for k in ONE_KEYS:
            rows = _one_key_cold_and_warm(txn, k, snapshot)
            assert rows == (
                [{"1": k, "2": scanned[k][0], "3": scanned[k][1]}] if k in scanned else []
            )
    txn.rollback()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_key_reads_match_their_general_paths_and_a_scan(sequence):
    with tempfile.TemporaryDirectory() as tmp, _small_blocks(), ModelTablet(Path(tmp)) as model:
        commits: list[int | None] = []
        for op in sequence:
            commits.append(model.step(op))
            _agree(model, [None, *[c for c in commits[-1:] if c is not None]])


def test_a_range_across_blocks_takes_the_general_path(tmp_path):
    with _small_blocks(), ModelTablet(tmp_path) as model:
        model.step(("insert", [(k, ("red", k)) for k in ALL_KEYS], False))
        model.step(("checkpoint",))
        (rowset,) = model.engine.tablet(TID).rowsets
        index = rowset.key_index
        assert len(index.blocks) > 2
        last = index.blocks[0].rows - 1
        assert index.keys_between(_key(0), _key(last), 64) == (0, [_key(k) for k in range(last)])
        assert index.keys_between(_key(1), _key(1), 64) == (1, [])
        assert index.keys_between(_key(0), _key(last), last - 1) is None
        # The range's end is past the block's last key: the next block may hold more keys.
        assert index.keys_between(_key(0), _key(last + 1), 64) is None
        assert index.keys_between(_key(99), _key(100), 64) is None
        assert rowset.keys_between(_key(99), _key(100), 64) == (0, [])
        _uncached()
        assert index.find_cached(_key(5)) == -2
        assert index.find(_key(5)) == 5
        assert index.find_cached(_key(5)) == 5
        assert index.find_cached(_key(99)) == -1
        txn = model.engine.begin(read_only=True)
        assert _keys_both_ways(txn, 0, 13, None) == [_key(k) for k in ALL_KEYS]
        at, reader = txn._reading(None)
        found = point_read._keys_in_blocks([rowset], _key(0), _key(1), at, reader, ScanStats(), 8)
        assert found == [_key(0)], "one block's keys take the short cut"
        txn.rollback()


def test_bitshuffle_is_imported_with_one_thread_and_the_environment_restored():
    with mock.patch.dict(os.environ, {"OMP_NUM_THREADS": "3"}):
        encoding._import_bitshuffle_one_thread()
        assert os.environ["OMP_NUM_THREADS"] == "3"
    with mock.patch.dict(os.environ, {}, clear=False):
        os.environ.pop("OMP_NUM_THREADS", None)
        encoding._import_bitshuffle_one_thread()
        assert "OMP_NUM_THREADS" not in os.environ
