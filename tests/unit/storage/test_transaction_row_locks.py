"""Transaction.lock: PostgreSQL's row-lock modes against each other and against writes."""

from __future__ import annotations

import pyarrow as pa
import pytest

from storage.errors import DeadlockDetected, LockNotAvailable
from storage.row_lock_mode import RowLockMode as M
from tests.unit.storage.test_transaction_concurrent import T, Worker, _engine, rows


def keys(ids: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(ids, pa.int64())], names=["1"])


def _quick(txn):  # noqa: ANN001, ANN202
    txn.lock_timeout_ms = 200
    return txn


def test_shared_locks_coexist_and_stop_only_conflicting_writes(tmp_path):
    engine = _engine(tmp_path)
    a, b = engine.begin(), engine.begin()
    assert a.lock(T, keys([1]), M.KEY_SHARE) == 1
    assert b.lock(T, keys([1]), M.KEY_SHARE) == 1
    writer = _quick(engine.begin())
    assert writer.update(T, rows([1], "no key change")) == 1  # NO KEY UPDATE: no wait
    with pytest.raises(LockNotAvailable):
        _quick(engine.begin()).delete(T, keys([1]))  # FOR UPDATE waits for KEY SHARE
    with pytest.raises(LockNotAvailable):
        _quick(engine.begin()).lock(T, keys([1]), M.SHARE)  # meets the update's lock
    writer.commit()
    a.commit()
    b.rollback()
    deleter = engine.begin()
    assert deleter.delete(T, keys([1])) == 1
    deleter.commit()


def test_a_lock_is_not_a_write_and_absent_rows_are_skipped(tmp_path):
    engine = _engine(tmp_path)
    txn = engine.begin()
    assert txn.lock(T, keys([1, 2, 99]), M.UPDATE) == 2
    assert not txn.has_writes
    assert txn.commit() is None  # nothing to log


def test_a_key_share_waits_for_a_delete_and_sees_it_committed(tmp_path):
    engine = _engine(tmp_path)
    deleter = engine.begin()
    deleter.delete(T, keys([2]))
    locker = engine.begin()
    conflicts: list[int] = []
    worker = Worker(lambda: locker.lock(T, keys([2]), M.KEY_SHARE, conflicts=conflicts))
    worker.start()
    worker.join(0.3)
    assert worker.is_alive()
    deleter.commit()
    worker.join(10)
    assert worker.error is None and worker.result == 0
    assert conflicts == [0]  # changed since the snapshot: the caller looks again


def test_two_key_share_holders_that_both_delete_deadlock(tmp_path):
    engine = _engine(tmp_path)
    a, b = engine.begin(), engine.begin()
    a.lock(T, keys([1]), M.KEY_SHARE)
    b.lock(T, keys([1]), M.KEY_SHARE)
    first = Worker(lambda: a.delete(T, keys([1])))
    first.start()
    first.join(0.3)
    assert first.is_alive()
    with pytest.raises(DeadlockDetected):
        b.delete(T, keys([1]))
    first.join(10)
    assert first.error is None and first.result == 1
    a.commit()
