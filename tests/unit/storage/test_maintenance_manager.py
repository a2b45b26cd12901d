"""The maintenance manager: best op first, background flushes and compactions, no waiting on I/O."""

from __future__ import annotations

import threading
import time

import pyarrow as pa

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.maintenance_manager import MaintenanceManager, MaintenanceOp, OpResult, OpStats
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet import flush as flush_module

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


class CountingOp(MaintenanceOp):
    kind = "CountingOp"

    def __init__(self, tablet_id: int, score: float, runs: list[str], runnable: bool = True):
        super().__init__(TabletId(tablet_id))
        self.score = score
        self.runs = runs
        self.runnable = runnable

    def stats(self) -> OpStats:
        return OpStats(self.runnable, self.score, f"score {self.score}")

    def perform(self) -> OpResult:
        self.runs.append(self.name)
        self.score = 0.0
        return OpResult(1, 2, "ran")


def test_the_best_runnable_op_runs_first_and_is_recorded():
    runs: list[str] = []
    ops = [
        CountingOp(1, 0.5, runs),
        CountingOp(2, 3.0, runs),
        CountingOp(3, 9.0, runs, runnable=False),
        CountingOp(4, 0.0, runs),
    ]
    manager = MaintenanceManager(lambda: ops, threads=0, polling_interval_ms=10)
    assert manager.run_once() and manager.run_once() and not manager.run_once()
    assert runs == ["CountingOp(2)", "CountingOp(1)"]
    states = [(r.op, r.state) for r in manager.status()]
    assert ("CountingOp(3)", "registered") in states
    done = [r for r in manager.status() if r.state == "done"]
    assert [r.op for r in done] == runs and done[0].bytes_written == 2
    assert done[0].duration_s is not None


def _insert(engine, keys):
    txn = engine.begin()
    ks = pa.array(keys, pa.int64())
    txn.insert(
        TID,
        pa.RecordBatch.from_arrays(
            [ks, ks, pa.array([f"s{k}" for k in keys], pa.string())], names=["1", "2", "3"]
        ),
    )
    return txn.commit()


def _update(engine, keys, delta):
    txn = engine.begin()
    ks = pa.array(keys, pa.int64())
    txn.update(
        TID, pa.RecordBatch.from_arrays([ks, pa.array([k + delta for k in keys])], names=["1", "2"])
    )
    return txn.commit()


def _read(engine):
    txn = engine.begin(read_only=True)
    rows = {r["1"]: r["2"] for b in txn.scan(TID, ScanSpec((K, V))) for r in b.to_pylist()}
    txn.rollback()
    return rows


def test_a_commit_completes_while_a_flush_is_writing(tmp_path, monkeypatch):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, maintenance_threads=0))
    engine.create_tablet(TID, SCHEMA)
    _insert(engine, list(range(20_000)))
    writing, release = threading.Event(), threading.Event()
    original = flush_module.write_rowset

    def slow_write(*args, **kwargs):
        writing.set()
        assert release.wait(30), "the test releases the flush"
        return original(*args, **kwargs)

    monkeypatch.setattr(flush_module, "write_rowset", slow_write)
    flusher = threading.Thread(target=engine.checkpoint)
    flusher.start()
    assert writing.wait(30)
    done = threading.Event()

    def writer():
        _insert(engine, [50_000])
        _update(engine, [5, 50_000], 1000)
        assert _read(engine)[5] == 1005
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    finished = done.wait(10)
    assert flusher.is_alive(), "the flush was still writing while the commits ran"
    release.set()
    flusher.join(30)
    thread.join(30)
    assert finished, "commits and reads did not wait for the flush's I/O"
    rows = _read(engine)
    assert len(rows) == 20_001 and rows[5] == 1005 and rows[50_000] == 51_000
    assert len(engine.tablet(TID).rowsets) == 1
    engine.close()
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, maintenance_threads=0))
    assert _read(engine) == rows
    engine.close()


