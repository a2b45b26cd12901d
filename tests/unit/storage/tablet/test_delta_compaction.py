"""Minor and major delta compactions and UNDO GC keep every current and historical read."""

from __future__ import annotations

import pyarrow as pa

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema

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
OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0)


def _read(engine, snapshot=None, predicates=()):
    txn = engine.begin(read_only=True)
    out = {}
    for batch in txn.scan(TID, ScanSpec((K, V, S), tuple(predicates), snapshot=snapshot)):
        for row in batch.to_pylist():
            out[row["1"]] = (row["2"], row["3"])
    txn.rollback()
    return out


def _write(engine, kind, keys, v=None, s=None):
    txn = engine.begin()
    ks = pa.array(keys, pa.int64())
    if kind == "delete":
        txn.delete(TID, pa.RecordBatch.from_arrays([ks], names=["1"]))
    elif kind == "update_v":
        txn.update(TID, pa.RecordBatch.from_arrays([ks, pa.array(v, pa.int64())], names=["1", "2"]))
    else:
        batch = pa.RecordBatch.from_arrays(
            [ks, pa.array(v, pa.int64()), pa.array(s, pa.string())], names=["1", "2", "3"]
        )
        (txn.insert if kind == "insert" else txn.update)(TID, batch)
    return int(txn.commit())


def _churn(engine):
    """Several REDO files: updates of one column, deletes and re-inserts; the reads at each
    commit, for time travel."""
    keys = list(range(200))
    history = [(_write(engine, "insert", keys, keys, [f"s{k}" for k in keys]), _read(engine))]
    engine.checkpoint()
    for round_ in range(4):
        chosen = [k for k in keys if k % 4 == round_]
        history.append(
            (_write(engine, "update_v", chosen, [k * 10 + round_ for k in chosen]), None)
        )
        history.append((_write(engine, "delete", chosen[:5]), None))
        history.append(
            (_write(engine, "insert", chosen[:3], [-1] * 3, [f"again{round_}"] * 3), None)
        )
        engine.checkpoint()
    return [(ts, _read(engine, ts)) for ts, _ in history]


def test_minor_then_major_compaction_keep_current_and_past_reads(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    history = _churn(engine)
    current = _read(engine)
    tablet = engine.tablet(TID)
    (rowset,) = tablet.rowsets
    assert len(rowset.redo) == 4
    cutoff = engine.history_cutoff(engine.mvcc.safe_time())
    minor = tablet.compact_deltas(rowset.rowset_id, major=False, history_cutoff=cutoff)
    assert minor is not None and len(rowset.redo) == 1
    assert _read(engine) == current
    assert all(_read(engine, ts) == rows for ts, rows in history)
    major = tablet.compact_deltas(rowset.rowset_id, major=True, history_cutoff=cutoff)
    assert major is not None and len(rowset.redo) == 0
    assert len(rowset.undo) == 2
    assert _read(engine) == current
    assert all(_read(engine, ts) == rows for ts, rows in history)
    big = ColumnPredicate.range(V, 1000, None)
    assert _read(engine, None, [big]) == {k: r for k, r in current.items() if r[0] >= 1000}
    on_disk = {p.name for p in rowset.directory.iterdir()}
    assert on_disk == rowset.known_files()
    engine.close()
    engine = StorageEngine.open(tmp_path, OPTIONS)
    assert _read(engine) == current
    assert all(_read(engine, ts) == rows for ts, rows in history)
    engine.close()


def test_major_compaction_rewrites_only_the_updated_column(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    _write(engine, "insert", list(range(50)), list(range(50)), ["x"] * 50)
    engine.checkpoint()
    _write(engine, "update_v", list(range(0, 50, 2)), [7] * 25)
    engine.checkpoint()
    tablet = engine.tablet(TID)
    (rowset,) = tablet.rowsets
    out = tablet.compact_deltas(rowset.rowset_id, major=True, history_cutoff=0)
    assert out is not None
    assert set(out.meta["column_files"]) == {str(V)}
    assert "deleted_file" not in out.meta
    assert _read(engine)[2] == (7, "x")
    engine.close()


def test_undo_gc_drops_undo_files_older_than_the_history_window(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    _write(engine, "insert", [1, 2], [1, 2], ["a", "b"])
    engine.checkpoint()
    tablet = engine.tablet(TID)
    (rowset,) = tablet.rowsets
    assert len(rowset.undo) == 1
    assert tablet.gc_undo(history_cutoff=0) == 0
    freed = tablet.gc_undo(history_cutoff=int(engine.mvcc.safe_time()))
    assert freed > 0 and not rowset.undo
    assert _read(engine) == {1: (1, "a"), 2: (2, "b")}
    assert {p.name for p in rowset.directory.iterdir()} == rowset.known_files()
    engine.close()


def test_unflushed_changes_win_over_flushed_ones(tmp_path):
    """DeltaMemStore records order after REDO files although real hybrid times are large."""
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    _write(engine, "insert", [1, 2], [1, 2], ["a", "b"])
    engine.checkpoint()
    _write(engine, "update_v", [1], [10])
    engine.checkpoint()
    _write(engine, "update_v", [1], [11])
    _write(engine, "delete", [2])
    assert _read(engine) == {1: (11, "a")}
    _write(engine, "insert", [2], [20], ["c"])
    assert _read(engine) == {1: (11, "a"), 2: (20, "c")}
    engine.close()
