"""The one-key point read (``point_read._read_one``, ``DiskRowSet.read_row_batch`` and its
``row_blocks`` cache) against the general path on the same data: same batch (schema,
types, values) and same ScanStats, for every key, projection and snapshot.

Projections that repeat a column (``(N, N)``) give one row per key on both paths.
A read of ``[key, key]`` is the general path's read of that one key (duplicates are
dropped after the one-key branch is passed by), so each comparison runs both paths on
the same tablet state, after random writes, flushes, delta and rowset compactions and
reopens, for a reader with uncommitted writes of its own and for one without.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, given, settings

from storage.data_type import INT32, INT64, ColumnId
from storage.engine import StorageEngine
from storage.key_encoding import encode_keys
from storage.scan_stats import ScanStats
from storage.schema import ColumnSchema, Schema
from storage.tablet.row_blocks import ROW_BLOCKS
from storage.transaction import Transaction
from tests.support.tablet_model import OPTIONS, SCHEMA, TID, ModelTablet, ops

K, S, N = ColumnId(1), ColumnId(2), ColumnId(3)
PROJECTIONS = ((K, S, N), (N,), (S, K), (), (N, N), (K, S, K))
ALL_KEYS = list(range(13))


def _key(k: int) -> bytes:
    return encode_keys([pa.array([k], pa.int32())], [INT32])[0]


def _both_ways(txn: Transaction, k: int, columns: tuple, snapshot: int | None) -> pa.RecordBatch:
    one_stats, general_stats = ScanStats(), ScanStats()
    one = txn.read_keys(TID, [_key(k)], columns, snapshot=snapshot, stats=one_stats)
    general = txn.read_keys(TID, [_key(k)] * 2, columns, snapshot=snapshot, stats=general_stats)
    assert one.schema == general.schema, (k, columns)
    assert one.num_rows == general.num_rows <= 1, (k, columns)
    assert one.equals(general), (k, columns, one.to_pylist(), general.to_pylist())
    one_counts, general_counts = dataclasses.asdict(one_stats), dataclasses.asdict(general_stats)
    if len(set(columns)) < len(columns):
        # A repeated column's block is read once by the general path; the one-key path
        # counts the projection's columns.
        del one_counts["blocks_read"], general_counts["blocks_read"]
    assert one_counts == general_counts, (k, columns)
    return one


def _agree(txn: Transaction, snapshots: list[int | None]) -> None:
    # Short histories repeat a snapshot (the first and the last three overlap).
    for snapshot in dict.fromkeys(snapshots):
        for k in ALL_KEYS:
            for columns in PROJECTIONS:
                _both_ways(txn, k, columns, snapshot)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_one_key_read_is_the_general_read(sequence):
    with tempfile.TemporaryDirectory() as tmp, ModelTablet(Path(tmp)) as tablet:
        history: list[int | None] = [None]
        for op in sequence:
            commit_ts = tablet.step(op)
            if commit_ts is not None:
                history += [int(commit_ts) - 1, int(commit_ts)]
            reader = tablet.engine.begin(read_only=True)
            _agree(reader, history[:1] + history[-3:])
            reader.rollback()
        # A writer's own uncommitted changes over every source.
        writer = tablet.engine.begin()
        writer.update(TID, _rows([1, 4, 7], "mine", 5))
        writer.delete(TID, _rows([2, 5], None, None).select(["1"]))
        _agree(writer, [None])
        writer.rollback()


def _rows(keys: list[int], s: str | None, n: int | None) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(keys, pa.int32()),
            pa.array([s] * len(keys), pa.string()),
            pa.array([n] * len(keys), pa.int64()),
        ],
        names=["1", "2", "3"],
    )


def test_row_blocks_follow_flushes_compactions_and_schema_changes(tmp_path):
    """A cached block batch is never read after the rowset's files or schema change: values
    rewritten by a major delta compaction, a column added later (read as its default), and
    a compaction into new rowsets all read as the general path reads them."""
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    try:
        txn = engine.begin()
        txn.insert(TID, _rows(list(range(200)), "a", 1))
        txn.commit()
        engine.checkpoint()
        reader = engine.begin(read_only=True)
        hits = ROW_BLOCKS.hits
        for k in (3, 3, 150):
            assert _both_ways(reader, k, (K, S, N), None).to_pylist() == [
                {"1": k, "2": "a", "3": 1}
            ]
        assert ROW_BLOCKS.hits > hits, "a repeated read of the projection hits its block batch"
        reader.rollback()
        txn = engine.begin()
        txn.update(TID, _rows([3, 150], "b", 2))
        txn.commit()
        tablet = engine.tablet(TID)
        for major in (False, True):
            reader = engine.begin(read_only=True)
            assert _both_ways(reader, 3, (K, S, N), None).to_pylist() == [
                {"1": 3, "2": "b", "3": 2}
            ]
            reader.rollback()
            cutoff = engine.history_cutoff(engine.mvcc.safe_time())
            for rowset in list(tablet.rowsets):
                tablet.compact_deltas(rowset.rowset_id, major=major, history_cutoff=cutoff)
        reader = engine.begin(read_only=True)
        for k in (3, 150, 4):
            expected = ("b", 2) if k in (3, 150) else ("a", 1)
            got = _both_ways(reader, k, (K, S, N), None).to_pylist()
            assert got == [{"1": k, "2": expected[0], "3": expected[1]}]
        reader.rollback()
        wider = Schema((*SCHEMA.columns, ColumnSchema(ColumnId(4), "d", INT64)), 1)
        tablet.alter_schema(wider)
        reader = engine.begin(read_only=True)
        got = _both_ways(reader, 4, (ColumnId(4), K, S), None).to_pylist()
        assert got == [{"4": None, "1": 4, "2": "a"}]
        reader.rollback()
        snapshot = engine.mvcc.safe_time()
        ids = [r.rowset_id for r in tablet.rowsets]
        tablet.compact_rowsets(ids, snapshot, engine.history_cutoff(snapshot))
        reader = engine.begin(read_only=True)
        for k in (3, 4, 199, 200):
            _both_ways(reader, k, (K, S, N, ColumnId(4)), None)
        reader.rollback()
    finally:
        engine.close()
