import threading
import time
from typing import NoReturn

import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import (
    DeadlockDetected,
    InFailedSqlTransaction,
    LockNotAvailable,
    UniqueViolation,
)
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema

ID, NAME = ColumnId(1), ColumnId(2)
SCHEMA = Schema(
    (ColumnSchema(ID, "id", INT64, nullable=False), ColumnSchema(NAME, "name", STRING)), 1
)
T = TabletId(1)


def rows(ids: list[int], name: str = "x") -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array([name] * len(ids), pa.string())], names=["1", "2"]
    )


def read(txn) -> list[tuple]:
    return [tuple(r.values()) for b in txn.scan(T, ScanSpec((ID, NAME))) for r in b.to_pylist()]


def _engine(tmp_path, **options) -> StorageEngine:
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, **options))
    engine.create_tablet(T, SCHEMA)
    setup = engine.begin()
    setup.insert(T, rows([1, 2], "start"))
    setup.commit()
    return engine


class Worker(threading.Thread):
    """Runs a function on its own thread and keeps its result or exception."""

    def __init__(self, fn) -> None:
        super().__init__(daemon=True)
        self._fn = fn
        self.result = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._fn()
        except BaseException as exc:
            self.error = exc


def _blocked(worker: Worker, engine: StorageEngine, txn) -> None:
    deadline = time.monotonic() + 5
    while engine.waits_for.waiting_for(txn.state) is None:
        assert worker.is_alive() and time.monotonic() < deadline, worker.error
        time.sleep(0.005)


def test_a_writer_waits_for_the_holder_then_updates_the_newest_version(tmp_path):
    engine = _engine(tmp_path)
    first, second = engine.begin(), engine.begin()
    assert first.update(T, rows([1], "first")) == 1
    worker = Worker(lambda: second.update(T, rows([1], "second")))
    worker.start()
    _blocked(worker, engine, second)
    first.commit()
    worker.join(5)
    assert worker.error is None and worker.result == 1
    second.commit()
    assert read(engine.begin()) == [(1, "second"), (2, "start")]


def test_an_insert_waiting_on_a_rolled_back_insert_succeeds(tmp_path):
    engine = _engine(tmp_path)
    first, second = engine.begin(), engine.begin()
    first.insert(T, rows([3], "first"))
    worker = Worker(lambda: second.insert(T, rows([3], "second")))
    worker.start()
    _blocked(worker, engine, second)
    first.rollback()
    worker.join(5)
    assert worker.result == 1
    second.commit()
    assert read(engine.begin())[-1] == (3, "second")


def test_an_insert_waiting_on_a_committed_insert_is_a_unique_violation(tmp_path):
    engine = _engine(tmp_path)
    first, second = engine.begin(), engine.begin()
    first.insert(T, rows([3], "first"))
    worker = Worker(lambda: second.insert(T, rows([4, 3], "second")))
    worker.start()
    _blocked(worker, engine, second)
    first.commit()
    worker.join(5)
    assert isinstance(worker.error, UniqueViolation)
    second.commit()
    assert read(engine.begin()) == [(1, "start"), (2, "start"), (3, "first")]


def test_a_deleted_row_is_skipped_by_a_waiting_update(tmp_path):
    engine = _engine(tmp_path)
    first, second = engine.begin(), engine.begin()
    first.delete(T, rows([1]))
    worker = Worker(lambda: second.update(T, rows([1, 2], "second")))
    worker.start()
    _blocked(worker, engine, second)
    first.commit()
    worker.join(5)
    assert worker.result == 1
    second.commit()
    assert read(engine.begin()) == [(2, "second")]


def test_deadlock_is_detected_in_the_waiter_that_closes_the_cycle(tmp_path):
    engine = _engine(tmp_path)
    first, second = engine.begin(), engine.begin()
    first.update(T, rows([1], "first"))
    second.update(T, rows([2], "second"))
    worker = Worker(lambda: first.update(T, rows([2], "first")))
    worker.start()
    _blocked(worker, engine, first)
    with pytest.raises(DeadlockDetected) as info:
        second.update(T, rows([1], "second"))
    assert info.value.sqlstate == "40P01"
    assert not second.is_active  # rolled back at once, releasing its locks
    worker.join(5)
    assert worker.error is None and worker.result == 1
    with pytest.raises(InFailedSqlTransaction):
        second.commit()
    second.rollback()
    first.commit()
    assert read(engine.begin()) == [(1, "first"), (2, "first")]