def test_rows_a_flush_leaves_in_memory_stay_counted_toward_the_size_threshold(tmp_path):
    """A flush that freezes while a commit is in flight keeps those rows: they must still
    count, or the size threshold never flushes them (seen as a background flush that never
    came on a loaded machine)."""
    options = StorageOptions(fsync=False, maintenance_threads=0, flush_threshold_bytes=64 * 1024)
    engine = StorageEngine.open(tmp_path, options)
    engine.create_tablet(TID, SCHEMA)
    keys = pa.array(range(5_000), pa.int64())
    txn = engine.begin()
    strings = pa.array([f"s{k}" for k in range(5_000)], pa.string())
    txn.insert(TID, pa.RecordBatch.from_arrays([keys, keys, strings], names=["1", "2", "3"]))
    tablet = engine.tablet(TID)
    held = tablet.memrowset_bytes
    assert held >= options.flush_threshold_bytes
    assert not tablet.flush(engine.mvcc.safe_time(), 0)
    assert tablet.memrowset_bytes == held
    assert tablet.memrowset_rows == 5_000 and not tablet.rowsets
    txn.commit()  # with no maintenance thread, a commit past the threshold flushes inline
    assert tablet.rowsets and tablet.memrowset_rows == 0
    engine.close()


def test_background_flush_and_delta_compactions_run_without_checkpoint(tmp_path):
    options = StorageOptions(
        fsync=False,
        flush_threshold_bytes=256 * 1024,
        maintenance_polling_interval_ms=20,
        delta_compaction_min_bytes=1,
        minor_delta_compaction_min_files=2,
    )
    engine = StorageEngine.open(tmp_path, options)
    engine.create_tablet(TID, SCHEMA)
    keys = list(range(5_000))
    _insert(engine, keys)
    deadline = time.monotonic() + 30
    while not engine.tablet(TID).rowsets and time.monotonic() < deadline:
        time.sleep(0.02)
    assert engine.tablet(TID).rowsets, "the MemRowSet was flushed in the background"
    for round_ in range(3):
        _update(engine, keys[round_::3], round_ + 1)
        engine.checkpoint()
    assert engine.maintenance.wait_idle(30)
    tablet = engine.tablet(TID)
    assert all(len(r.redo) == 0 for r in tablet.rowsets)
    kinds = {r.kind for r in engine.maintenance_status() if r.state == "done"}
    assert {"FlushOp", "MajorDeltaCompactionOp"} <= kinds
    expected = {k: k + (k % 3) + 1 for k in keys}
    assert _read(engine) == expected
    engine.close()
    engine = StorageEngine.open(tmp_path, options)
    assert _read(engine) == expected
    engine.close()


def test_totals_count_each_kind_of_op_for_metrics():
    runs: list[str] = []
    ops = [CountingOp(1, 2.0, runs), CountingOp(2, 1.0, runs)]
    manager = MaintenanceManager(lambda: ops, threads=0, polling_interval_ms=10)
    assert manager.run_once() and manager.run_once()
    totals = manager.totals()["CountingOp"]
    assert totals.runs == 2 and totals.failures == 0
    assert totals.bytes_read == 2 and totals.bytes_written == 4
    assert sum(totals.buckets) == 2 and totals.buckets[0] == 2  # both well under 10 ms


def test_without_workers_status_scores_the_ops_when_asked():
    runs: list[str] = []
    manager = MaintenanceManager(
        lambda: [CountingOp(7, 4.0, runs)], threads=0, polling_interval_ms=10
    )
    [record] = manager.status()
    assert (record.op, record.state, record.score) == ("CountingOp(7)", "registered", 4.0)


def test_flush_outranks_compactions_once_unflushed_rows_pass_the_row_threshold(tmp_path):
    from storage.maintenance_ops import FlushOp

    options = StorageOptions(fsync=False, maintenance_threads=0, flush_threshold_rows=1_000)
    engine = StorageEngine.open(tmp_path, options)
    engine.create_tablet(TID, SCHEMA)
    flush = next(op for op in engine._maintenance_ops() if isinstance(op, FlushOp))
    _insert(engine, list(range(10_000, 12_000)))  # one bulk insert: a segment, read as columns
    assert flush.stats().score < 1.0, "segment rows count by their bytes only"
    for start in range(0, 999, 100):  # small inserts: map rows, read one by one
        _insert(engine, list(range(start, min(start + 100, 999))))
    assert flush.stats().score < 1.0
    _insert(engine, [5_000])
    stats = flush.stats()
    assert stats.runnable and stats.score > 100.0 and "row threshold" in stats.reason
    engine.checkpoint()
    _update(engine, [*range(999), 5_000], 1)
    assert flush.stats().score > 100.0, "DeltaMemStore rows count too"
    engine.checkpoint()
    _update(engine, list(range(10_000, 11_001)), 2)
    assert flush.stats().score > 100.0, "flushed segment rows changed: DeltaMemStore rows"
    engine.close()


