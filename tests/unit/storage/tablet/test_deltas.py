"""Delta files: UNDO and REDO lookups by (rowid, timestamp); the DeltaMemStore's chains."""

from __future__ import annotations

from storage.data_type import INT64, STRING, ColumnId
from storage.mvcc import TxnState
from storage.row_change import Mutation, MutationKind
from storage.schema import ColumnSchema, Schema
from storage.tablet.deltas import DeltaFile, DeltaImage, DeltaMemStore, write_delta_file
from storage.timestamp import Timestamp

SCHEMA = Schema(
    (ColumnSchema(ColumnId(1), "k", INT64, nullable=False), ColumnSchema(ColumnId(2), "v", STRING)),
    1,
)


def test_first_after_and_last_at_or_before(tmp_path):
    images = [
        DeltaImage(3, 30, (3, "b")),
        DeltaImage(3, 10, None),
        DeltaImage(1, 20, (1, "a")),
        DeltaImage(3, 2**62 + 1, (3, "c")),
    ]
    path = tmp_path / "d.arrow"
    write_delta_file(path, SCHEMA, images, fsync=False)
    delta = DeltaFile(path, SCHEMA, 10, 2**62 + 1)
    assert len(delta) == 4
    assert delta.first_after(3, 9) == (10, None)
    assert delta.first_after(3, 10) == (30, (3, "b"))
    assert delta.first_after(3, 2**62) == (2**62 + 1, (3, "c"))
    assert delta.first_after(3, 2**62 + 1) is None
    assert delta.last_at_or_before(3, 2**62) == (30, (3, "b"))
    assert delta.last_at_or_before(3, 9) is None
    assert delta.first_after(2, 0) is None
    assert delta.rowids_where(after=25).tolist() == [3]
    assert delta.rowids_where(at_or_before=20).tolist() == [1, 3]


def test_delta_memstore_splits_committed_prefixes_and_removes_provisional_writes():
    committed = TxnState.committed_at(Timestamp(5))
    later = TxnState.committed_at(Timestamp(50))
    open_txn = TxnState()
    dms = DeltaMemStore()
    dms.append(0, Mutation(MutationKind.UPDATE, committed, ((1, "x"),)))
    dms.append(0, Mutation(MutationKind.DELETE, later, None))
    dms.append(1, Mutation(MutationKind.DELETE, open_txn, None))
    flushed = dms.split_committed(Timestamp(10))
    assert list(flushed) == [0] and len(flushed[0]) == 1
    assert [m.txn for m in dms.chains[0]] == [later]
    dms.remove_provisional(1, open_txn)
    assert 1 not in dms.chains and len(dms) == 1