def test_lock_timeout_gives_up_with_55p03(tmp_path):
    engine = _engine(tmp_path, lock_timeout_ms=50)
    holder, waiter = engine.begin(), engine.begin()
    holder.update(T, rows([1], "holder"))
    started = time.monotonic()
    with pytest.raises(LockNotAvailable) as info:
        waiter.update(T, rows([1], "waiter"))
    assert info.value.sqlstate == "55P03"
    assert 0.04 <= time.monotonic() - started < 2
    holder.commit()


def test_cancel_check_interrupts_a_lock_wait(tmp_path):
    engine = _engine(tmp_path)
    holder, waiter = engine.begin(), engine.begin()
    holder.update(T, rows([1], "holder"))

    class Cancelled(Exception):
        pass

    def cancel() -> None:
        raise Cancelled

    waiter.cancel_check = cancel
    with pytest.raises(Cancelled):
        waiter.update(T, rows([1], "waiter"))
    holder.commit()


def test_concurrent_committers_each_read_their_own_commit_next(tmp_path):
    engine = _engine(tmp_path)
    errors: list[BaseException] = []

    def session(base: int) -> None:
        try:
            for i in range(15):
                txn = engine.begin()
                txn.insert(T, rows([base + i]))
                txn.commit()
                reader = engine.begin()
                assert (base + i, "x") in read(reader)
                reader.commit()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(1000 * n,)) for n in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(read(engine.begin())) == 2 + 4 * 15


def test_refuse_wait_gives_up_before_joining_the_line_and_the_write_can_wait_after(tmp_path):
    # A key write on the event loop must never block it: it gives up at once, in no line,
    # and nothing of it stays behind; the same transaction then waits as usual.
    engine = _engine(tmp_path)
    holder, waiter = engine.begin(), engine.begin()
    holder.update(T, rows([1], "holder"))

    class MustWait(Exception):
        pass

    def refuse() -> NoReturn:
        raise MustWait

    waiter.refuse_wait = refuse
    waiter.cancel_check = lambda: pytest.fail("a refused wait never waits")
    with pytest.raises(MustWait):
        waiter.update(T, rows([1], "waiter"))
    assert engine.pipeline.row_locks.waiting() == 0
    assert engine.waits_for.waiting_for(waiter.state) is None
    assert waiter.is_active and not waiter.has_writes
    waiter.refuse_wait = None
    waiter.cancel_check = None
    worker = Worker(lambda: waiter.update(T, rows([1], "waiter")))
    worker.start()
    _blocked(worker, engine, waiter)
    holder.commit()
    worker.join(10)
    assert worker.result == 1
    waiter.commit()
    assert read(engine.begin()) == [(1, "waiter"), (2, "start")]


def test_a_waiter_woken_by_the_commit_re_reads_the_committed_version(tmp_path, monkeypatch):
    """The holder is stamped committed, waking its waiter, a moment before its commit reaches
    safe time; the waiter's re-read (READ COMMITTED's) must still see the committed row, or
    it would compute from the old one, conflict again and go round until safe time moves."""
    engine = _engine(tmp_path)
    mvcc = engine.pipeline.mvcc
    finish = mvcc.finish_commit

    def slow_finish(ts):
        time.sleep(0.3)
        finish(ts)

    first, second = engine.begin(), engine.begin()
    assert first.update(T, rows([1], "first")) == 1

    def re_read():
        conflicts: list[int] = []
        assert second.update(T, rows([1], "second"), conflicts=conflicts) == 0
        assert conflicts == [0]
        second.refresh_snapshot()
        return read(second)

    worker = Worker(re_read)
    worker.start()
    _blocked(worker, engine, second)
    monkeypatch.setattr(mvcc, "finish_commit", slow_finish)
    first.commit()
    worker.join(5)
    assert worker.error is None and worker.result == [(1, "first"), (2, "start")]
    second.rollback()
