import json

import pyarrow as pa
import pytest

from storage.data_type import BINARY, INT32, INT64, STRING, ColumnId, TabletId
from storage.errors import (
    DataCorrupted,
    InternalError,
    NotNullViolation,
    ProgramLimitExceeded,
    UniqueViolation,
)
from storage.fs import DataDirLayout
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema
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
OPTIONS = StorageOptions(fsync=False)


def _batch(**columns: list) -> pa.RecordBatch:
    ids = {"a": A, "b": B, "v": V}
    return pa.RecordBatch.from_arrays(
        [
            pa.array(values, SCHEMA.column(ids[name]).type.arrow_type)
            for name, values in columns.items()
        ],
        names=[str(ids[name]) for name in columns],
    )


def _all(tablet: Tablet, reader: TxnState | None = None, snapshot: int = 10**18) -> list[tuple]:
    batches = tablet.scan(ScanSpec((A, B, V)), snapshot, reader)
    return [tuple(r.values()) for b in batches for r in b.to_pylist()]


@pytest.fixture
def tablet(tmp_path) -> Tablet:
    layout = DataDirLayout(tmp_path)
    layout.create(fsync=False)
    return Tablet.create(layout, TabletId(9), SCHEMA, OPTIONS)


def test_metadata_round_trips_the_schema(tmp_path, tablet):
    layout = DataDirLayout(tmp_path)
    doc = json.loads(layout.tablet_metadata_path(TabletId(9)).read_text())
    assert doc["tablet_id"] == 9
    assert Tablet.load(layout, TabletId(9), OPTIONS).schema == SCHEMA


def test_unreadable_metadata_is_data_corrupted(tmp_path, tablet):
    layout = DataDirLayout(tmp_path)
    layout.tablet_metadata_path(TabletId(9)).write_text("{not json")
    with pytest.raises(DataCorrupted):
        Tablet.load(layout, TabletId(9), OPTIONS)


def test_insert_takes_columns_in_any_order_and_scans_in_key_order(tablet):
    txn = TxnState()
    batch = _batch(v=["x", None, "z"], b=["q", "p", "a"], a=[2, 2, -1])
    assert tablet.insert(txn, batch, never_wait).count == 3
    assert _all(tablet, txn) == [(-1, "a", "z"), (2, "p", None), (2, "q", "x")]


def test_duplicate_key_is_23505_with_postgres_detail_and_writes_nothing(tablet):
    first = TxnState()
    tablet.insert(first, _batch(a=[1], b=["x"], v=["old"]), never_wait)
    first.mark_committed(1)
    txn = TxnState()
    with pytest.raises(UniqueViolation) as info:
        tablet.insert(txn, _batch(a=[5, 1], b=["new", "x"], v=["n", "dup"]), never_wait, "t_pkey")
    assert info.value.sqlstate == "23505"
    assert info.value.message == 'duplicate key value violates unique constraint "t_pkey"'
    assert info.value.detail == "Key (a, b)=(1, x) already exists."
    assert _all(tablet, txn) == [(1, "x", "old")]


def test_duplicate_keys_within_one_batch_are_23505(tablet):
    with pytest.raises(UniqueViolation) as info:
        tablet.insert(TxnState(), _batch(a=[3, 4, 3], b=["k", "k", "k"], v=[None] * 3), never_wait)
    assert info.value.detail == "Key (a, b)=(3, k) already exists."
    assert _all(tablet) == []


def test_update_sets_only_given_columns_and_skips_missing_rows(tablet):
    txn = TxnState()
    tablet.insert(txn, _batch(a=[1, 2], b=["x", "y"], v=["one", "two"]), never_wait)
    result = tablet.update(txn, _batch(a=[2, 7], b=["y", "z"], v=["TWO", "none"]), never_wait)
    assert result.count == 1
    assert _all(tablet, txn) == [(1, "x", "one"), (2, "y", "TWO")]
    assert tablet.delete(txn, _batch(b=["x", "q"], a=[1, 1]), never_wait).count == 1
    assert _all(tablet, txn) == [(2, "y", "TWO")]


def test_malformed_batches_are_refused(tablet):
    with pytest.raises(InternalError):
        tablet.insert(TxnState(), _batch(a=[1], v=["x"]), never_wait)
    with pytest.raises(NotNullViolation):
        tablet.insert(TxnState(), _batch(a=[1], b=[None], v=["x"]), never_wait)
    with pytest.raises(InternalError):
        tablet.delete(TxnState(), _batch(a=[1]), never_wait)