def test_rows_kept_for_an_open_transaction_do_not_make_the_next_flush_due(tmp_path):
    """A long transaction's rows (Spark's JDBC writer commits a task's rows at its end) are
    kept by every flush; counted in full they made the next flush due at once, each one
    re-filing every kept row: quadratic.  While the transaction is open, a flush is due
    again only once as many rows again came since; its commit makes them due at once."""
    from storage.maintenance_ops import FlushOp

    options = StorageOptions(fsync=False, maintenance_threads=0, flush_threshold_rows=1_000)
    engine = StorageEngine.open(tmp_path, options)
    engine.create_tablet(TID, SCHEMA)
    flush = next(op for op in engine._maintenance_ops() if isinstance(op, FlushOp))
    tablet = engine.tablet(TID)
    txn = engine.begin()

    def insert(keys):
        ks = pa.array(keys, pa.int64())
        strings = pa.array([f"s{k}" for k in keys], pa.string())
        txn.insert(TID, pa.RecordBatch.from_arrays([ks, ks, strings], names=["1", "2", "3"]))

    for start in range(0, 2_000, 100):  # small inserts: map rows
        insert(list(range(start, start + 100)))
    assert flush.stats().score > 100.0
    flush.perform()
    assert tablet.memrowset_rows == 2_000 and not tablet.rowsets, "kept: the insert is open"
    assert flush.stats().score < 100.0, "the kept rows alone make no flush due"
    for start in range(2_000, 3_900, 100):
        insert(list(range(start, start + 100)))
    assert flush.stats().score < 100.0, "fewer new rows than were kept"
    insert(list(range(3_900, 4_000)))
    assert flush.stats().score > 100.0
    flush.perform()
    assert tablet.memrowset_rows == 4_000 and flush.stats().score < 100.0
    txn.commit()
    assert flush.stats().score > 100.0, "committed: the kept rows can be flushed"
    flush.perform()
    assert tablet.memrowset_rows == 0 and len(_read(engine)) == 4_000
    engine.close()


def test_dropping_a_tablet_while_it_flushes_waits_for_the_flush_and_removes_everything(
    tmp_path, monkeypatch
):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, maintenance_threads=0))
    engine.create_tablet(TID, SCHEMA)
    _insert(engine, list(range(5_000)))
    tablet = engine.tablet(TID)
    writing, release = threading.Event(), threading.Event()
    original = flush_module.write_rowset

    def slow_write(*args, **kwargs):
        writing.set()
        assert release.wait(30), "the test releases the flush"
        return original(*args, **kwargs)

    monkeypatch.setattr(flush_module, "write_rowset", slow_write)
    errors: list[BaseException] = []

    def run(target) -> threading.Thread:
        def guarded():
            try:
                target()
            except BaseException as exc:  # reported by the assertion below
                errors.append(exc)

        thread = threading.Thread(target=guarded)
        thread.start()
        return thread

    flusher = run(engine.checkpoint)
    assert writing.wait(30)
    dropper = run(lambda: engine.drop_tablet(TID))
    time.sleep(0.2)
    assert dropper.is_alive(), "the drop waits for the running flush"
    release.set()
    flusher.join(30)
    dropper.join(30)
    assert errors == []
    assert not engine.layout.tablet_dir(TID).exists()
    assert not engine.layout.tablet_metadata_path(TID).exists()
    assert tablet.retired
    assert tablet.flush(engine.mvcc.safe_time(), 0) is False, "a retired tablet is not flushed"
    engine.close()
