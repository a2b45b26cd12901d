"""Merging rowset compaction: history kept, deleted rows dropped, concurrent writers lose nothing."""

from __future__ import annotations

import random
import threading
import time

import pyarrow as pa

from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.tablet.compaction_policy import RowSetInfo, average_height, choose, intervals
from tests.unit.storage.tablet.test_delta_compaction import SCHEMA, TID, _read, _write

OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0)


def _overlapping_rowsets(engine):
    """Three DiskRowSets over interleaved keys, with updates and deletes in REDO files."""
    history = []
    for part in range(3):
        keys = list(range(part, 300, 3))
        history.append(_write(engine, "insert", keys, keys, [f"p{part}"] * len(keys)))
        engine.checkpoint()
    history.append(_write(engine, "update_v", list(range(0, 300, 7)), [-7] * 43))
    history.append(_write(engine, "delete", list(range(0, 300, 11))))
    engine.checkpoint()
    history.append(_write(engine, "insert", [0, 11], [100, 111], ["back", "back"]))
    return [(ts, _read(engine, ts)) for ts in history]


def test_merging_keeps_current_and_past_reads_and_moves_unflushed_changes(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    history = _overlapping_rowsets(engine)
    current = _read(engine)
    tablet = engine.tablet(TID)
    assert len(tablet.rowsets) == 3
    ids = [r.rowset_id for r in tablet.rowsets]
    snapshot = engine.mvcc.safe_time()
    out = tablet.compact_rowsets(ids, snapshot, engine.history_cutoff(snapshot))
    assert out is not None and out.rows_dropped == 0
    (merged,) = tablet.rowsets
    assert merged.rows == 300 and len(merged.dms) == 2
    assert _read(engine) == current
    assert all(_read(engine, ts) == rows for ts, rows in history)
    assert not any((tmp_path / "tablets" / str(TID) / f"rowset-{i}").exists() for i in ids)
    engine.close()
    engine = StorageEngine.open(tmp_path, OPTIONS)
    assert _read(engine) == current
    assert all(_read(engine, ts) == rows for ts, rows in history)
    engine.close()


def test_rows_deleted_before_the_history_window_disappear(tmp_path):
    options = StorageOptions(
        fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0, history_max_age_s=0.2
    )
    engine = StorageEngine.open(tmp_path, options)
    engine.create_tablet(TID, SCHEMA)
    keys = list(range(2000))
    _write(engine, "insert", keys, keys, ["x" * 40] * len(keys))
    engine.checkpoint()
    _write(engine, "delete", keys[:1800])
    _write(engine, "delete", keys[1800:1900])
    engine.checkpoint()
    time.sleep(0.3)
    tablet = engine.tablet(TID)
    before = tablet.bytes_on_disk()
    snapshot = engine.mvcc.safe_time()
    cutoff = engine.history_cutoff(snapshot)
    choice = tablet.compaction_choice(128, cutoff)
    assert choice is not None and "deleted" in choice.reason
    out = tablet.compact_rowsets(choice.rowset_ids, snapshot, cutoff)
    assert out is not None and out.rows_dropped == 1900
    assert tablet.rowsets[0].rows == 100 and not tablet.rowsets[0].undo
    assert tablet.bytes_on_disk() < before / 5
    assert _read(engine) == {k: (k, "x" * 40) for k in keys[1900:]}
    _write(engine, "delete", keys[1900:])
    engine.checkpoint()
    time.sleep(0.3)
    snapshot = engine.mvcc.safe_time()
    choice = tablet.compaction_choice(128, engine.history_cutoff(snapshot))
    assert choice is not None
    tablet.compact_rowsets(choice.rowset_ids, snapshot, engine.history_cutoff(snapshot))
    assert tablet.rowsets == [] and _read(engine) == {}
    engine.close()


def test_concurrent_updaters_during_merging_compactions_lose_nothing(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    keys = list(range(400))
    model = {k: 0 for k in keys}
    for part in range(4):
        chunk = keys[part::4]
        _write(engine, "insert", chunk, [0] * len(chunk), ["s"] * len(chunk))
        engine.checkpoint()
    lock = threading.Lock()
    stop = threading.Event()
    errors = []

    def updater(seed):
        rng = random.Random(seed)
        while not stop.is_set():
            chosen = sorted(rng.sample(keys, 5))
            try:
                with lock:  # one writer at a time, snapshot taken inside: the model is exact
                    txn = engine.begin()
                    current = _read_keys(txn, chosen)
                    batch = pa.RecordBatch.from_arrays(
                        [pa.array(chosen, pa.int64()), pa.array([current[k] + 1 for k in chosen])],
                        names=["1", "2"],
                    )
                    txn.update(TID, batch)
                    if rng.random() < 0.2:
                        txn.rollback()
                        continue
                    txn.commit()
                    for k in chosen:
                        model[k] += 1
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    threads = [threading.Thread(target=updater, args=(s,)) for s in range(3)]
    for thread in threads:
        thread.start()
    tablet = engine.tablet(TID)
    for round_ in range(4):
        time.sleep(0.05)
        snapshot = engine.mvcc.safe_time()
        ids = [r.rowset_id for r in tablet.rowsets]
        tablet.compact_rowsets(ids, snapshot, engine.history_cutoff(snapshot))
        engine.checkpoint()
        _write(engine, "insert", [1000 + round_], [0], ["n"])
        engine.checkpoint()
    stop.set()
    for thread in threads:
        thread.join(30)
    assert not errors
    rows = _read(engine)
    assert {k: rows[k][0] for k in keys} == model
    assert sum(model.values()) > 0
    engine.close()


def _read_keys(txn, keys):
    from storage.predicate import ColumnPredicate, ScanSpec
    from tests.unit.storage.tablet.test_delta_compaction import K, V

    spec = ScanSpec((K, V), (ColumnPredicate.in_list(K, tuple(keys)),))
    return {r["1"]: r["2"] for b in txn.scan(TID, spec) for r in b.to_pylist()}


def test_budgeted_policy_merges_overlapping_rowsets_within_the_budget():
    def info(i, lo, hi, mb):
        return RowSetInfo(i, lo.to_bytes(8, "big"), hi.to_bytes(8, "big"), mb << 20, 10, 0)

    step = 1 << 56
    infos = [
        info(1, 0, 100 * step, 40),
        info(2, 10 * step, 90 * step, 40),
        info(3, 20 * step, 80 * step, 40),
        info(4, 150 * step, 250 * step, 40),
    ]
    assert average_height(intervals(infos)) > 1.5
    choice = choose(infos, budget_mb=128)
    assert choice is not None and sorted(choice.rowset_ids) == [1, 2, 3]
    tight = choose(infos, budget_mb=80)
    assert tight is not None and len(tight.rowset_ids) == 2 and 4 not in tight.rowset_ids
    assert choose([infos[3]], budget_mb=128) is None


def test_small_rowsets_merge_together_but_a_big_one_is_not_rewritten_for_a_small_neighbour():
    def info(i, lo, hi, kib):
        return RowSetInfo(i, lo.to_bytes(8, "big"), hi.to_bytes(8, "big"), kib << 10, 10, 0)

    step = 1 << 56
    big = info(1, 0, 100 * step, 24 << 10)
    small = info(2, 101 * step, 102 * step, 512)
    assert choose([big, small], budget_mb=128) is None
    other = info(3, 103 * step, 104 * step, 512)
    choice = choose([big, small, other], budget_mb=128)
    assert choice is not None and sorted(choice.rowset_ids) == [2, 3]


def test_rowsets_whose_keys_share_a_long_prefix_still_overlap():
    # An index tablet's keys: the same escaped bytes first (a flag, then a bigint's zero
    # bytes, each escaped), so by their first eight bytes every rowset is one point.
    def key(code: int, rowid: int) -> bytes:
        escaped = (b"\x00" + code.to_bytes(8, "big")).replace(b"\x00", b"\x00\x01")
        return escaped + b"\x00\x00" + rowid.to_bytes(8, "big")

    infos = [
        RowSetInfo(i, key(10 + i, i), key(1_000_000 - i, i), 1 << 20, 30_000, 0) for i in range(12)
    ]
    assert len({k[:8] for r in infos for k in (r.min_key, r.max_key)}) == 1
    assert average_height(intervals(infos)) > 10
    choice = choose(infos, budget_mb=128)
    assert choice is not None and len(choice.rowset_ids) == 12
