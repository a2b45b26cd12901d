"""InsertSegments: a bulk insert kept as Arrow columns in the MemRowSet must behave exactly as
the same rows inserted one by one would: duplicates, MVCC, changes, rollbacks, flushes, replay."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import LockNotAvailable, UniqueViolation
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet.tablet import SEGMENT_MIN_ROWS

K, V, S = ColumnId(1), ColumnId(2), ColumnId(3)
SCHEMA = Schema(
    (
        ColumnSchema(K, "k", INT64, nullable=False),
        ColumnSchema(V, "v", INT64),
        ColumnSchema(S, "s", STRING),
    ),
    1,
)
TID = TabletId(1)
OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0)
BULK = SEGMENT_MIN_ROWS * 4


def _batch(ks: list[int], bump: int = 0) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ks, pa.int64()),
            pa.array([k * 10 + bump for k in ks], pa.int64()),
            pa.array([f"r{k}" for k in ks], pa.string()),
        ],
        names=["1", "2", "3"],
    )


def _keys(ks: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(ks, pa.int64())], names=["1"])


def _read(txn, snapshot: int | None = None, predicates=()) -> dict[int, tuple]:
    out: dict[int, tuple] = {}
    spec = ScanSpec((K, V, S), tuple(predicates), snapshot=snapshot)
    for batch in txn.scan(TID, spec):
        for row in batch.to_pylist():
            assert row["1"] not in out, "a key appears once"
            out[row["1"]] = (row["2"], row["3"])
    return out


def _expected(ks, bump: int = 0) -> dict[int, tuple]:
    return {k: (k * 10 + bump, f"r{k}") for k in ks}


@pytest.fixture
def engine(tmp_path: Path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    yield engine
    engine.close()


def tablet_keys(engine: StorageEngine, ks: list[int]) -> list[bytes]:
    return engine.tablet(TID)._encode_keys({K: pa.array(ks, pa.int64())})


def _segments(engine: StorageEngine) -> int:
    return len(engine.tablet(TID).memrowset.segments)


def _bulk(engine: StorageEngine, ks: list[int]) -> int:
    txn = engine.begin()
    assert txn.insert(TID, _batch(ks)) == len(ks)
    ts = txn.commit()
    assert ts is not None
    return int(ts)


def _hold_flush_writes(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Make a flush stop before it writes its rowset: ``writing`` is set when it gets there,
    and it goes on once ``release`` is."""
    from storage.tablet import flush as flush_module

    writing, release = threading.Event(), threading.Event()
    original = flush_module.write_rowset

    def slow_write(*args, **kwargs):
        writing.set()
        assert release.wait(30)
        return original(*args, **kwargs)

    monkeypatch.setattr(flush_module, "write_rowset", slow_write)
    return writing, release


def test_a_bulk_insert_is_one_segment_and_reads_like_rows(engine):
    ks = list(range(BULK, 0, -1))  # out of key order: the segment sorts it
    _bulk(engine, ks)
    assert _segments(engine) == 1
    assert len(engine.tablet(TID).memrowset._rows) == 0, "no row objects"
    reader = engine.begin(read_only=True)
    assert _read(reader) == _expected(ks)
    big = ColumnPredicate.range(V, 500, 1000)
    assert _read(reader, None, [big]) == {
        k: v for k, v in _expected(ks).items() if 500 <= v[0] < 1000
    }
    # Key ranges (bounds by bisection of the sorted keys) and point reads.
    spec = ScanSpec((K, V), (ColumnPredicate.range(K, 10, 20),))
    assert sorted(r["1"] for b in reader.scan(TID, spec) for r in b.to_pylist()) == list(
        range(10, 20)
    )
    tablet = engine.tablet(TID)
    key_range = spec.key_range(SCHEMA)
    mrs = tablet.memrowset
    found = mrs.read_range(key_range.lower, key_range.upper, reader.snapshot, None, 64)
    assert found == [(k, k * 10, f"r{k}") for k in range(10, 20)]
    assert mrs.read_range(key_range.lower, None, reader.snapshot, None, 64) is None, "too many"
    keys = tablet._encode_keys({K: pa.array([3, 7, BULK + 5], pa.int64())})
    batch = reader.read_keys(TID, keys, (K, S))
    assert batch.to_pylist() == [{"1": 3, "3": "r3"}, {"1": 7, "3": "r7"}]
    assert engine.tablet(TID).memrowset_rows == BULK


