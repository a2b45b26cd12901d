"""Writers queued on one row go in arrival order, and each release wakes only the next one."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import LockNotAvailable
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.row_lock_queue import RowLockQueue
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction

ID, NAME = ColumnId(1), ColumnId(2)
SCHEMA = Schema(
    (ColumnSchema(ID, "id", INT64, nullable=False), ColumnSchema(NAME, "name", STRING)), 1
)
T = TabletId(1)
WAITERS = 25


def rows(ids: list[int], name: str) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array([name] * len(ids), pa.string())], names=["1", "2"]
    )


@pytest.fixture
def engine(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    engine.create_tablet(T, SCHEMA)
    setup = engine.begin()
    setup.insert(T, rows([1, 2], "start"))
    setup.commit()
    yield engine
    engine.close()


def test_the_line_hands_the_turn_to_the_next_waiter_only():
    queue = RowLockQueue()
    row = (T, b"k")
    first, second, third = (queue.join(row, TxnState()) for _ in range(3))
    assert [first.is_head, second.is_head, third.is_head] == [True, False, False]
    queue.leave(second)  # a waiter in the middle gives up: nobody's turn comes
    assert not third.is_head
    queue.leave(first)
    assert third.is_head and queue.waiting() == 1
    queue.leave(third)
    queue.leave(third)  # leaving twice is harmless
    assert queue.waiting() == 0


def _queue_up(
    engine, count: int, finished: list[object], options: dict[int, dict[str, object]] | None = None
) -> list[threading.Thread]:
    """Start ``count`` writers of row 1 one after another, each in line before the next."""
    threads = []
    for i in range(count):
        txn = engine.begin()
        for name, value in (options or {}).get(i, {}).items():
            setattr(txn, name, value)

        def work(txn: Transaction = txn, i: int = i) -> None:
            try:
                txn.update(T, rows([1], f"w{i}"))
            except LockNotAvailable:
                finished.append(("timed out", i))
                return
            finished.append(i)
            txn.commit()

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 5
        while engine.pipeline.row_locks.waiting() < i + 1:
            assert time.monotonic() < deadline, "the writer never queued"
            time.sleep(0.002)
    return threads


def test_waiters_on_a_hot_row_write_in_arrival_order_without_a_herd(engine, monkeypatch):
    calls = []
    wait_for = Transaction._wait_for

    def counting(self, row, holder):
        calls.append(self.txn_id)
        return wait_for(self, row, holder)

    monkeypatch.setattr(Transaction, "_wait_for", counting)
    holder = engine.begin()
    holder.update(T, rows([1], "holder"))
    finished: list[object] = []
    threads = _queue_up(engine, WAITERS, finished)
    holder.commit()
    for thread in threads:
        thread.join(10)
    assert finished == list(range(WAITERS))
    # Each waiter waits at most three times (for its turn, then for the writer before it);
    # waking every waiter at each release would take about WAITERS**2 / 2 waits.
    assert len(calls) <= 3 * WAITERS, len(calls)
    reader = engine.begin(read_only=True)
    names = [r["2"] for b in reader.scan(T, ScanSpec((ID, NAME))) for r in b.to_pylist()]
    assert names[0] == f"w{WAITERS - 1}"
    assert engine.pipeline.row_locks.waiting() == 0


def test_waiters_that_time_out_in_line_leave_the_others_their_order(engine):
    holder = engine.begin()
    holder.update(T, rows([1], "holder"))
    finished: list[object] = []
    # The head (0) and a waiter in the middle (2) give up after 300 ms.
    timeouts: dict[int, dict[str, object]] = {
        0: {"lock_timeout_ms": 300},
        2: {"lock_timeout_ms": 300},
    }
    threads = _queue_up(engine, 5, finished, timeouts)
    deadline = time.monotonic() + 5
    while len(finished) < 2:
        assert time.monotonic() < deadline, finished
        time.sleep(0.01)
    assert sorted(finished, key=str) == [("timed out", 0), ("timed out", 2)]
    assert engine.pipeline.row_locks.waiting() == 3
    holder.commit()
    for thread in threads:
        thread.join(10)
    assert finished[2:] == [1, 3, 4]
    assert engine.pipeline.row_locks.waiting() == 0


def test_a_statement_that_ends_without_writing_the_row_gives_up_its_turn(engine):
    """READ COMMITTED re-check: the head finds the row changed and decides not to write it."""
    holder = engine.begin()
    holder.update(T, rows([1], "holder"))
    head, behind = engine.begin(), engine.begin()
    conflicts: list[int] = []
    finished: list[object] = []

    def first() -> None:
        head.update(T, rows([1], "head"), conflicts=conflicts)
        finished.append("head re-reads")

    threading.Thread(target=first, daemon=True).start()
    deadline = time.monotonic() + 5
    while engine.pipeline.row_locks.waiting() < 1:
        assert time.monotonic() < deadline
        time.sleep(0.002)

    def second() -> None:
        behind.update(T, rows([1], "behind"))
        finished.append("behind wrote")

    other = threading.Thread(target=second, daemon=True)
    other.start()
    while engine.pipeline.row_locks.waiting() < 2:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    holder.commit()
    while not finished:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    assert finished == ["head re-reads"] and conflicts == [0]
    time.sleep(0.2)
    assert finished == ["head re-reads"], "the head keeps its turn while it re-reads"
    head.end_statement()
    other.join(5)
    assert finished == ["head re-reads", "behind wrote"]
    behind.commit()
    head.commit()
