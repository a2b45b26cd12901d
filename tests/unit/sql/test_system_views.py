from __future__ import annotations

import time

from sql.execution import system_view_rows
from sql.planner import system_views
from sql.session.database import Database
from storage.maintenance_manager import MaintenanceOp, OpRecord, OpResult, OpStats


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


def test_nyala_maintenance_lists_registered_and_finished_ops(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    for sql in (
        "create table m (k int primary key, v int)",
        "insert into m select g, g from generate_series(1, 1000) g",
        "checkpoint",
        "update m set v = v + 1",
        "checkpoint",
    ):
        list(session.execute(sql))
    tablet = db.engine.tablet(db.catalog.get_table("m").tablet_ids[0])
    rowset_id = tablet.rowsets[0].rowset_id
    assert tablet.compact_deltas(rowset_id, major=True, history_cutoff=0) is not None
    db.engine.maintenance.run_once()
    results = list(
        session.execute(
            "select op, state, kind, score >= 0 as scored, reason is not null as why"
            " from nyala_maintenance where state = 'registered' order by op"
        )
    )
    rows = [tuple(r.values()) for b in results[-1].batches for r in b.to_pylist()]
    kinds = {r[2] for r in rows}
    assert {"FlushOp", "MajorDeltaCompactionOp", "MinorDeltaCompactionOp"} <= kinds
    assert all(r[1] == "registered" and r[3] and r[4] for r in rows)
    results = list(
        session.execute(
            "select redo_delta_files, undo_delta_files, undo_delta_bytes > 0 as u, base_bytes > 0 as b"
            " from nyala_rowsets where table_name = 'm' and kind = 'DiskRowSet'"
        )
    )
    rows = [tuple(r.values()) for b in results[-1].batches for r in b.to_pylist()]
    assert rows == [(0, 2, True, True)]
    session.close()
    db.close()


def _rows(session, sql):
    results = list(session.execute(sql))
    return [tuple(r.values()) for b in results[-1].batches for r in b.to_pylist()]


def test_nyala_progress_maintenance_lists_the_running_ops_with_their_table(tmp_path, monkeypatch):
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    list(session.execute("create table p (k int primary key)"))
    tablet_id = db.catalog.get_table("p").tablet_ids[0]
    started = time.time() - 2
    running = OpRecord(
        f"FlushOp({tablet_id})", "FlushOp", tablet_id, "running", 1.0, "MemRowSet 70 MB", started
    )
    done = OpRecord("FlushOp(99)", "FlushOp", 99, "done", 1.0, "", started, 0.5)
    monkeypatch.setattr(db.engine, "maintenance_status", lambda: [running, done])
    rows = _rows(
        session,
        "select table_name, tablet_id, op, kind, reason, elapsed_ms >= 2000,"
        " extract(epoch from started_at) from nyala_progress_maintenance",
    )
    assert len(rows) == 1
    assert rows[0][:6] == (
        "p",
        tablet_id,
        f"FlushOp({tablet_id})",
        "FlushOp",
        "MemRowSet 70 MB",
        True,
    )
    assert abs(float(rows[0][6]) - started) < 0.001
    session.close()
    db.close()


class _Compaction(MaintenanceOp):
    kind = "CompactRowSetsOp"

    def stats(self) -> OpStats:
        return OpStats(True, 1.0, "test")

    def perform(self) -> OpResult:
        return OpResult()


def test_compactions_are_pg_stat_user_tables_autovacuums(tmp_path, monkeypatch):
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    list(session.execute("create table c (k int primary key, v int)"))
    tablet_id = db.catalog.get_table("c").tablet_ids[0]
    query = "select autovacuum_count, last_autovacuum is not null from pg_stat_user_tables"
    assert _rows(session, query) == [(0, False)]
    # The background workers would pick the always-runnable op too, any number of times.
    db.engine.maintenance.shutdown()
    monkeypatch.setattr(db.engine.maintenance, "_ops", lambda: [_Compaction(tablet_id)])
    assert db.engine.maintenance.run_once()
    assert _rows(session, query) == [(1, True)]
    session.close()
    db.close()
