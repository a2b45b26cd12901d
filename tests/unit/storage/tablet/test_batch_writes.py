"""A batch UPDATE or DELETE of many keys (one ``Tablet.update``/``delete`` call: keys found in
the insert segments together, DiskRowSet keys a rowset at a time, DeltaMemStore appends
gathered) leaves exactly what the same keys written one call each leave: counts, written
keys, conflicts and every row at every snapshot, with rows in MemRowSet segments, its map
and DiskRowSets, across flushes and merging compactions."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.data_type import INT32, STRING, ColumnId, TabletId
from storage.fs import DataDirLayout
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet.insert_segment import InsertSegment, locate_in_segments
from storage.tablet.tablet import Tablet, never_wait

A, B, V = ColumnId(1), ColumnId(2), ColumnId(5)
SCHEMA = Schema(
    (
        ColumnSchema(A, "a", INT32, nullable=False),
        ColumnSchema(B, "b", STRING, nullable=False),
        ColumnSchema(V, "v", STRING),
    ),
    num_key_columns=2,
)
KEYS = 700


def _rows(keys: list[int], value: str | None = None) -> pa.RecordBatch:
    columns = {
        "1": pa.array([k % 7 for k in keys], pa.int32()),
        "2": pa.array([f"k{k:04d}" for k in keys]),
    }
    if value is not None:
        columns["5"] = pa.array([f"{value}{k}" for k in keys])
    return pa.RecordBatch.from_pydict(columns)


def _all(tablet: Tablet, snapshot: int) -> list[tuple]:
    batches = tablet.scan(ScanSpec((A, B, V)), snapshot, None)
    return [tuple(r.values()) for b in batches for r in b.to_pylist()]


class _Pair:
    """The same history on two tablets: writes batched on one, a key per call on the other."""

    def __init__(self, root) -> None:
        self.tablets = []
        for name in ("batched", "single"):
            layout = DataDirLayout(root / name)
            layout.create(fsync=False)
            self.tablets.append(
                Tablet.create(layout, TabletId(1), SCHEMA, StorageOptions(fsync=False))
            )
        self.ts = 1

    def commit(self, txns: list[TxnState]) -> None:
        self.ts += 1
        for txn in txns:
            txn.mark_committed(self.ts)

    def insert(self, keys: list[int]) -> None:
        txns = [TxnState(), TxnState()]
        for tablet, txn in zip(self.tablets, txns, strict=True):
            tablet.insert(txn, _rows(keys, "i"), never_wait)
        self.commit(txns)

    def write(self, kind: str, keys: list[int], conflict_ts: int | None) -> None:
        txns = [TxnState(), TxnState()]
        batched, single = self.tablets
        value = f"u{self.ts}."
        if kind == "delete":
            whole = batched.delete(txns[0], _rows(keys), never_wait, conflict_ts)
            ones = [single.delete(txns[1], _rows([k]), never_wait, conflict_ts) for k in keys]
        else:
            whole = batched.update(txns[0], _rows(keys, value), never_wait, conflict_ts)
            ones = [
                single.update(txns[1], _rows([k], value), never_wait, conflict_ts) for k in keys
            ]
        assert whole.count == sum(one.count for one in ones)
        assert whole.keys == [key for one in ones for key in one.keys]
        assert whole.conflicts == [i for i, one in enumerate(ones) if one.conflicts]
        self.commit(txns)

    def maintain(self, what: str) -> None:
        for tablet in self.tablets:
            if what == "flush":
                tablet.flush(self.ts, 0)
            elif len(tablet.rowsets) > 1:
                tablet.compact_rowsets([r.rowset_id for r in tablet.rowsets], self.ts, 0)

    def check(self) -> None:
        batched, single = self.tablets
        for snapshot in range(1, self.ts + 1, max(1, self.ts // 4)):
            assert _all(batched, snapshot) == _all(single, snapshot)
        assert _all(batched, self.ts) == _all(single, self.ts)


_keys = st.lists(st.integers(0, KEYS - 1), min_size=8, max_size=60, unique=True)
_steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["delete", "update"]), _keys, st.booleans()),
        st.tuples(st.sampled_from(["flush", "compact"])),
        st.tuples(st.just("insert"), st.lists(st.integers(0, KEYS - 1), max_size=5)),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_steps)
def test_batch_writes_equal_writes_key_by_key(tmp_path_factory, steps) -> None:
    pair = _Pair(tmp_path_factory.mktemp("pair"))
    # Two overlapping bulk inserts (insert segments), then a few rows into the map.
    pair.insert(list(range(0, KEYS, 2))[:340])
    pair.insert(list(range(1, KEYS, 2))[:300])
    pair.insert([KEYS - 2, KEYS - 4])
    pair.check()
    for step in steps:
        if step[0] in ("delete", "update"):
            kind, keys, since_start = step
            pair.write(kind, keys, 2 if since_start else None)
        elif step[0] == "insert":
            present = {r[1] for r in _all(pair.tablets[1], pair.ts)}
            fresh = sorted({k for k in step[1] if f"k{k:04d}" not in present})
            if fresh:
                pair.insert(fresh)
        else:
            pair.maintain(step[0])
        pair.check()


@settings(max_examples=30, deadline=None)
@given(
    segments=st.lists(
        st.lists(st.integers(0, 200), min_size=1, max_size=40, unique=True), max_size=4
    ),
    moved=st.lists(st.integers(0, 200), max_size=30),
    probes=st.lists(st.integers(0, 220), max_size=50),
)
def test_locate_in_segments_is_index_of_in_each_segment(segments, moved, probes) -> None:
    made = []
    for keys in segments:
        encoded = [f"k{k:04d}".encode() for k in keys]
        columns = [pa.array([0] * len(keys), pa.int32()), pa.array(keys).cast(pa.string()),
                   pa.nulls(len(keys), pa.string())]  # fmt: skip
        segment = InsertSegment.build(TxnState(), SCHEMA, encoded, columns)
        for k in moved:
            index = segment.index_of(f"k{k:04d}".encode())
            if index is not None:
                segment.mark_moved(index)
        made.append(segment)
    keys = [f"k{k:04d}".encode() for k in probes]
    expected = {}
    for key in keys:
        found = [(s, s.index_of(key)) for s in made if s.index_of(key) is not None]
        expected[key] = found[0] if found else None
    assert locate_in_segments(made, keys) == expected
