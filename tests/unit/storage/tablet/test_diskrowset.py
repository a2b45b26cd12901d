"""DiskRowSets through the engine: finding keys, deltas, history, limits, statistics, crash debris."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import ProgramLimitExceeded, SnapshotTooOld, UniqueViolation
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.scan_stats import ScanStats
from storage.schema import ColumnSchema, Schema

K, C, N = ColumnId(1), ColumnId(2), ColumnId(3)
SCHEMA = Schema(
    (
        ColumnSchema(K, "k", INT64, nullable=False),
        ColumnSchema(C, "color", STRING),
        ColumnSchema(N, "n", INT64),
    ),
    1,
)
TID = TabletId(4)


def _rows(ids, color="red", n=0) -> pa.RecordBatch:
    ids = list(ids)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array([color] * len(ids)),
            pa.array([n] * len(ids), pa.int64()),
        ],
        names=["1", "2", "3"],
    )


def _keys(ids) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(list(ids), pa.int64())], names=["1"])


def _scan(engine, spec=None, stats=None) -> list[tuple]:
    txn = engine.begin(read_only=True)
    spec = spec or ScanSpec((K, C, N))
    return sorted(
        tuple(r.values()) for b in txn.scan(TID, spec, stats=stats) for r in b.to_pylist()
    )


@pytest.fixture
def engine(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, maintenance_threads=0))
    engine.create_tablet(TID, SCHEMA)
    yield engine
    engine.close()


def _commit(engine, op, batch, **kwargs):
    txn = engine.begin()
    count = getattr(txn, op)(TID, batch, **kwargs)
    txn.commit()
    return count


def test_live_key_in_a_diskrowset_is_23505_and_a_deleted_one_reinserts(engine):
    _commit(engine, "insert", _rows(range(100)))
    engine.checkpoint()
    assert engine.tablet(TID).rowset_stats()["disk_rows"] == 100
    txn = engine.begin()
    with pytest.raises(UniqueViolation):
        txn.insert(TID, _rows([500, 50]))
    txn.rollback()
    assert _commit(engine, "delete", _keys([50])) == 1
    assert _commit(engine, "delete", _keys([50])) == 0
    assert _commit(engine, "insert", _rows([50], "again", 7)) == 1
    assert (50, "again", 7) in _scan(engine)
    assert len(_scan(engine)) == 100
    engine.checkpoint()
    assert (50, "again", 7) in _scan(engine)
    stats = engine.tablet(TID).rowset_stats()["rowsets"][0]
    assert stats["redo_delta_files"] == 1 and stats["undo_delta_files"] == 1


def test_rollback_of_a_write_to_a_flushed_row_is_undone(engine):
    _commit(engine, "insert", _rows(range(10)))
    engine.checkpoint()
    txn = engine.begin()
    txn.update(TID, _rows([3], "blue"))
    txn.delete(TID, _keys([4]))
    assert (3, "blue", 0) in [
        tuple(r.values()) for b in txn.scan(TID, ScanSpec((K, C, N))) for r in b.to_pylist()
    ]
    assert (3, "red", 0) in _scan(engine)
    txn.rollback()
    assert _scan(engine) == [(i, "red", 0) for i in range(10)]


def test_history_reads_through_undo_and_redo_files(engine):
    txn = engine.begin()
    txn.insert(TID, _rows(range(5)))
    insert_ts = txn.commit()
    ts_inserted = engine.mvcc.safe_time()
    _commit(engine, "update", _rows([1], "blue"))
    ts_updated = engine.mvcc.safe_time()
    engine.checkpoint()
    _commit(engine, "delete", _keys([2]))
    ts_deleted = engine.mvcc.safe_time()
    engine.checkpoint()
    _commit(engine, "update", _rows([0], "green"))

    def at(ts):
        return _scan(engine, ScanSpec((K, C), snapshot=int(ts)))

    assert at(ts_inserted) == [(i, "red") for i in range(5)]
    assert at(ts_updated) == [(0, "red"), (1, "blue"), (2, "red"), (3, "red"), (4, "red")]
    assert at(ts_deleted) == [(0, "red"), (1, "blue"), (3, "red"), (4, "red")]
    assert _scan(engine, ScanSpec((K, C)))[0] == (0, "green")
    assert at(insert_ts - 1) == []


def test_snapshot_older_than_history_max_age_is_72000(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, history_max_age_s=0.05))
    engine.create_tablet(TID, SCHEMA)
    _commit(engine, "insert", _rows(range(3)))
    old = engine.mvcc.safe_time()
    time.sleep(0.1)
    with pytest.raises(SnapshotTooOld) as info:
        _scan(engine, ScanSpec((K,), snapshot=int(old)))
    assert info.value.sqlstate == "72000"
    engine.close()


def test_oversized_cells_and_keys_are_54000_and_write_nothing(engine):
    big = "x" * (64 * 1024 + 1)
    txn = engine.begin()
    with pytest.raises(ProgramLimitExceeded):
        txn.insert(TID, _rows([1, 2], big))
    txn.rollback()
    assert _scan(engine) == []
    _commit(engine, "insert", _rows([1], "x" * (64 * 1024)))
    txn = engine.begin()
    with pytest.raises(ProgramLimitExceeded):
        txn.update(TID, _rows([1], big))
    txn.rollback()
    schema = Schema((ColumnSchema(C, "s", STRING, nullable=False),), 1)
    engine.create_tablet(TabletId(5), schema)
    txn = engine.begin()
    with pytest.raises(ProgramLimitExceeded):
        txn.insert(TabletId(5), pa.RecordBatch.from_arrays([pa.array(["k" * 20_000])], names=["2"]))
    txn.rollback()


def test_count_over_dictionary_column_does_not_materialise_strings(engine):
    colors = ["red", "green", "blue"]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(range(30_000), pa.int64()),
            pa.array([colors[i % 3] for i in range(30_000)]),
            pa.array(range(30_000), pa.int64()),
        ],
        names=["1", "2", "3"],
    )
    _commit(engine, "insert", batch)
    engine.checkpoint()
    stats = ScanStats()
    txn = engine.begin(read_only=True)
    spec = ScanSpec((), (ColumnPredicate.in_list(C, ["red", "blue"]),))
    assert sum(b.num_rows for b in txn.scan(TID, spec, stats=stats)) == 20_000
    assert stats.strings_materialised == 0
    assert stats.predicates_on_encoded >= 1 and stats.predicates_on_decoded == 0


def test_min_max_skips_blocks_and_key_bounds_skip_rowsets(engine):
    _commit(engine, "insert", _rows(range(200_000)))
    engine.checkpoint()
    stats = ScanStats()
    spec = ScanSpec((K,), (ColumnPredicate.range(K, 10, 20),))
    assert _scan(engine, spec, stats) == [(i,) for i in range(10, 20)]
    assert stats.rowsets_read == 1 and stats.blocks_read <= 2
    stats = ScanStats()
    spec = ScanSpec((K,), (ColumnPredicate.equality(K, 10**9),))
    assert _scan(engine, spec, stats) == []
    assert stats.rowsets_skipped == 1 and stats.blocks_read == 0
    stats = ScanStats()
    txn = engine.begin(read_only=True)
    spec = ScanSpec((K,), (ColumnPredicate.range(K, 100_000),), limit=5)
    assert sum(b.num_rows for b in txn.scan(TID, spec, stats=stats)) == 5


def test_memrowset_passing_the_threshold_flushes(tmp_path):
    engine = StorageEngine.open(
        tmp_path, StorageOptions(fsync=False, flush_threshold_bytes=100_000)
    )
    engine.create_tablet(TID, SCHEMA)
    for start in range(0, 5000, 1000):
        _commit(engine, "insert", _rows(range(start, start + 1000)))
        # The maintenance manager flushes in the background, not inside the commit.
        assert engine.maintenance.wait_idle(30)
    stats = engine.tablet(TID).rowset_stats()
    flushes = [r for r in engine.maintenance_status() if r.kind == "FlushOp" and r.state == "done"]
    # Each flush made a DiskRowSet; a merging compaction may have merged them since.
    assert len(flushes) >= 2 and stats["rowsets"]
    assert stats["disk_rows"] + stats["memrowset_rows"] == 5000
    assert len(_scan(engine)) == 5000
    engine.close()


def test_debris_of_a_crashed_flush_is_removed_on_open(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    engine.create_tablet(TID, SCHEMA)
    _commit(engine, "insert", _rows(range(10)))
    engine.checkpoint()
    engine.close()
    tablet_dir = tmp_path / "tablets" / str(TID)
    (tablet_dir / "rowset-7.tmp").mkdir()
    (tablet_dir / "rowset-8").mkdir()
    (tablet_dir / "rowset-1" / "redo-9.arrow").write_bytes(b"junk")
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    assert sorted(p.name for p in tablet_dir.iterdir()) == ["metadata.json", "rowset-1"]
    assert not (tablet_dir / "rowset-1" / "redo-9.arrow").exists()
    assert len(_scan(engine)) == 10
    engine.close()


def test_recent_scans_keep_each_scans_statistics(engine):
    _commit(engine, "insert", _rows(range(10)))
    engine.checkpoint()
    spec = ScanSpec((K,), (ColumnPredicate.equality(C, "red"),))
    assert len(_scan(engine, spec)) == 10
    tablet_id, seen_spec, stats = engine.recent_scans[-1]
    assert tablet_id == TID and seen_spec == spec
    assert (
        stats.rowsets_read == 1 and stats.rows_returned == 10 and stats.predicates_on_encoded == 1
    )


def test_batched_writes_find_their_rows_across_rowsets(engine):
    """Batches large enough for the batched key probe: keys spread over four DiskRowSets with
    overlapping bounds, the MemRowSet, and nowhere."""
    for start in range(4):
        _commit(engine, "insert", _rows(range(start, 400, 4)))
        engine.checkpoint()
    _commit(engine, "insert", _rows(range(1000, 1010)))
    assert len(engine.tablet(TID).rowsets) == 4
    with pytest.raises(UniqueViolation):
        _commit(engine, "insert", _rows([*range(2000, 2020), 397]))
    assert _commit(engine, "insert", _rows(range(400, 430))) == 30
    touched = [*range(0, 400, 7), *range(1000, 1010), 5000, 5001]
    assert _commit(engine, "update", _rows(touched, color="blue", n=1)) == len(touched) - 2
    gone = [*range(3, 400, 9), 1001, 9999]
    assert _commit(engine, "delete", _keys(gone)) == len(gone) - 1
    expected = {k: ("red", 0) for k in [*range(400), *range(1000, 1010), *range(400, 430)]}
    expected.update({k: ("blue", 1) for k in touched if k in expected})
    for k in gone:
        expected.pop(k, None)
    assert _scan(engine) == sorted((k, c, n) for k, (c, n) in expected.items())


def test_blocks_dense_with_deltas_read_as_row_by_row_resolution_does(engine, monkeypatch):
    """A block range with many delta records is decoded whole and patched per column; it
    answers current, historical, filtered and own-write reads as resolving only the touched
    rows does."""
    from storage.tablet import diskrowset

    _commit(engine, "insert", _rows(range(6000), "red", 1))
    engine.checkpoint()
    marks = [engine.mvcc.safe_time()]
    _commit(engine, "update", _rows(range(0, 6000, 3), "blue", 2))
    _commit(engine, "delete", _keys(range(1, 6000, 7)))
    marks.append(engine.mvcc.safe_time())
    engine.checkpoint()  # REDO file
    engine.tablet(TID).compact_deltas(
        engine.tablet(TID).rowsets[0].rowset_id, major=True, history_cutoff=0
    )  # UNDO records for the first changes
    _commit(engine, "update", _rows(range(0, 6000, 5), "green", 3))
    _commit(engine, "insert", _rows(range(1, 3000, 7), "back", 4))
    marks.append(engine.mvcc.safe_time())
    engine.checkpoint()
    _commit(engine, "update", _rows(range(0, 6000, 4), "dms", 5))  # DeltaMemStore
    own = engine.begin()
    own.update(TID, _rows(range(2, 6000, 11), "mine", 6))
    specs = [
        ScanSpec((K, C, N)),
        ScanSpec((N,)),
        ScanSpec((), (ColumnPredicate.equality(C, "green"),)),
        ScanSpec((K, C), (ColumnPredicate.equality(N, 2),)),
        ScanSpec((K, N), (ColumnPredicate.range(K, 1000, 4500),)),
        *(ScanSpec((K, C, N), snapshot=int(ts)) for ts in marks),
    ]

    def reads() -> list[list[tuple]]:
        out = [_scan(engine, spec) for spec in specs]
        out.append(
            sorted(tuple(r.values()) for b in own.scan(TID, specs[0]) for r in b.to_pylist())
        )
        return out

    calls = []
    whole = diskrowset.DiskRowSet._dense_block
    monkeypatch.setattr(
        diskrowset.DiskRowSet,
        "_dense_block",
        lambda self, *a: calls.append(1) or whole(self, *a),
    )
    dense = reads()
    assert len(calls) >= len(dense) - 1  # all but the oldest snapshot's read
    monkeypatch.setattr(diskrowset, "_DENSE_SHARE", 0)
    before = len(calls)
    assert reads() == dense
    assert len(calls) == before
    assert dense[0] != dense[-2] and len({len(r) for r in dense}) > 2
    own.rollback()