@pytest.mark.parametrize("where", ["batch", "segment", "map", "disk"])
def test_duplicates_are_23505_with_the_key_and_leave_nothing(engine, where):
    ks = list(range(BULK))
    if where == "segment":
        _bulk(engine, ks)
    elif where == "map":
        _bulk(engine, [5])
    elif where == "disk":
        _bulk(engine, ks)
        engine.checkpoint()
        assert engine.tablet(TID).rowsets
    before = _read(engine.begin(read_only=True))
    txn = engine.begin()
    batch = _batch([*ks, 5] if where == "batch" else list(range(BULK, 2 * BULK)) + [5])
    with pytest.raises(UniqueViolation) as raised:
        txn.insert(TID, batch)
    assert raised.value.sqlstate == "23505"
    assert raised.value.detail == "Key (k)=(5) already exists."
    txn.rollback()
    assert _read(engine.begin(read_only=True)) == before


def test_an_uncommitted_segment_blocks_another_writer_of_its_keys(engine):
    owner = engine.begin()
    owner.insert(TID, _batch(list(range(BULK))))
    other = engine.begin()
    other.lock_timeout_ms = 50
    with pytest.raises(LockNotAvailable):
        other.insert(TID, _batch([BULK + 1, 7]))
    other = engine.begin()
    other.lock_timeout_ms = 50
    with pytest.raises(LockNotAvailable):
        other.update(TID, _batch([7], bump=1))
    owner.rollback()
    other = engine.begin()
    assert other.insert(TID, _batch([7])) == 1
    other.commit()
    assert _read(engine.begin(read_only=True)) == _expected([7])


def test_readers_see_a_segment_at_its_commit_and_not_before(engine):
    first = _bulk(engine, list(range(BULK)))
    writer = engine.begin()
    writer.insert(TID, _batch(list(range(BULK, 2 * BULK))))
    old_reader = engine.begin(read_only=True)
    assert _read(old_reader) == _expected(range(BULK)), "uncommitted: invisible to others"
    assert _read(writer) == _expected(range(2 * BULK)), "its own writer sees it"
    second = int(writer.commit())
    assert _read(old_reader) == _expected(range(BULK)), "committed after its snapshot"
    assert _read(engine.begin(read_only=True)) == _expected(range(2 * BULK))
    assert _read(engine.begin(read_only=True), first - 1) == {}
    assert _read(engine.begin(read_only=True), second - 1) == _expected(range(BULK))


@pytest.mark.parametrize("own", [True, False])
def test_updates_and_deletes_of_bulk_rows_move_them_to_the_map(engine, own):
    ks = list(range(BULK))
    txn = engine.begin()
    txn.insert(TID, _batch(ks))
    if not own:
        inserted = int(txn.commit())
        txn = engine.begin()
    assert txn.update(TID, _batch([3, 4], bump=1)) == 2
    assert txn.delete(TID, _keys([5, 6])) == 2
    assert txn.delete(TID, _keys([5])) == 0, "already deleted"
    assert txn.insert(TID, _batch([6], bump=2)) == 1, "a REINSERT in the map"
    assert len(engine.tablet(TID).memrowset._rows) == 4
    expected = _expected(ks)
    expected.update(_expected([3, 4], bump=1))
    expected.update(_expected([6], bump=2))
    del expected[5]
    assert _read(txn) == expected
    if not own:
        assert _read(engine.begin(read_only=True)) == _expected(ks), "others: the old versions"
    changed = int(txn.commit())
    assert _read(engine.begin(read_only=True)) == expected
    assert _read(engine.begin(read_only=True), changed - 1) == ({} if own else _expected(ks))
    if not own:
        assert _read(engine.begin(read_only=True), inserted) == _expected(ks)
    engine.checkpoint()
    assert _read(engine.begin(read_only=True)) == expected
    assert _read(engine.begin(read_only=True), changed - 1) == ({} if own else _expected(ks))


def test_rollback_and_savepoint_rollback_drop_segments_whole(engine):
    txn = engine.begin()
    txn.insert(TID, _batch(list(range(BULK))))
    txn.savepoint("a")
    txn.insert(TID, _batch(list(range(BULK, 2 * BULK))))
    txn.update(TID, _batch([BULK + 1, 2], bump=1))
    txn.delete(TID, _keys([BULK + 2]))
    assert _segments(engine) == 2
    txn.rollback_to("a")
    assert _segments(engine) == 1
    # The update of key 2 (a row of the first segment) came after the savepoint: undone; the
    # row it moved to the map stays there, as inserted.
    assert _read(txn) == _expected(range(BULK))
    rows = engine.tablet(TID).memrowset._rows
    assert (
        list(rows) == tablet_keys(engine, [2]) and not rows[tablet_keys(engine, [2])[0]].mutations
    )
    txn.insert(TID, _batch([BULK + 1]))
    txn.commit()
    assert _read(engine.begin(read_only=True)) == _expected([*range(BULK), BULK + 1])

    txn = engine.begin()
    txn.insert(TID, _batch(list(range(5 * BULK, 6 * BULK))))
    txn.delete(TID, _keys([5 * BULK + 1, 3]))
    txn.rollback()
    assert _segments(engine) == 1
    assert _read(engine.begin(read_only=True)) == _expected([*range(BULK), BULK + 1])


