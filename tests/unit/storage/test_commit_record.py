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


def _stream_writer_bytes(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize(
    "batch",
    [
        pa.RecordBatch.from_arrays([pa.array([1], pa.int64())], names=["1"]),
        pa.RecordBatch.from_arrays(
            [pa.array([1, None, 3], pa.int32()), pa.array(["a", None, "x" * 70_000])],
            names=["1", "2"],
        ),
        pa.RecordBatch.from_arrays(
            [pa.array([1, 2, 3, 4], pa.int64()), pa.array([b"a", b"", None, b"zz"])],
            names=["1", "2"],
        ).slice(1, 2),
        pa.RecordBatch.from_arrays([pa.array([], pa.int64())], names=["1"]),
        pa.RecordBatch.from_arrays(
            [pa.array([True, None]), pa.array([1.5, 2.5]), pa.array([1, 2], pa.timestamp("us"))],
            names=["1", "2", "3"],
        ).replace_schema_metadata({b"nyala.row_lock_mode": b"UPDATE"}),
        pa.RecordBatch.from_arrays([pa.array(["a", "b", "a"]).dictionary_encode()], names=["1"]),
    ],
)
def test_each_op_is_the_stream_a_stream_writer_writes(batch):
    """The encoder builds each op's IPC stream from its messages; the bytes must be a stream
    writer's, so records written before and after read back alike."""
    op = WriteOp(TabletId(3), OpKind.UPDATE, batch)
    body = commit_record.encode_ops([op])
    expected = _stream_writer_bytes(batch)
    assert body[commit_record._OP_HEADER.size :] == expected
    decoded = commit_record.decode(commit_record.encode_header(7, 1) + body)
    assert decoded.ops[0].batch.equals(batch)


def test_ops_of_schemas_that_differ_only_in_metadata_or_nullability_keep_their_own():
    """A schema's message is reused for an equal schema only: the same fields with other
    metadata (a ROW_LOCK record's mode), nullability or types each get theirs, however
    often and in whatever order they are written."""
    base = pa.RecordBatch.from_arrays([pa.array([1], pa.int64())], names=["1"])
    batches = [
        base,
        base.replace_schema_metadata({b"nyala.row_lock_mode": b"UPDATE"}),
        base.replace_schema_metadata({b"nyala.row_lock_mode": b"SHARE"}),
        pa.RecordBatch.from_arrays(
            [pa.array([1], pa.int64())], schema=pa.schema([pa.field("1", pa.int64(), False)])
        ),
        pa.RecordBatch.from_arrays([pa.array([1], pa.int32())], names=["1"]),
        pa.RecordBatch.from_arrays([pa.array(["a"]).dictionary_encode()], names=["1"]),
    ]
    for _ in range(3):
        for batch in [*batches, *reversed(batches)]:
            body = commit_record.encode_ops([WriteOp(TabletId(3), OpKind.UPDATE, batch)])
            assert body[commit_record._OP_HEADER.size :] == _stream_writer_bytes(batch)
