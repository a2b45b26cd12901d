"""Many sessions incrementing one row, as pgbench's TPC-B does with its branch row, run on
nyala and on PostgreSQL 15 in the same test with the same answers.

The increments are prepared (``v = v + $1``, the key-write path), so a waiter's
READ COMMITTED re-check re-applies the increment to the row's newest version there.
Under READ COMMITTED nothing is lost; under REPEATABLE READ a waiter fails with 40001
exactly where PostgreSQL's does: when the holder it waited for committed a change, and
not when the holder rolled back.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e

SESSIONS = 6
INCREMENTS = 15
INCREMENT = "update hot set v = v + %s where k = %s"


def _fresh(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists hot")
        conn.execute("create table hot (k int primary key, v bigint not null)")
        conn.execute("insert into hot select i, 0 from generate_series(1, 10) i")


def _read_committed_increments(dsn: str) -> list[tuple[int, int]]:
    """SESSIONS sessions each commit INCREMENTS blocks that add 1 to row 1 and to a row of
    their own, holding row 1's lock across their second statement (as TPC-B's branch)."""
    _fresh(dsn)
    conns = [psycopg.connect(dsn) for _ in range(SESSIONS)]
    failures: list[BaseException] = []

    def work(number: int, conn: psycopg.Connection) -> None:
        try:
            for _ in range(INCREMENTS):
                conn.execute(INCREMENT, (1, 1), prepare=True)
                conn.execute(INCREMENT, (1, 2 + number), prepare=True)
                conn.commit()
        except BaseException as exc:
            failures.append(exc)

    workers = [threading.Thread(target=work, args=pair) for pair in enumerate(conns)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    for conn in conns:
        conn.close()
    assert not failures, failures
    with psycopg.connect(dsn) as conn:
        return conn.execute("select k, v from hot order by k").fetchall()


def test_read_committed_increments_of_one_row_lose_nothing(
    nyala_server: NyalaServer, postgres_server: PostgresServer
):
    ours = _read_committed_increments(nyala_server.dsn)
    theirs = _read_committed_increments(postgres_server.dsn)
    assert ours == theirs
    assert ours[0] == (1, SESSIONS * INCREMENTS)
    assert ours[1 : 1 + SESSIONS] == [(2 + n, INCREMENTS) for n in range(SESSIONS)]


def _lock_waiters(watcher: psycopg.Connection) -> int:
    row = watcher.execute(
        "select count(*) from pg_stat_activity where wait_event_type = 'Lock' "
        "and query like 'update hot%'"
    ).fetchone()
    assert row is not None
    return int(row[0])


def _wait_for_waiters(watcher: psycopg.Connection, count: int) -> None:
    deadline = time.monotonic() + 30
    while _lock_waiters(watcher) < count:
        assert time.monotonic() < deadline, f"{count} lock waiters never showed"
        time.sleep(0.02)


def _outcome(future: Future[str]) -> str:
    try:
        return future.result(timeout=30)
    except errors.SerializationFailure:
        return "40001"


def _repeatable_read_waiters(dsn: str, holder_ends: str) -> list[str]:
    """A holder updates row 1; SESSIONS - 1 REPEATABLE READ sessions, whose snapshots were
    taken before, queue for it one after another; the holder ends with ``holder_ends``, then
    each session that got through commits in turn.  Returns each waiter's outcome, in the
    order they queued, then row 1's value."""
    _fresh(dsn)
    holder = psycopg.connect(dsn)
    waiters = [psycopg.connect(dsn) for _ in range(SESSIONS - 1)]
    watcher = psycopg.connect(dsn, autocommit=True)
    for conn in waiters:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.execute("select v from hot where k = 1").fetchone()
    holder.execute(INCREMENT, (100, 1), prepare=True)
    futures: list[Future[str]] = []
    with ThreadPoolExecutor(SESSIONS) as pool:
        for number, conn in enumerate(waiters):

            def increment(conn: psycopg.Connection = conn) -> str:
                return conn.execute(INCREMENT, (1, 1), prepare=True).statusmessage or ""

            futures.append(pool.submit(increment))
            _wait_for_waiters(watcher, number + 1)
        getattr(holder, holder_ends)()
        outcomes = []
        for conn, future in zip(waiters, futures, strict=True):
            outcome = _outcome(future)
            outcomes.append(outcome)
            if outcome == "40001":
                conn.rollback()
            else:
                conn.commit()
    row = watcher.execute("select v from hot where k = 1").fetchone()
    assert row is not None
    for conn in (holder, watcher, *waiters):
        conn.close()
    return [*outcomes, str(row[0])]


@pytest.mark.parametrize("holder_ends", ["commit", "rollback"])
def test_repeatable_read_waiters_fail_40001_where_postgres_does(
    nyala_server: NyalaServer, postgres_server: PostgresServer, holder_ends: str
):
    ours = _repeatable_read_waiters(nyala_server.dsn, holder_ends)
    theirs = _repeatable_read_waiters(postgres_server.dsn, holder_ends)
    assert ours == theirs
    if holder_ends == "commit":
        assert ours == ["40001"] * (SESSIONS - 1) + ["100"]
    else:
        assert ours == ["UPDATE 1"] + ["40001"] * (SESSIONS - 2) + ["1"]
