import pyarrow as pa
import pytest

from storage import commit_record
from storage.commit_record import CommitRecord, OpKind, WriteOp
from storage.data_type import TabletId
from storage.errors import DataCorrupted


def test_commit_record_round_trips():
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2]), pa.array(["a", None])], names=["1", "7"])
    keys = batch.select(["1"])
    record = CommitRecord(
        123456789,
        (WriteOp(TabletId(4), OpKind.INSERT, batch), WriteOp(TabletId(9), OpKind.DELETE, keys)),
    )
    decoded = commit_record.decode(commit_record.encode(record))
    assert decoded.commit_ts == 123456789
    assert [(op.tablet_id, op.kind) for op in decoded.ops] == [
        (4, OpKind.INSERT),
        (9, OpKind.DELETE),
    ]
    assert decoded.ops[0].batch.equals(batch) and decoded.ops[1].batch.equals(keys)


def test_garbage_is_data_corrupted():
    with pytest.raises(DataCorrupted):
        commit_record.decode(b"\x01" + b"\x00" * 8 + b"\x01\x00\x00\x00" + b"junk")
    with pytest.raises(DataCorrupted):
        commit_record.decode(b"\x09" + b"\x00" * 12)
