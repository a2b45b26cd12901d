"""The collector pauses around bulk work, nests across threads, and always comes back."""

from __future__ import annotations

import gc
import threading

import pyarrow as pa
import pytest

from storage.data_type import INT64, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.schema import ColumnSchema, Schema
from storage.tablet import flush as flush_module
from storage.tablet.gc_pause import paused_gc
from storage.tablet.memrowset import MemRowSet


@pytest.fixture(autouse=True)
def _collector_enabled():
    gc.enable()
    yield
    gc.enable()


def test_a_pause_disables_the_collector_until_the_last_holder_leaves():
    entered = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with paused_gc():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with paused_gc():
        assert not gc.isenabled()
        thread.start()
        assert entered.wait(10)
    assert not gc.isenabled(), "the other thread still holds its pause"
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_the_collector_comes_back_after_an_error():
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_disabled_by_the_program_stays_disabled():
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_bulk_insert_and_a_flush_run_paused_and_leave_the_collector_on(tmp_path, monkeypatch):
    seen: list[tuple[str, bool]] = []
    insert_new, plan_flush = MemRowSet.insert_new, flush_module.plan_flush
    add_segment = MemRowSet.add_segment

    def recording_insert(self, *args):
        seen.append(("insert", gc.isenabled()))
        return insert_new(self, *args)

    def recording_segment(self, *args):
        seen.append(("segment", gc.isenabled()))
        return add_segment(self, *args)

    def recording_plan(*args):
        seen.append(("flush", gc.isenabled()))
        return plan_flush(*args)

    monkeypatch.setattr(MemRowSet, "insert_new", recording_insert)
    monkeypatch.setattr(MemRowSet, "add_segment", recording_segment)
    monkeypatch.setattr("storage.tablet.tablet.plan_flush", recording_plan)
    schema = Schema((ColumnSchema(ColumnId(1), "k", INT64, nullable=False),), 1)
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, maintenance_threads=0))
    engine.create_tablet(TabletId(1), schema)
    for rows in (10, 1_000):
        txn = engine.begin()
        start = 0 if rows == 10 else 10
        keys = pa.array(range(start, start + rows), pa.int64())
        txn.insert(TabletId(1), pa.RecordBatch.from_arrays([keys], names=["1"]))
        txn.commit()
    engine.checkpoint()
    # The large batch becomes one segment: no row objects, so nothing to pause the GC for.
    assert seen == [("insert", True), ("segment", True), ("flush", False)]
    assert gc.isenabled()
    engine.close()