def test_a_flush_writes_segments_and_map_rows_as_one_sorted_rowset(engine):
    first = _bulk(engine, list(range(0, 3 * BULK, 3)))
    second = _bulk(engine, list(range(1, 3 * BULK, 3)))
    txn = engine.begin()
    txn.insert(TID, _batch([2, 5, 8]))  # small: map rows
    txn.update(TID, _batch([0, 1], bump=7))
    txn.delete(TID, _keys([3, 4]))
    third = int(txn.commit())
    pending = engine.begin()  # uncommitted at the flush: kept in memory
    pending.insert(TID, _batch(list(range(10 * BULK, 11 * BULK))))
    expected = _read(engine.begin(read_only=True))
    history = {ts: _read(engine.begin(read_only=True), ts) for ts in (first, second, third - 1)}
    engine.checkpoint()
    tablet = engine.tablet(TID)
    assert len(tablet.rowsets) == 1 and tablet.rowsets[0].rows == len(expected) + 2
    assert _segments(engine) == 1, "the uncommitted segment stays in memory"
    assert _read(engine.begin(read_only=True)) == expected
    for ts, state in history.items():
        assert _read(engine.begin(read_only=True), ts) == state
    pending.update(TID, _batch([10 * BULK], bump=1))
    pending.commit()
    expected.update(_expected(range(10 * BULK, 11 * BULK)))
    expected.update(_expected([10 * BULK], bump=1))
    assert _read(engine.begin(read_only=True)) == expected
    engine.checkpoint()
    assert _read(engine.begin(read_only=True)) == expected


def test_a_row_changed_during_a_flush_keeps_its_change(engine, monkeypatch):
    _bulk(engine, list(range(BULK)))
    pending = engine.begin()
    pending.insert(TID, _batch(list(range(BULK, 2 * BULK))))
    writing, release = _hold_flush_writes(monkeypatch)
    flusher = threading.Thread(target=engine.checkpoint)
    flusher.start()
    assert writing.wait(30)
    txn = engine.begin()
    txn.update(TID, _batch([1], bump=5))  # a flushed segment's row
    txn.commit()
    pending.update(TID, _batch([BULK + 1], bump=5))  # a kept segment's row
    reader = engine.begin(read_only=True)
    release.set()
    flusher.join(30)
    pending.commit()
    expected = _expected(range(2 * BULK))
    expected.update(_expected([1, BULK + 1], bump=5))
    assert _read(engine.begin(read_only=True)) == expected
    assert _read(reader) == {**_expected(range(BULK)), **_expected([1], bump=5)}


def test_schema_changes_conform_segments(engine):
    _bulk(engine, list(range(BULK)))
    tablet = engine.tablet(TID)
    extra = ColumnSchema(ColumnId(4), "x", INT64, read_default=42)
    tablet.alter_schema(Schema((*SCHEMA.columns[:2], extra), 1))
    spec = ScanSpec((K, V, ColumnId(4)))
    rows = [r for b in engine.begin(read_only=True).scan(TID, spec) for r in b.to_pylist()]
    assert len(rows) == BULK and all(r["4"] == 42 and r["2"] == r["1"] * 10 for r in rows)
    txn = engine.begin()
    txn.update(TID, pa.RecordBatch.from_arrays(
        [pa.array([3], pa.int64()), pa.array([7], pa.int64())], names=["1", "4"]
    ))  # fmt: skip
    txn.commit()
    engine.checkpoint()
    rows = {r["1"]: r for b in engine.begin(read_only=True).scan(TID, spec) for r in b.to_pylist()}
    assert rows[3]["4"] == 7 and rows[4]["4"] == 42 and len(rows) == BULK