def test_a_conflicting_write_calls_wait_for_then_retries(tablet):
    holder = TxnState()
    tablet.insert(holder, _batch(a=[1], b=["x"], v=["h"]), never_wait)
    waited: list[TxnState] = []

    def wait_for(blocker: TxnState, key: bytes) -> None:
        waited.append(blocker)
        tablet.remove_provisional(blocker, [k for k in list(_keys(tablet))])
        blocker.mark_aborted()

    txn = TxnState()
    assert tablet.insert(txn, _batch(a=[1], b=["x"], v=["mine"]), wait_for).count == 1
    assert waited == [holder]
    assert _all(tablet, txn) == [(1, "x", "mine")]


def _keys(tablet: Tablet) -> list[bytes]:
    return list(tablet.memrowset._rows.keys())


def test_columns_of_another_type_are_cast_and_overflow_is_22003(tablet):
    from storage.errors import NumericValueOutOfRange

    batch = pa.RecordBatch.from_arrays(
        [pa.array([7], pa.int64()), pa.array(["k"]), pa.array(["v"])], names=["1", "2", "5"]
    )
    txn = TxnState()
    assert tablet.insert(txn, batch, never_wait).count == 1
    assert _all(tablet, txn) == [(7, "k", "v")]
    too_big = pa.RecordBatch.from_arrays(
        [pa.array([2**40], pa.int64()), pa.array(["k"]), pa.array(["v"])], names=["1", "2", "5"]
    )
    with pytest.raises(NumericValueOutOfRange):
        tablet.insert(txn, too_big, never_wait)


def test_unknown_fields_are_refused_and_dropped_columns_ignored(tablet):
    with pytest.raises(InternalError):
        tablet.update(
            TxnState(), _batch(a=[1], b=["x"]).append_column("zz", pa.array([1])), never_wait
        )
    txn = TxnState()
    tablet.insert(
        txn, _batch(a=[1], b=["x"], v=["v"]).append_column("99", pa.array([1])), never_wait
    )
    assert (
        tablet.update(
            txn, _batch(a=[1], b=["x"]).append_column("99", pa.array([2])), never_wait
        ).count
        == 1
    )


def test_bulk_inserts_of_new_keys_merge_in_key_order_around_flushed_and_deleted_rows(tablet):
    """A batch of keys found nowhere goes in as one sorted merge; one touching a live key
    is still 23505 as a whole, and a key deleted after its flush is a reinsert."""
    first = TxnState.committed_at(1)
    evens = list(range(0, 400, 2))
    tablet.insert(first, _batch(a=evens, b=["k"] * 200, v=["even"] * 200), never_wait)
    assert tablet.flush(2, 0)
    gone = TxnState.committed_at(3)
    assert tablet.delete(gone, _batch(a=[10], b=["k"]), never_wait).count == 1
    odds = list(range(399, 0, -2))  # descending: the merge sorts them
    tablet.insert(
        TxnState.committed_at(4), _batch(a=odds, b=["k"] * 200, v=["odd"] * 200), never_wait
    )
    with pytest.raises(UniqueViolation):
        tablet.insert(TxnState(), _batch(a=[1_000, 7], b=["k", "k"], v=["new", "dup"]), never_wait)
    tablet.insert(
        TxnState.committed_at(5), _batch(a=[10, 1_001], b=["k", "k"], v=["back", "new"]), never_wait
    )
    in_memory = [r[0] for r in _all(tablet) if r[2] in ("odd", "new")]
    assert in_memory == sorted(in_memory) and len(in_memory) == 201
    rows = sorted(_all(tablet))  # each rowset in key order, the MemRowSet's first
    assert [r[0] for r in rows] == [*range(400), 1_001]
    assert rows[10] == (10, "k", "back") and rows[11] == (11, "k", "odd")
    assert rows[12] == (12, "k", "even")


