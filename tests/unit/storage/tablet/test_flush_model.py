"""Property test: random writes, flushes, checkpoints and reopens against a plain Python model.

Every step is followed by a comparison of the current state and of every
earlier commit's snapshot (time travel through UNDO records, REDO delta files,
DeltaMemStores and MemRowSet chains) with what the model recorded.  Inserts
flagged ``seg`` go through InsertSegments (the bulk path, here from one row).
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.data_type import INT32, INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import UniqueViolation
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet import tablet as tablet_module

K, S, N = ColumnId(1), ColumnId(2), ColumnId(3)
SCHEMA = Schema(
    (
        ColumnSchema(K, "k", INT32, nullable=False),
        ColumnSchema(S, "s", STRING),
        ColumnSchema(N, "n", INT64),
    ),
    1,
)
TID = TabletId(1)
OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40)

keys = st.integers(0, 12)
values = st.tuples(
    st.sampled_from([None, "", "red", "green", "ünï"]), st.one_of(st.none(), st.integers(-5, 5))
)
rows = st.lists(st.tuples(keys, values), min_size=1, max_size=12)
ops = st.lists(
    st.one_of(
        # Up to 12 rows, so that batches take both the per-key and the batched key probe.
        st.tuples(st.just("insert"), rows, st.booleans()),
        # Insert, then change some of the new rows in the same transaction.
        st.tuples(st.just("insert_change"), rows, st.booleans(), rows, st.lists(keys, max_size=4)),
        # Insert after a savepoint, change a row, roll back to the savepoint, commit.
        st.tuples(st.just("savepoint_insert"), rows, st.booleans()),
        st.tuples(st.just("update"), st.lists(st.tuples(keys, values), min_size=1, max_size=12)),
        st.tuples(st.just("delete"), st.lists(keys, min_size=1, max_size=12)),
        st.tuples(
            st.just("abort_insert"),
            st.lists(st.tuples(keys, values), min_size=1, max_size=3),
            st.booleans(),
        ),
        st.just(("checkpoint",)),
        st.just(("reopen",)),
        st.just(("minor_compaction",)),
        st.just(("major_compaction",)),
        st.just(("merging_compaction",)),
    ),
    min_size=1,
    max_size=25,
)


def _batch(items: list[tuple[int, tuple]], *, key_only: bool = False) -> pa.RecordBatch:
    ks = pa.array([k for k, _ in items], pa.int32())
    if key_only:
        return pa.RecordBatch.from_arrays([ks], names=["1"])
    return pa.RecordBatch.from_arrays(
        [
            ks,
            pa.array([v[0] for _, v in items], pa.string()),
            pa.array([v[1] for _, v in items], pa.int64()),
        ],
        names=["1", "2", "3"],
    )


def _read(engine: StorageEngine, snapshot: int | None = None, predicates=()) -> dict:
    txn = engine.begin(read_only=True)
    spec = ScanSpec((K, S, N), tuple(predicates), snapshot=snapshot)
    out = {}
    for batch in txn.scan(TID, spec):
        for row in batch.to_pylist():
            assert row["1"] not in out, "a key appears once"
            out[row["1"]] = (row["2"], row["3"])
    return out


@contextlib.contextmanager
def _segments(on: bool):
    """Inserts of any size take the segment path (``on``) or never do."""
    saved = tablet_module.SEGMENT_MIN_ROWS
    tablet_module.SEGMENT_MIN_ROWS = 1 if on else 1 << 30
    try:
        yield
    finally:
        tablet_module.SEGMENT_MIN_ROWS = saved


def _apply(engine: StorageEngine, model: dict, op: tuple) -> int | None:
    """Run one op; return its commit timestamp if it committed a change."""
    kind = op[0]
    if kind in ("checkpoint", "reopen") or kind.endswith("_compaction"):
        return None
    txn = engine.begin()
    items = op[1]
    if kind in ("insert", "abort_insert", "insert_change", "savepoint_insert"):
        unique = dict(items)
        batch = _batch(list(unique.items()))
        with _segments(op[2]):
            if kind == "abort_insert":
                with contextlib.suppress(UniqueViolation):
                    txn.insert(TID, batch)
                txn.rollback()
                return None
            if kind == "savepoint_insert":
                txn.savepoint("s")
                with contextlib.suppress(UniqueViolation):
                    txn.insert(TID, batch)
                    first = next(iter(unique))
                    txn.update(TID, _batch([(first, ("red", 9))]))
                txn.rollback_to("s")
                return txn.commit()
            if any(k in model for k in unique):
                with pytest.raises(UniqueViolation):
                    txn.insert(TID, batch)
                txn.rollback()
                return None
            assert txn.insert(TID, batch) == len(unique)
        model.update(unique)
        if kind == "insert_change":
            changes = dict(op[3])
            assert txn.update(TID, _batch(list(changes.items()))) == sum(
                k in model for k in changes
            )
            model.update({k: v for k, v in changes.items() if k in model})
            gone = list(dict.fromkeys(op[4]))
            assert txn.delete(TID, _batch([(k, None) for k in gone], key_only=True)) == sum(
                k in model for k in gone
            )
            for k in gone:
                model.pop(k, None)
    elif kind == "update":
        unique = dict(items)
        assert txn.update(TID, _batch(list(unique.items()))) == sum(k in model for k in unique)
        for k, v in unique.items():
            if k in model:
                model[k] = v
    else:
        unique = list(dict.fromkeys(items))
        assert txn.delete(TID, _batch([(k, None) for k in unique], key_only=True)) == sum(
            k in model for k in unique
        )
        for k in unique:
            model.pop(k, None)
    return txn.commit()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_every_snapshot_matches_the_model(sequence):
    with tempfile.TemporaryDirectory() as tmp:
        engine = StorageEngine.open(Path(tmp), OPTIONS)
        engine.create_tablet(TID, SCHEMA)
        model: dict = {}
        history: list[tuple[int, dict]] = []
        try:
            for op in sequence:
                if op[0] == "checkpoint":
                    engine.checkpoint()
                elif op[0] == "reopen":
                    engine.close()
                    engine = StorageEngine.open(Path(tmp), OPTIONS)
                elif op[0] == "merging_compaction":
                    tablet = engine.tablet(TID)
                    snapshot = engine.mvcc.safe_time()
                    ids = [r.rowset_id for r in tablet.rowsets]
                    tablet.compact_rowsets(ids, snapshot, engine.history_cutoff(snapshot))
                elif op[0].endswith("_compaction"):
                    tablet = engine.tablet(TID)
                    cutoff = engine.history_cutoff(engine.mvcc.safe_time())
                    for rowset in list(tablet.rowsets):
                        tablet.compact_deltas(
                            rowset.rowset_id,
                            major=op[0] == "major_compaction",
                            history_cutoff=cutoff,
                        )
                before = dict(model)
                commit_ts = _apply(engine, model, op)
                if commit_ts is not None:
                    history.append((int(commit_ts) - 1, before))
                    history.append((int(commit_ts), dict(model)))
                assert _read(engine) == model
                for ts, expected in history:
                    assert _read(engine, ts) == expected
                red = ColumnPredicate.equality(S, "red")
                assert _read(engine, None, [red]) == {
                    k: v for k, v in model.items() if v[0] == "red"
                }
                small = ColumnPredicate.range(N, -1, 2)
                assert _read(engine, None, [small]) == {
                    k: v for k, v in model.items() if v[1] is not None and -1 <= v[1] < 2
                }
        finally:
            engine.close()
