import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from storage.data_type import DATE, DOUBLE, INT64, STRING, TIMESTAMPTZ, ColumnId, TabletId, decimal
from storage.engine import StorageEngine
from storage.errors import AdminShutdown, FeatureNotSupported, UndefinedTable
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema

ID, NAME = ColumnId(1), ColumnId(2)
SCHEMA = Schema(
    (ColumnSchema(ID, "id", INT64, nullable=False), ColumnSchema(NAME, "name", STRING)), 1
)
OPTIONS = StorageOptions(fsync=False)


def rows(ids: list[int], name: str = "x") -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array([name] * len(ids), pa.string())], names=["1", "2"]
    )


def read(engine: StorageEngine, tablet_id: TabletId) -> list[tuple]:
    txn = engine.begin(read_only=True)
    schema = engine.schema(tablet_id)
    batches = txn.scan(tablet_id, ScanSpec(schema.column_ids))
    return [tuple(r.values()) for b in batches for r in b.to_pylist()]


def test_reopen_replays_committed_writes_but_not_rolled_back_or_open_ones(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=True))
    engine.create_tablet(TabletId(1), SCHEMA)
    txn = engine.begin()
    txn.insert(TabletId(1), rows([1, 2, 3], "a"))
    txn.commit()
    txn = engine.begin()
    txn.update(TabletId(1), rows([2], "b"))
    txn.delete(TabletId(1), rows([3]))
    txn.insert(TabletId(1), rows([4], "c"))
    last_ts = txn.commit()
    lost = engine.begin()
    lost.insert(TabletId(1), rows([5], "rolled back"))
    lost.rollback()
    never = engine.begin()
    never.insert(TabletId(1), rows([6], "never committed"))
    expected = read(engine, TabletId(1))
    engine.close()

    reopened = StorageEngine.open(tmp_path, OPTIONS)
    assert reopened.tablet_ids() == [TabletId(1)]
    assert read(reopened, TabletId(1)) == expected == [(1, "a"), (2, "b"), (4, "c")]
    assert reopened.now() > last_ts
    txn = reopened.begin()
    txn.insert(TabletId(1), rows([3], "reinserted"))
    txn.commit()
    reopened.close()
    assert read(StorageEngine.open(tmp_path, OPTIONS), TabletId(1))[2] == (3, "reinserted")


def test_one_transaction_across_tablets_replays_whole(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    for tablet_id in (TabletId(1), TabletId(2)):
        engine.create_tablet(tablet_id, SCHEMA)
    txn = engine.begin()
    txn.insert(TabletId(1), rows([1]))
    txn.insert(TabletId(2), rows([2]))
    txn.commit()
    engine.close()
    reopened = StorageEngine.open(tmp_path, OPTIONS)
    assert read(reopened, TabletId(1)) == [(1, "x")]
    assert read(reopened, TabletId(2)) == [(2, "x")]


def test_dropped_tablets_vanish_and_their_wal_records_are_skipped(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TabletId(1), SCHEMA)
    engine.create_tablet(TabletId(2), SCHEMA)
    txn = engine.begin()
    txn.insert(TabletId(1), rows([1]))
    txn.insert(TabletId(2), rows([2]))
    txn.commit()
    engine.drop_tablet(TabletId(1))
    assert not engine.has_tablet(TabletId(1))
    assert not (tmp_path / "tablets" / "1").exists()
    with pytest.raises(UndefinedTable):
        engine.drop_tablet(TabletId(1))
    engine.close()
    reopened = StorageEngine.open(tmp_path, OPTIONS)
    assert reopened.tablet_ids() == [TabletId(2)]
    assert read(reopened, TabletId(2)) == [(2, "x")]


def test_a_tablet_directory_without_metadata_is_removed_at_open(tmp_path):
    StorageEngine.open(tmp_path, OPTIONS).close()
    (tmp_path / "tablets" / "7").mkdir()
    engine = StorageEngine.open(tmp_path, OPTIONS)
    assert engine.tablet_ids() == []
    assert not (tmp_path / "tablets" / "7").exists()


def test_a_torn_wal_tail_loses_only_the_unfinished_commit(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TabletId(1), SCHEMA)
    for i in range(3):
        txn = engine.begin()
        txn.insert(TabletId(1), rows([i]))
        txn.commit()
    engine.close()
    segment = sorted((tmp_path / "wal").iterdir())[-1]
    segment.write_bytes(segment.read_bytes()[:-5])
    assert read(StorageEngine.open(tmp_path, OPTIONS), TabletId(1)) == [(0, "x"), (1, "x")]


def test_every_column_type_survives_a_reopen(tmp_path):
    schema = Schema(
        (
            ColumnSchema(ColumnId(1), "d", DATE, nullable=False),
            ColumnSchema(ColumnId(2), "t", TIMESTAMPTZ, nullable=False),
            ColumnSchema(ColumnId(3), "n", decimal(12, 3)),
            ColumnSchema(ColumnId(4), "f", DOUBLE),
        ),
        2,
    )
    values = [
        dt.date(2024, 2, 29),
        dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC),
        Decimal("-12.345"),
        2.5,
    ]
    batch = pa.RecordBatch.from_arrays(
        [pa.array([v], c.type.arrow_type) for v, c in zip(values, schema.columns)],
        names=["1", "2", "3", "4"],
    )
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TabletId(5), schema)
    txn = engine.begin()
    txn.insert(TabletId(5), batch)
    txn.commit()
    engine.close()
    assert read(StorageEngine.open(tmp_path, OPTIONS), TabletId(5)) == [tuple(values)]


def test_schema_and_tablet_bookkeeping(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TabletId(3), SCHEMA)
    assert engine.has_tablet(TabletId(3)) and engine.schema(TabletId(3)) == SCHEMA
    bad = Schema((ColumnSchema(ColumnId(1), "f", DOUBLE, nullable=False),), 1)
    with pytest.raises(FeatureNotSupported):
        engine.create_tablet(TabletId(4), bad)
    engine.close()
    with pytest.raises(AdminShutdown):
        engine.begin()