def test_byte_ranges_on_a_leading_binary_key_column_read_exactly_their_rows(tmp_path):
    """An index tablet's lookup reads ``[lower, upper)`` of ``ikey`` by key range alone (no
    predicate judged on the flushed rows): zero bytes, prefixes and 0xff bytes must still
    give exactly the rows a comparison of the bytes gives, before and after a flush."""
    ikey, suffix, value = ColumnId(0), ColumnId(1), ColumnId(2)
    schema = Schema(
        (
            ColumnSchema(ikey, "ikey", BINARY, nullable=False),
            ColumnSchema(suffix, "suffix", BINARY, nullable=False),
            ColumnSchema(value, "v", INT32),
        ),
        num_key_columns=2,
    )
    layout = DataDirLayout(tmp_path)
    layout.create(fsync=False)
    index = Tablet.create(layout, TabletId(7), schema, OPTIONS)
    keys = [b"", b"\x00", b"\x00\x00", b"\x00\x01", b"\x01", b"a", b"a\x00", b"a\x00b", b"ab",
            b"a\xff", b"b", b"\xff", b"\xff\xff"]  # fmt: skip
    rows = [(k, s, i) for i, (k, s) in enumerate((k, s) for k in keys for s in (b"\x00", b"z"))]
    batch = pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows], pa.binary()), pa.array([r[1] for r in rows], pa.binary()),
         pa.array([r[2] for r in rows], pa.int32())],
        names=[str(ikey), str(suffix), str(value)],
    )  # fmt: skip
    index.insert(TxnState.committed_at(1), batch, never_wait)
    bounds = [None, *keys, b"a\x00a", b"\x00\x00\x00"]
    ranges = [(lo, hi) for lo in bounds for hi in bounds if lo is not None or hi is not None]

    def found(lower: bytes | None, upper: bytes | None) -> list[int]:
        spec = ScanSpec((value,), (ColumnPredicate.range(ikey, lower, upper),))
        return sorted(r[str(value)] for b in index.scan(spec, 10**18, None) for r in b.to_pylist())

    def expected(lower: bytes | None, upper: bytes | None) -> list[int]:
        return sorted(
            i for k, _s, i in rows
            if (lower is None or k >= lower) and (upper is None or k < upper) and i not in gone
        )  # fmt: skip

    gone: set[int] = set()
    for lower, upper in ranges:
        assert found(lower, upper) == expected(lower, upper), (lower, upper)
    assert index.flush(2, 0)
    deleted = pa.RecordBatch.from_arrays(
        [pa.array([b"a\x00", b"\x00"], pa.binary()), pa.array([b"z", b"\x00"], pa.binary())],
        names=[str(ikey), str(suffix)],
    )
    assert index.delete(TxnState.committed_at(3), deleted, never_wait).count == 2
    gone = {i for k, s, i in rows if (k, s) in ((b"a\x00", b"z"), (b"\x00", b"\x00"))}
    for lower, upper in ranges:
        assert found(lower, upper) == expected(lower, upper), (lower, upper)


def test_point_reads_in_a_large_block_see_deltas_at_every_snapshot(tmp_path):
    """A point or short key range inside a large block is judged on arrays of its own size:
    updated, deleted, reinserted and absent keys must read as a whole-tablet scan reads them,
    at each snapshot, for the writer itself, and with a predicate on another column."""
    key, value = ColumnId(0), ColumnId(1)
    schema = Schema(
        (ColumnSchema(key, "k", INT64, nullable=False), ColumnSchema(value, "v", INT32)),
        num_key_columns=1,
    )
    layout = DataDirLayout(tmp_path)
    layout.create(fsync=False)
    tablet = Tablet.create(layout, TabletId(8), schema, OPTIONS)

    def batch(keys: list[int], values: list[int] | None = None) -> pa.RecordBatch:
        arrays = [pa.array(keys, pa.int64())]
        if values is not None:
            arrays.append(pa.array(values, pa.int32()))
        return pa.RecordBatch.from_arrays(arrays, names=[str(key), str(value)][: len(arrays)])

    tablet.insert(TxnState.committed_at(1), batch(list(range(0, 8000, 2)), [1] * 4000), never_wait)
    assert tablet.flush(2, 0)
    assert tablet.rowsets[0].key_index.blocks[0].rows > 64 * 16
    tablet.update(TxnState.committed_at(3), batch([10, 12, 4000], [3, 3, 3]), never_wait)
    tablet.delete(TxnState.committed_at(4), batch([12, 14, 6000]), never_wait)
    tablet.insert(TxnState.committed_at(5), batch([14], [5]), never_wait)
    writer = TxnState()
    tablet.update(writer, batch([16], [7]), never_wait)
    tablet.delete(writer, batch([18]), never_wait)
    probes = [0, 1, 10, 11, 12, 14, 16, 18, 4000, 6000, 7998, 7999, 9000, -1]

    def read(spec: ScanSpec, snapshot: int, reader: TxnState | None) -> list[tuple]:
        return [
            tuple(r.values()) for b in tablet.scan(spec, snapshot, reader) for r in b.to_pylist()
        ]

    for snapshot in (2, 3, 4, 5, 10**18):
        for reader in (None, writer):
            every = read(ScanSpec((key, value)), snapshot, reader)
            for k in probes:
                point = ScanSpec((key, value), (ColumnPredicate.equality(key, k),))
                assert read(point, snapshot, reader) == [r for r in every if r[0] == k]
                short = ScanSpec((key, value), (ColumnPredicate.range(key, k, k + 9),
                                                ColumnPredicate.equality(value, 1)))  # fmt: skip
                assert read(short, snapshot, reader) == [
                    r for r in every if k <= r[0] < k + 9 and r[1] == 1
                ]


