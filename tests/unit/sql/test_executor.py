from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from sql.execution.executor import ScanSource, run
from sql.session.database import Database
from storage.errors import DivisionByZero
from storage.predicate import ScanSpec


@pytest.fixture
def db(tmp_path):
    database = Database.open(tmp_path, fsync=False)
    session = database.session("nyala", "nyala", {})
    for _ in session.execute(
        "create table t (id int primary key, s text); insert into t values (1, 'a'), (2, 'b')"
    ):
        pass
    session.close()
    yield database
    database.close()


def test_a_scan_source_can_be_opened_many_times(db):
    table = db.catalog.get_table("t")
    txn = db.engine.begin(read_only=True)
    columns = list(table.columns)
    spec = ScanSpec(projection=tuple(c.id for c in columns))
    source = ScanSource(txn, table, columns, spec, lambda: None)
    duck = duckdb.connect()
    duck.register("v", source)
    assert duck.sql("select count(*) from v a join v b on a.id = b.id").fetchall() == [(2,)]
    assert duck.sql("select s from v order by id").fetchall() == [("a",), ("b",)]
    txn.rollback()


def test_an_empty_projection_still_counts_rows(db):
    table = db.catalog.get_table("t")
    txn = db.engine.begin(read_only=True)
    duck = duckdb.connect()
    spec = ScanSpec(projection=(table.schema.key_columns[0].id,))
    duck.register("v", ScanSource(txn, table, [], spec, lambda: None))
    assert duck.sql("select count(*) from v").fetchall() == [(2,)]


def test_errors_raised_while_streaming_are_translated():
    duck = duckdb.connect()
    duck.register("n", pa.table({"x": pa.array([1, 0], pa.int32())}))
    with pytest.raises(DivisionByZero):
        _, batches = run(duck, "select 10 // x from n", None)
        list(batches)
