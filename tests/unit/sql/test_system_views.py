from __future__ import annotations

from sql.execution import system_view_rows
from sql.planner import system_views
from sql.session.database import Database


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
    contents = system_view_rows.contents(view, db.catalog, txn).to_pylist()
    txn.rollback()
    assert [row["table_name"] for row in contents] == ["h"] * 4
    assert sum(row["rows"] for row in contents) == 40
    assert sorted(row["hash_buckets"] for row in contents) == ["0", "1", "2", "3"]
    assert system_view_rows.contents(view, db.catalog, None).num_rows == 0
    session.close()
    db.close()


def test_nyala_rowsets_shows_the_memrowset_and_each_flushed_diskrowset(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    for sql in (
        "create table r (k int primary key, v text)",
        "insert into r select g, 'v' from generate_series(1, 100) g",
        "checkpoint",
        "insert into r values (1000, 'late')",
        "update r set v = 'w' where k = 5",
        "select table_name, kind, rows, bytes_on_disk > 0 as on_disk,"
        " delta_memstore_rows from nyala_rowsets order by kind",
    ):
        results = list(session.execute(sql))
    rows = [tuple(r.values()) for b in results[-1].batches for r in b.to_pylist()]
    assert rows == [("r", "DiskRowSet", 100, True, 1), ("r", "MemRowSet", 1, False, None)]
    txn = db.engine.begin(read_only=True)
    tablets = system_view_rows.contents(system_views.find(system_views.TABLETS), db.catalog, txn)
    txn.rollback()
    assert tablets.column("bytes_on_disk").to_pylist()[0] > 0
    session.close()
    db.close()
