from __future__ import annotations

import pyarrow as pa

from sql.execution.table_activity import TableActivity
from storage.commit_record import OpKind, WriteOp
from storage.data_type import TabletId

T1, T2 = TabletId(1), TabletId(2)


def _op(tablet: TabletId, kind: OpKind, rows: int) -> WriteOp:
    return WriteOp(tablet, kind, pa.record_batch({"k": list(range(rows))}))


def test_live_rows_start_from_the_storage_without_counting_the_first_writer_twice() -> None:
    stored = {T1: 10, T2: 0}
    activity = TableActivity(lambda tablet: stored[tablet])
    stored[T1] += 3  # the transaction's own inserts are already in the MemRowSet
    activity.transaction_ended([_op(T1, OpKind.INSERT, 3), _op(T1, OpKind.DELETE, 1)], True)
    counters = activity.table([T1, T2])
    assert (counters.n_tup_ins, counters.n_tup_del, counters.live_rows) == (3, 1, 12)
    assert counters.dead_rows == 1


def test_a_rollback_counts_writes_and_dead_rows_but_not_live_ones() -> None:
    activity = TableActivity(lambda tablet: 4)  # the provisional inserts, still there
    activity.transaction_ended([_op(T1, OpKind.INSERT, 4), _op(T1, OpKind.UPDATE, 2)], False)
    counters = activity.table([T1])
    assert (counters.n_tup_ins, counters.n_tup_upd, counters.live_rows) == (4, 2, 0)
    assert counters.dead_rows == 6
    _, database = activity.totals()
    assert (database.xact_commit, database.xact_rollback) == (0, 1)


def test_scans_and_storage_syncs() -> None:
    activity = TableActivity()
    activity.scanned(T1, False, 100, 7)
    activity.scanned(T1, True, 1, 0)
    activity.transaction_ended([_op(T1, OpKind.DELETE, 5)], True)
    activity.storage_synced(T1, 1, lambda: 2)  # a compaction left 2 dead versions
    activity.storage_synced(T1, 1, lambda: 99)  # nothing ran since: unchanged
    counters = activity.table([T1])
    assert (counters.seq_scan, counters.seq_tup_read, counters.idx_scan) == (1, 100, 1)
    assert counters.dead_rows == 2
    assert activity.totals()[1].blocks_read == 7
