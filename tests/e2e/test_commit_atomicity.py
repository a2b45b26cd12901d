"""A transaction over many tablets and tables is all or nothing across kill -9 and restart.

The commit of a large multi-tablet transaction is killed at several moments
after COMMIT is sent (before, during and after its WAL record is written);
each restart must show either every row of it or none.  What a savepoint
rolled back must never come back through WAL replay.
"""

from __future__ import annotations

import contextlib
import threading
import time

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROWS = 40_000
KILL_DELAYS_S = (0.0, 0.002, 0.004, 0.008, 0.016, 0.3)


def _setup(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "create table events (id bigint primary key, note text) "
            "partition by hash (id) partitions 16"
        )
        conn.execute("create table audit (id bigint primary key, n int)")
        conn.execute("insert into audit values (0, 0)")


def _counts(dsn: str) -> tuple[int, int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        events = conn.execute("select count(*) from events").fetchone()[0]
        audit = conn.execute("select n from audit where id = 0").fetchone()[0]
    return events, audit


def test_kill9_during_a_multi_tablet_commit_is_all_or_nothing(fresh_nyala_server):
    server = fresh_nyala_server
    _setup(server.dsn)
    committed_rounds = 0
    for round_number, delay in enumerate(KILL_DELAYS_S, start=1):
        conn = psycopg.connect(server.dsn)
        start = round_number * ROWS
        with conn.cursor() as cur:
            cur.execute(
                "insert into events select g, 'round ' || g from generate_series(%s, %s) g",
                (start, start + ROWS - 1),
            )
            cur.execute("update audit set n = n + 1 where id = 0")
        done = threading.Event()

        def commit(connection: psycopg.Connection = conn, finished: threading.Event = done) -> None:
            with contextlib.suppress(psycopg.Error):
                connection.commit()
                finished.set()

        worker = threading.Thread(target=commit)
        worker.start()
        time.sleep(delay)
        server.kill9()
        worker.join(timeout=60)
        with contextlib.suppress(psycopg.Error):
            conn.close()
        server.start()
        events, audit = _counts(server.dsn)
        assert events in (committed_rounds * ROWS, (committed_rounds + 1) * ROWS), (delay, events)
        if done.is_set():
            assert events == (committed_rounds + 1) * ROWS, (delay, events)
        if events == (committed_rounds + 1) * ROWS:
            committed_rounds += 1  # durable, whether or not the client heard back
        assert audit == committed_rounds, (delay, events, audit)


def test_savepoint_rollback_never_replays(fresh_nyala_server):
    server = fresh_nyala_server
    _setup(server.dsn)
    with psycopg.connect(server.dsn) as conn:
        conn.execute("insert into events select g, 'kept' from generate_series(1, 1000) g")
        conn.execute("savepoint s")
        conn.execute("insert into events select g, 'undone' from generate_series(1001, 2000) g")
        conn.execute("update events set note = 'undone' where id <= 10")
        conn.execute("delete from events where id between 11 and 20")
        conn.execute("update audit set n = 99 where id = 0")
        conn.execute("rollback to savepoint s")
        conn.execute("update events set note = 'changed' where id <= 5")
        conn.commit()
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        rows = conn.execute("select note, count(*) from events group by note order by note")
        assert rows.fetchall() == [("changed", 5), ("kept", 995)]
        assert conn.execute("select n from audit").fetchone() == (0,)
