"""Session.sync_ready and ready_for_query: one call for what a Sync and its ReadyForQuery
ask of the session, agreeing with the separate calls they stand for."""

from __future__ import annotations

import pytest

from sql.common.result import arrow_batch
from sql.session.database import Database


@pytest.fixture
def db(tmp_path):
    database = Database.open(tmp_path, fsync=False)
    yield database
    database.close()


def _run(session, sql):
    for result in session.execute(sql):
        list(result.batches)


def test_sync_ready_defers_a_commit_to_sync_and_answers_the_rest_itself(db):
    session = db.session("nyala", "nyala", {})
    other = db.session("nyala", "nyala", {})
    _run(session, "create table t (id int primary key)")
    insert = session.prepare("insert into t values ($1)", [0])
    select = session.prepare("select id from t where id = $1", [0])
    session.execute_prepared(insert, [1])
    assert session.sync_writes
    assert session.sync_ready() is None  # a commit to make durable: nothing done
    assert session.transaction_status == "I" and session.sync_writes
    session.sync()
    ready = session.ready_for_query()
    assert ready.status == "I" and ready.parameters == session.reported_parameters()
    assert ready.parameters is session.reported_parameters()
    assert session.backend.state == "idle"
    (seen,) = other.execute("select id from t")
    assert [r["id"] for b in seen.batches for r in b.to_pylist()] == [1]  # committed

    result = session.execute_prepared(select, [1])
    assert [r["id"] for b in result.batches for r in arrow_batch(b).to_pylist()] == [1]
    ready = session.sync_ready()
    assert ready is not None and ready.status == "I" and ready.notifications == []
    assert session.backend.state == "idle"

    _run(session, "begin")
    session.execute_prepared(select, [1])
    ready = session.sync_ready()
    assert ready is not None and ready.status == "T"
    assert session.backend.state == "idle in transaction"
    _run(session, "rollback")
    session.close()
    other.close()


def test_ready_for_query_delivers_notifications_outside_a_transaction(db):
    listener = db.session("nyala", "nyala", {})
    sender = db.session("nyala", "nyala", {})
    _run(listener, "listen ch")
    _run(sender, "notify ch, 'hello'")
    _run(listener, "begin")
    assert listener.ready_for_query().notifications == []  # held until the block ends
    _run(listener, "commit")
    ready = listener.ready_for_query()
    assert [(n.channel, n.payload) for n in ready.notifications] == [("ch", "hello")]
    listener.close()
    sender.close()
