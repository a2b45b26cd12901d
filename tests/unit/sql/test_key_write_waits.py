"""A by-key UPDATE that waits for a row lock: on its session's thread it re-applies its SET to
the row's newest version on the key-write path (READ COMMITTED's re-check), never the general
one; on the event loop it refuses at once a row others already wait in line for, before it
reads or computes anything."""

from __future__ import annotations

import threading
import time

import pytest

from sql.common.result import MustWait
from sql.dml import recheck, row_updates
from sql.session.database import Database

INCREMENT = "update hot set v = v + $1 where k = $2"


@pytest.fixture
def db(tmp_path, monkeypatch):
    def general(*args, **kwargs):
        raise AssertionError("the general write path ran")

    monkeypatch.setattr(recheck, "modify", general)
    database = Database.open(tmp_path, fsync=False)
    setup = database.session("nyala", "nyala", {})
    for statement in (
        "create table hot (k int primary key, v bigint not null)",
        "insert into hot values (1, 0), (2, 0)",
    ):
        for _ in setup.execute(statement):
            pass
    setup.close()
    yield database
    database.close()


def _run(session, sql, params=(), inline=False):
    stmt = session.prepare(sql, [])
    result = session.execute_prepared(stmt, list(params), inline=inline)
    list(result.batches or [])
    session.sync()
    return result.command_tag


def _value(db, key):
    session = db.session("nyala", "nyala", {})
    try:
        (result,) = session.execute(f"select v from hot where k = {key}")
        return [row["v"] for batch in result.batches for row in batch.to_pylist()]
    finally:
        session.close()


def _wait_for_waiters(db, count):
    deadline = time.monotonic() + 30
    while db.engine.pipeline.row_locks.waiting() < count:
        assert time.monotonic() < deadline, "the waiter never queued"
        time.sleep(0.005)


def test_a_waiting_increment_re_applies_to_the_newest_version_on_the_key_write_path(db):
    holder = db.session("nyala", "nyala", {})
    waiters = [db.session("nyala", "nyala", {}) for _ in range(3)]
    _run(holder, "begin")
    assert _run(holder, INCREMENT, [10, 1]) == "UPDATE 1"
    tags: list[str | None] = []
    threads = [
        threading.Thread(target=lambda s=s: tags.append(_run(s, INCREMENT, [1, 1])))
        for s in waiters
    ]
    for number, thread in enumerate(threads):
        thread.start()
        _wait_for_waiters(db, number + 1)
    _run(holder, "commit")
    for thread in threads:
        thread.join(timeout=30)
    assert tags == ["UPDATE 1"] * 3
    assert _value(db, 1) == [13]
    for session in (holder, *waiters):
        session.close()


def test_on_the_event_loop_a_row_with_waiters_is_refused_before_it_is_read(db, monkeypatch):
    holder, waiter, late = (db.session("nyala", "nyala", {}) for _ in range(3))
    _run(holder, "begin")
    _run(holder, INCREMENT, [10, 1])
    thread = threading.Thread(target=_run, args=(waiter, INCREMENT, [1, 1]))
    thread.start()
    _wait_for_waiters(db, 1)
    reads: list[object] = []
    read = row_updates._current_row
    monkeypatch.setattr(row_updates, "_current_row", lambda *a: reads.append(a) or read(*a))
    with pytest.raises(MustWait):
        _run(late, INCREMENT, [1, 1], inline=True)
    assert reads == []
    # A row nobody waits for is read and written on the event loop as before.
    assert _run(late, INCREMENT, [1, 2], inline=True) == "UPDATE 1"
    assert len(reads) == 1
    _run(holder, "commit")
    thread.join(timeout=30)
    assert _run(late, INCREMENT, [1, 1]) == "UPDATE 1"
    assert _value(db, 1) == [12]
    assert _value(db, 2) == [1]
    for session in (holder, waiter, late):
        session.close()
