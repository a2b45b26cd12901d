"""One tablet driven by random writes and maintenance beside a plain dict model of its rows.

The storage property tests (the flush model, point reads against scans, the one-key
read against the general path) share the schema, the ``ops`` strategy and the driver:
``ModelTablet.step`` runs one op (a write, a checkpoint, a reopen, a delta or rowset
compaction) and keeps ``rows`` what the tablet must hold.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import strategies as st

from storage.data_type import INT32, INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import UniqueViolation
from storage.options import StorageOptions
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
OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0)

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


def rows_batch(items: list[tuple[int, tuple]], *, key_only: bool = False) -> pa.RecordBatch:
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


@contextlib.contextmanager
def segments(on: bool):
    """Inserts of any size take the segment path (``on``) or never do."""
    saved = tablet_module.SEGMENT_MIN_ROWS
    tablet_module.SEGMENT_MIN_ROWS = 1 if on else 1 << 30
    try:
        yield
    finally:
        tablet_module.SEGMENT_MIN_ROWS = saved


def apply_op(engine: StorageEngine, model: dict, op: tuple) -> int | None:
    """Run one op; return its commit timestamp if it committed a change."""
    kind = op[0]
    if kind in ("checkpoint", "reopen") or kind.endswith("_compaction"):
        return None
    txn = engine.begin()
    items = op[1]
    if kind in ("insert", "abort_insert", "insert_change", "savepoint_insert"):
        unique = dict(items)
        batch = rows_batch(list(unique.items()))
        with segments(op[2]):
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
                    txn.update(TID, rows_batch([(first, ("red", 9))]))
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
            assert txn.update(TID, rows_batch(list(changes.items()))) == sum(
                k in model for k in changes
            )
            model.update({k: v for k, v in changes.items() if k in model})
            gone = list(dict.fromkeys(op[4]))
            assert txn.delete(TID, rows_batch([(k, None) for k in gone], key_only=True)) == sum(
                k in model for k in gone
            )
            for k in gone:
                model.pop(k, None)
    elif kind == "update":
        unique = dict(items)
        assert txn.update(TID, rows_batch(list(unique.items()))) == sum(k in model for k in unique)
        for k, v in unique.items():
            if k in model:
                model[k] = v
    else:
        unique = list(dict.fromkeys(items))
        assert txn.delete(TID, rows_batch([(k, None) for k in unique], key_only=True)) == sum(
            k in model for k in unique
        )
        for k in unique:
            model.pop(k, None)
    return txn.commit()


class ModelTablet:
    """A fresh engine in ``directory`` with one tablet of ``SCHEMA``, and its model."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.engine = StorageEngine.open(directory, OPTIONS)
        self.engine.create_tablet(TID, SCHEMA)
        self.rows: dict[int, tuple] = {}

    def step(self, op: tuple) -> int | None:
        """Run one op of ``ops``; its commit timestamp if it committed a change."""
        kind = op[0]
        if kind == "checkpoint":
            self.engine.checkpoint()
        elif kind == "reopen":
            self.engine.close()
            self.engine = StorageEngine.open(self.directory, OPTIONS)
        elif kind == "merging_compaction":
            tablet = self.engine.tablet(TID)
            snapshot = self.engine.mvcc.safe_time()
            ids = [r.rowset_id for r in tablet.rowsets]
            tablet.compact_rowsets(ids, snapshot, self.engine.history_cutoff(snapshot))
        elif kind.endswith("_compaction"):
            tablet = self.engine.tablet(TID)
            cutoff = self.engine.history_cutoff(self.engine.mvcc.safe_time())
            for rowset in list(tablet.rowsets):
                tablet.compact_deltas(
                    rowset.rowset_id, major=kind == "major_compaction", history_cutoff=cutoff
                )
        return apply_op(self.engine, self.rows, op)

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> ModelTablet:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
