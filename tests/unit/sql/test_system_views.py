from __future__ import annotations

from sql import system_views
from sql.database import Database


def test_nyala_tablets_lists_every_tablet_with_its_rows(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    for sql in (
        "create table h (k int primary key) partition by hash (k) partitions 4",
        "insert into h select g from generate_series(1, 40) g",
    ):
        for result in session.execute(sql):
            list(result.batches)
    txn = db.engine.begin(read_only=True)
    view = system_views.find(system_views.TABLETS)
    contents = system_views.contents(view, db.catalog, txn).to_pylist()
    txn.rollback()
    assert [row["table_name"] for row in contents] == ["h"] * 4
    assert sum(row["rows"] for row in contents) == 40
    assert sorted(row["hash_buckets"] for row in contents) == ["0", "1", "2", "3"]
    assert system_views.contents(view, db.catalog, None).num_rows == 0
    session.close()
    db.close()