@pytest.mark.parametrize(
    ("values", "refused"),
    [
        (["x" * (64 * 1024)], False),
        (["x" * (64 * 1024 + 1)], True),
        (["y" * 40_000, "z" * 40_000], False),  # the value buffer is over the limit, no cell is
        ([None, "w" * (64 * 1024 + 1)], True),
        (["v" * 30_000] * 3 + [None], False),
    ],
)
def test_cell_size_check_matches_the_kernel_rule(tablet, values, refused):
    """54000 exactly when one cell is over 64 KiB, whatever the whole buffer's size; a slice
    of a large array is judged by its own cells."""
    batch = _batch(a=list(range(len(values))), b=["k"] * len(values), v=values)
    kernel = max((len(v) for v in values if v is not None), default=0) > 64 * 1024
    assert kernel is refused
    txn = TxnState()
    if refused:
        with pytest.raises(ProgramLimitExceeded) as info:
            tablet.insert(txn, batch, never_wait)
        assert info.value.sqlstate == "54000"
        assert _all(tablet, txn) == []
    else:
        assert tablet.insert(txn, batch, never_wait).count == len(values)
    big = _batch(a=[1000, 1001], b=["k", "k"], v=["s" * (64 * 1024 + 1), "small"])
    assert tablet.insert(txn, big.slice(1, 1), never_wait).count == 1
    with pytest.raises(ProgramLimitExceeded):
        tablet.insert(txn, big.slice(0, 1), never_wait)


def _layered(tmp_path, name: str) -> Tablet:
    """Rows 0..59 in two DiskRowSets with REDO files (deletes, updates, a delete then a
    reinsert in a later file), DeltaMemStore chains on top, rows 60..69 in the MemRowSet."""
    layout = DataDirLayout(tmp_path / name)
    layout.create(fsync=False)
    tablet = Tablet.create(layout, TabletId(9), SCHEMA, OPTIONS)

    def write(ts: int, kind: str, keys: list[int], value: str = "x") -> None:
        batch = _batch(a=keys, b=["k"] * len(keys), v=[value] * len(keys))
        txn = TxnState.committed_at(ts)
        if kind == "delete":
            batch = _batch(a=keys, b=["k"] * len(keys))
        getattr(tablet, kind)(txn, batch, never_wait)

    write(1, "insert", list(range(0, 30)))
    assert tablet.flush(2, 0)
    write(3, "insert", list(range(30, 60)))
    assert tablet.flush(4, 0)
    write(5, "delete", [20, 21, 40, 50])
    write(6, "update", [22, 41], "u6")
    assert tablet.flush(7, 0)
    write(8, "insert", [21, 50], "again")
    assert tablet.flush(9, 0)
    assert all(rowset.redo for rowset in tablet.rowsets)
    write(10, "delete", [23])
    write(11, "update", [42], "u11")
    write(12, "insert", list(range(60, 70)), "m")
    return tablet


_REPEATING = [3, 35, 20, 21, 22, 23, 40, 41, 42, 64, 999, 7, 35, 31, 32, 50, 33, 61, 5, 6, 21, 23]
_DISTINCT = [3, 35, 20, 21, 22, 23, 40, 41, 42, 64, 999, 7, 31, 32, 50, 33, 61, 5, 6, 58, 0, 29]


@pytest.mark.parametrize("kind", ["delete", "update"])
@pytest.mark.parametrize("conflict_ts", [None, 7, 10])
@pytest.mark.parametrize("keys", [_REPEATING, _DISTINCT], ids=["repeating", "distinct"])
def test_a_batch_probe_equals_the_same_writes_row_by_row(tmp_path, kind, conflict_ts, keys):
    """A batch's keys in DiskRowSets are judged together (liveness from the deleted bitmap
    and every REDO file, write conflicts from REDO and UNDO files, chains one by one); the
    counts, rows written, conflicts, scans and rollback equal those of the same keys
    written one call at a time (the scalar probe), including absent, deleted, reinserted
    and repeated keys.  Distinct keys take one DeltaMemStore append per rowset."""
    results = []
    for name, batches in (("batch", [keys]), ("rows", [[k] for k in keys])):
        tablet = _layered(tmp_path, name)
        txn = TxnState()
        counts, written, conflicted = 0, [], []
        for part in batches:
            n = len(part)
            if kind == "delete":
                result = tablet.delete(txn, _batch(a=part, b=["k"] * n), never_wait, conflict_ts)
            else:
                values = [f"u{k}" for k in part]
                batch = _batch(a=part, b=["k"] * n, v=values)
                result = tablet.update(txn, batch, never_wait, conflict_ts)
            counts += result.count
            written += result.keys
            conflicted += [part[i] for i in result.conflicts]
        seen = _all(tablet, txn)
        tablet.remove_provisional(txn, written)
        results.append((counts, written, conflicted, seen, _all(tablet, txn)))
    assert results[0] == results[1]
    assert results[0][0] > 0
    if conflict_ts == 7:
        assert sorted(set(results[0][2])) == [21, 23, 42, 50, 61, 64]