def test_wal_replay_rebuilds_the_segments(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    _bulk(engine, list(range(BULK)))
    txn = engine.begin()
    txn.update(TID, _batch([2], bump=1))
    txn.commit()
    lost = engine.begin()
    lost.insert(TID, _batch(list(range(BULK, 2 * BULK))))  # never committed
    expected = _read(engine.begin(read_only=True))
    engine.close()
    engine = StorageEngine.open(tmp_path, OPTIONS)
    try:
        assert _segments(engine) == 1
        assert _read(engine.begin(read_only=True)) == expected
    finally:
        engine.close()


def test_a_rollback_after_an_alter_in_the_same_transaction_drops_the_altered_segment(engine):
    txn = engine.begin()
    txn.insert(TID, _batch(list(range(BULK))))
    txn.savepoint("a")
    txn.insert(TID, _batch(list(range(BULK, 2 * BULK))))
    tablet = engine.tablet(TID)
    extra = ColumnSchema(ColumnId(4), "x", INT64, read_default=1)
    tablet.alter_schema(Schema((*SCHEMA.columns, extra), 1))  # copies the segments
    txn.rollback_to("a")
    assert _read(txn) == _expected(range(BULK))
    txn.rollback()
    assert _segments(engine) == 0
    assert _read(engine.begin(read_only=True)) == {}


def test_a_scan_sees_each_row_once_while_writers_move_rows_out_of_segments(tmp_path):
    engine = StorageEngine.open(tmp_path, dataclasses.replace(OPTIONS, scan_batch_rows=64))
    try:
        engine.create_tablet(TID, SCHEMA)
        _bulk(engine, list(range(BULK)))
        txn = engine.begin()
        txn.update(TID, _batch(list(range(0, BULK, 3)), bump=1))  # map rows: several batches
        txn.commit()
        expected = _read(engine.begin(read_only=True))
        reader = engine.begin(read_only=True)
        scan = reader.scan(TID, ScanSpec((K, V, S)))
        seen: dict[int, tuple] = {}
        first = next(scan)
        for row in first.to_pylist():
            seen[row["1"]] = (row["2"], row["3"])
        writer = engine.begin()  # moves rows on both sides of the scan's position
        writer.update(TID, _batch(list(range(1, BULK, 7)), bump=3))
        writer.delete(TID, _keys(list(range(2, BULK, 11))))
        writer.commit()
        for batch in scan:
            for row in batch.to_pylist():
                assert row["1"] not in seen, "a key appears once"
                seen[row["1"]] = (row["2"], row["3"])
        assert seen == expected
    finally:
        engine.close()


def test_a_flush_of_disjoint_segments_alone_writes_them_in_key_order(engine):
    third = _bulk(engine, list(range(2 * BULK, 3 * BULK)))
    first = _bulk(engine, list(range(BULK)))
    _bulk(engine, list(range(BULK, 2 * BULK)))
    engine.checkpoint()
    rowset = engine.tablet(TID).rowsets[0]
    assert rowset.rows == 3 * BULK
    spec = ScanSpec((K,))
    keys = [r["1"] for b in engine.begin(read_only=True).scan(TID, spec) for r in b.to_pylist()]
    assert keys == list(range(3 * BULK)), "the rowset is in key order"
    assert _read(engine.begin(read_only=True), first) == _expected(
        [*range(BULK), *range(2 * BULK, 3 * BULK)]
    )
    assert _read(engine.begin(read_only=True), third) == _expected(range(2 * BULK, 3 * BULK))
    reader = engine.begin(read_only=True)
    found = reader.read_keys(TID, tablet_keys(engine, [0, BULK + 1, 3 * BULK - 1]), (K, V))
    assert found.to_pylist() == [{"1": k, "2": k * 10} for k in (0, BULK + 1, 3 * BULK - 1)]


@pytest.mark.parametrize("kept_by", ["insert", "update"])
def test_a_scan_begun_during_a_flush_sees_a_row_the_flush_kept_once(engine, monkeypatch, kept_by):
    """A row whose commit was in flight at the freeze goes back to the live MemRowSet at the
    install; a scan that captured both the live and the frozen one must read it from one."""
    _bulk(engine, list(range(BULK)))
    pending = engine.begin()
    if kept_by == "insert":
        pending.insert(TID, _batch([BULK + 1, BULK + 2]))  # map rows
    else:
        pending.update(TID, _batch([3, 4], bump=7))  # moves segment rows to the map
    writing, release = _hold_flush_writes(monkeypatch)
    flusher = threading.Thread(target=engine.checkpoint)
    flusher.start()
    assert writing.wait(30)
    pending.commit()
    reader = engine.begin(read_only=True)
    scan = reader.scan(TID, ScanSpec((K, V, S)))  # captures the live and the frozen MemRowSet
    release.set()
    flusher.join(30)
    keys = [row["1"] for batch in scan for row in batch.to_pylist()]
    assert len(keys) == len(set(keys)), "a key appears once"
    assert set(keys) == set(_read(engine.begin(read_only=True)))
