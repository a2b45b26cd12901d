from __future__ import annotations

import pytest

from sql.session.database import Database
from storage import errors
from storage.data_type import INT32
from storage.key_encoding import encode_key


@pytest.fixture
def db(tmp_path):
    database = Database.open(tmp_path, fsync=False)
    yield database
    database.close()


def run(db, sql):
    session = db.session("nyala", "nyala", {})
    try:
        for result in session.execute(sql):
            list(result.batches)
    finally:
        session.close()


def test_ranges_are_encoded_lower_inclusive_upper_exclusive(db):
    run(
        db,
        "create table t (a int primary key) partition by range (a) "
        "(partition values < 5, partition 5 <= values <= 9, partition 9 < values)",
    )
    table = db.catalog.get_table("t")
    five, nine = encode_key([5], [INT32]), encode_key([9], [INT32])
    ranges = [(p.range.lower, p.range.upper) for p in table.partitions]
    assert ranges == [(None, five), (five, nine + b"\x00"), (nine + b"\x00", None)]
    assert [p.range.describe() for p in table.partitions] == [
        "VALUES < 5",
        "5 <= VALUES <= 9",
        "9 < VALUES",
    ]


def test_partition_rules(db):
    with pytest.raises(errors.FeatureNotSupported):  # PostgreSQL's rule for its own syntax
        run(db, "create table t (a int, b int, primary key (a)) partition by range (b)")
    with pytest.raises(errors.InvalidTableDefinition):
        run(
            db,
            "create table t (a int, b int, primary key (a)) partition by range (b) (partition values < 5)",
        )
    with pytest.raises(errors.InvalidTableDefinition):
        run(db, "create table t (a int primary key) partition by hash (a) partitions 1")
    with pytest.raises(errors.InvalidObjectDefinition):
        run(
            db,
            "create table t (a int primary key) partition by range (a) "
            "(partition values < 5, partition 3 <= values)",
        )
    with pytest.raises(errors.InvalidObjectDefinition):
        run(
            db,
            "create table t (a int primary key) partition by range (a) (partition 5 <= values < 5)",
        )
    with pytest.raises(errors.InvalidObjectDefinition):
        run(db, "create table t (a int, b int) partition by list (a, b)")
    assert db.catalog.find_table("t") is None


def test_add_and_drop_ranges_in_one_alter_and_drop_of_a_missing_range(db):
    run(
        db,
        "create table t (a int primary key) partition by hash (a) partitions 2, range (a) (partition values < 5)",
    )
    run(db, "alter table t add range partition 5 <= values < 10, drop range partition values < 5")
    table = db.catalog.get_table("t")
    assert {p.range.describe() for p in table.partitions} == {"5 <= VALUES < 10"}
    assert len(table.tablet_ids) == 2
    with pytest.raises(errors.UndefinedTable):
        run(db, "alter table t drop range partition values < 5")
    with pytest.raises(errors.InvalidObjectDefinition):
        run(db, "alter table t add range partition 1 <= values < 6")
