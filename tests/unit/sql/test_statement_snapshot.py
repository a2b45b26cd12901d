"""One snapshot per autocommit statement (the transaction's own, taken as it begins for the
statement), and still every commit acknowledged before a statement began in its snapshot:
through the spare transaction a direct read leaves behind, in a READ COMMITTED block, and
under REPEATABLE READ (whose snapshot is its first statement's, not BEGIN's)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql.common.result import arrow_batch
from sql.session.database import Database
from sql.session.session import Session


@pytest.fixture
def db(tmp_path: Any) -> Iterator[Database]:
    database = Database.open(tmp_path, fsync=False)
    yield database
    database.close()


def _run(session: Session, sql: str) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for result in session.execute(sql):
        out = [tuple(r.values()) for b in map(arrow_batch, result.batches) for r in b.to_pylist()]
    return out


def _prepared(session: Session, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Parse, Bind/Execute, Sync as the extended protocol does (its direct-read path)."""
    stmt = session.prepare(sql, [])
    result = session.execute_prepared(stmt, params)
    rows = [tuple(r.values()) for b in map(arrow_batch, result.batches) for r in b.to_pylist()]
    session.sync()
    return rows


@pytest.fixture
def pair(db: Database) -> Iterator[tuple[Session, Session]]:
    reader, writer = db.session("nyala", "nyala", {}), db.session("nyala", "nyala", {})
    _run(writer, "create table snap_t (id int primary key, v int)")
    _run(writer, "insert into snap_t values (1, 0), (2, 0)")
    yield reader, writer
    reader.close()
    writer.close()


def _count_safe_times(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    mvcc = db.engine.pipeline.mvcc
    calls = [0]
    original = mvcc.safe_time

    def counted() -> Any:
        calls[0] += 1
        return original()

    monkeypatch.setattr(mvcc, "safe_time", counted)
    return calls


def test_a_prepared_point_read_takes_one_snapshot(
    db: Database, pair: tuple[Session, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _ = pair
    sql = "select v from snap_t where id = $1"
    _prepared(reader, sql, [1])  # leaves the spare transaction behind
    calls = _count_safe_times(db, monkeypatch)
    for _ in range(5):
        assert _prepared(reader, sql, [1]) == [(0,)]
    assert calls[0] == 5


def test_the_spare_transaction_sees_every_commit_before_the_statement(
    pair: tuple[Session, Session],
) -> None:
    reader, writer = pair
    sql = "select v from snap_t where id = $1"
    for value in range(1, 6):
        _run(writer, f"update snap_t set v = {value} where id = 1")
        assert _prepared(reader, sql, [1]) == [(value,)]
        _run(writer, f"delete from snap_t where id = 2 and v = {value - 1}")
        _run(writer, f"insert into snap_t values (2, {value})")
        assert _prepared(reader, sql, [2]) == [(value,)]


def test_read_committed_block_sees_commits_after_begin(pair: tuple[Session, Session]) -> None:
    reader, writer = pair
    _run(reader, "begin")
    _run(writer, "update snap_t set v = 7 where id = 1")
    assert _run(reader, "select v from snap_t where id = 1") == [(7,)]
    _run(writer, "update snap_t set v = 8 where id = 1")
    assert _prepared(reader, "select v from snap_t where id = $1", [1]) == [(8,)]
    _run(reader, "commit")


def test_repeatable_read_snapshot_is_the_first_statements(pair: tuple[Session, Session]) -> None:
    reader, writer = pair
    _run(reader, "begin isolation level repeatable read")
    _run(writer, "update snap_t set v = 7 where id = 1")
    assert _run(reader, "select v from snap_t where id = 1") == [(7,)]
    _run(writer, "update snap_t set v = 8 where id = 1")
    assert _prepared(reader, "select v from snap_t where id = $1", [1]) == [(7,)]
    _run(reader, "commit")
    assert _prepared(reader, "select v from snap_t where id = $1", [1]) == [(8,)]
