import threading

import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.errors import (
    InFailedSqlTransaction,
    LockNotAvailable,
    ReadOnlySqlTransaction,
    UndefinedTable,
    UniqueViolation,
)
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema

ID, NAME = ColumnId(1), ColumnId(2)
SCHEMA = Schema(
    (ColumnSchema(ID, "id", INT64, nullable=False), ColumnSchema(NAME, "name", STRING)), 1
)
T = TabletId(1)


def rows(ids: list[int], names: list[str | None] | None = None) -> pa.RecordBatch:
    names = names if names is not None else [f"n{i}" for i in ids]
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array(names, pa.string())], names=["1", "2"]
    )


def keys(ids: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(ids, pa.int64())], names=["1"])


def read(txn, spec: ScanSpec | None = None) -> list[tuple]:
    batches = txn.scan(T, spec or ScanSpec((ID, NAME)))
    return [tuple(r.values()) for b in batches for r in b.to_pylist()]


@pytest.fixture
def engine(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    engine.create_tablet(T, SCHEMA)
    yield engine
    engine.close()


def test_own_writes_are_visible_before_commit_and_others_see_them_after(engine):
    writer, other = engine.begin(), engine.begin()
    assert writer.insert(T, rows([2, 1])) == 2
    assert read(writer) == [(1, "n1"), (2, "n2")]
    assert read(other) == []
    commit_ts = writer.commit()
    assert commit_ts is not None and commit_ts > writer.snapshot
    assert read(other) == []  # other's snapshot predates the commit
    other.refresh_snapshot()
    assert read(other) == [(1, "n1"), (2, "n2")]


def test_all_writes_of_a_transaction_become_visible_at_one_timestamp(engine):
    txn = engine.begin()
    txn.insert(T, rows([1]))
    txn.insert(T, rows([2]))
    txn.update(T, rows([1], ["changed"]))
    commit_ts = txn.commit()
    reader = engine.begin()
    assert read(reader) == [(1, "changed"), (2, "n2")]
    assert reader.snapshot >= commit_ts


def test_rollback_removes_writes(engine):
    setup = engine.begin()
    setup.insert(T, rows([1]))
    setup.commit()
    txn = engine.begin()
    txn.insert(T, rows([2]))
    txn.update(T, rows([1], ["x"]))
    txn.delete(T, keys([1]))
    txn.rollback()
    txn.rollback()
    assert read(engine.begin()) == [(1, "n1")]
    with pytest.raises(InFailedSqlTransaction):
        txn.insert(T, rows([3]))


def test_duplicate_key_raises_23505_and_leaves_nothing_of_the_batch(engine):
    setup = engine.begin()
    setup.insert(T, rows([1]))
    setup.commit()
    txn = engine.begin()
    txn.insert(T, rows([10]))
    with pytest.raises(UniqueViolation) as info:
        txn.insert(T, rows([11, 1]), constraint_name="people_pkey")
    assert info.value.sqlstate == "23505"
    assert '"people_pkey"' in info.value.message
    assert read(txn) == [(1, "n1"), (10, "n10")]
    with pytest.raises(UniqueViolation):
        txn.insert(T, rows([12, 12]))
    with pytest.raises(UniqueViolation):
        txn.insert(T, rows([10]))  # provisionally inserted by this same transaction
    txn.commit()
    assert read(engine.begin()) == [(1, "n1"), (10, "n10")]


def test_insert_after_delete_is_a_reinsert(engine):
    setup = engine.begin()
    setup.insert(T, rows([1]))
    setup.commit()
    txn = engine.begin()
    assert txn.delete(T, keys([1, 2])) == 1
    assert txn.insert(T, rows([1], ["again"])) == 1
    txn.commit()
    later = engine.begin()
    assert later.delete(T, keys([1])) == 1
    later.commit()
    again = engine.begin()
    again.insert(T, rows([1], ["third"]))
    again.commit()
    assert read(engine.begin()) == [(1, "third")]


def test_update_and_delete_skip_absent_rows_and_count_changes(engine):
    txn = engine.begin()
    txn.insert(T, rows([1, 2, 3]))
    assert txn.update(T, rows([2, 4], ["two", "four"])) == 1
    assert txn.delete(T, keys([3, 5])) == 1
    assert txn.update(T, rows([3], ["gone"])) == 0
    txn.commit()
    assert read(engine.begin()) == [(1, "n1"), (2, "two")]


def test_scan_pushes_predicates_projection_and_limit(engine):
    txn = engine.begin()
    txn.insert(T, rows(list(range(20)), [None if i % 3 == 0 else f"n{i}" for i in range(20)]))
    txn.commit()
    reader = engine.begin(read_only=True)
    spec = ScanSpec(
        (NAME,),
        (ColumnPredicate.range(ID, 5, 15), ColumnPredicate.is_not_null(NAME)),
        limit=4,
    )
    assert read(reader, spec) == [("n5",), ("n7",), ("n8",), ("n10",)]
    assert read(reader, ScanSpec((ID,), (ColumnPredicate.equality(ID, 7),))) == [(7,)]


def test_read_only_transactions_refuse_writes_and_write_no_wal(engine):
    reader = engine.begin(read_only=True)
    with pytest.raises(ReadOnlySqlTransaction):
        reader.insert(T, rows([1]))
    before = engine.wal.durable_lsn
    assert reader.commit() is None
    assert engine.begin().commit() is None
    assert engine.wal.durable_lsn == before


def test_a_transaction_that_wrote_nothing_leaves_no_wal_record(engine):
    txn = engine.begin()
    assert txn.update(T, rows([99])) == 0
    assert txn.commit() is None
    assert engine.wal.durable_lsn == 0


def test_unknown_tablet_is_undefined_table(engine):
    with pytest.raises(UndefinedTable):
        engine.begin().scan(TabletId(404), ScanSpec((ID,)))


def test_commit_twice_is_refused(engine):
    txn = engine.begin()
    txn.insert(T, rows([1]))
    txn.commit()
    with pytest.raises(InFailedSqlTransaction):
        txn.commit()


def test_wait_for_writers_waits_for_those_there_then_and_reads_what_they_committed(engine):
    writer, builder = engine.begin(), engine.begin()
    writer.insert(T, rows([1]))
    seen: list[list] = []
    done = threading.Event()

    def build() -> None:
        builder.wait_for_writers([T], lambda live: seen.append(live), 0)
        done.set()

    thread = threading.Thread(target=build)
    thread.start()
    for _ in range(500):  # until the build has taken its list of writers
        if seen:
            break
        done.wait(0.01)
    assert seen and not done.is_set()
    late = engine.begin()
    late.enlist([T])  # came after the build began: not waited for
    writer.commit()
    assert done.wait(5)
    thread.join()
    assert seen and all(live == [writer] for live in seen)
    assert [tuple(r.values()) for b in builder.scan(T, ScanSpec((ID, NAME)), latest=True)
            for r in b.to_pylist()] == [(1, "n1")]  # fmt: skip
    assert read(builder) == []  # its own snapshot predates the commit
    late.rollback()


def test_wait_for_writers_times_out_with_55P03_and_ignores_itself(engine):
    writer, builder = engine.begin(), engine.begin()
    writer.insert(T, rows([1]))
    builder.insert(T, rows([2]))
    with pytest.raises(LockNotAvailable):
        builder.wait_for_writers([T], lambda live: None, 100)
    builder.wait_for_writers([T], lambda live: None, 100, ignore=writer)
    writer.rollback()
    builder.wait_for_writers([T], lambda live: None, 100)
