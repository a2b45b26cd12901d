"""A kill -9 in the middle of bulk loads: committed COPYs (MemRowSet insert segments, some
flushed by a CHECKPOINT, some changed after) come back whole from the WAL and the rowsets;
a COPY in flight and a transaction holding a loaded but uncommitted segment leave nothing."""

from __future__ import annotations

import contextlib
import threading

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROWS = 3_000


def _copy(conn: psycopg.Connection, keys: range) -> None:
    with conn.cursor() as cur, cur.copy("copy t from stdin") as copy:
        for k in keys:
            copy.write_row((k, k * 7, f"row {k}"))


def test_kill9_mid_bulk_load_keeps_exactly_the_committed_loads(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table t (k bigint primary key, v bigint, s text)")
        _copy(conn, range(0, ROWS))
        conn.execute("update t set v = -1 where k % 100 = 0")
        conn.execute("delete from t where k between 10 and 19")
    held = psycopg.connect(server.dsn)
    _copy(held, range(ROWS, 2 * ROWS))  # loaded, never committed
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("checkpoint")  # flushes the committed load, keeps the held one in memory
        _copy(conn, range(2 * ROWS, 3 * ROWS))
        conn.execute("update t set s = 'changed' where k in (5, 2005, 6005)")

    streaming = psycopg.connect(server.dsn)
    started = threading.Event()

    def stream() -> None:
        with (
            contextlib.suppress(psycopg.Error),
            streaming.cursor() as cur,
            cur.copy("copy t from stdin") as copy,
        ):
            for k in range(10 * ROWS, 100 * ROWS):
                copy.write_row((k, k, "in flight"))
                if k == 10 * ROWS + ROWS:
                    started.set()

    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    assert started.wait(60)
    server.kill9()
    thread.join(60)
    for conn in (held, streaming):
        with contextlib.suppress(psycopg.Error):
            conn.close()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        count, low, high, total = conn.execute(
            "select count(*), min(k), max(k), sum(v) from t"
        ).fetchone()
        live = [k for k in (*range(0, ROWS), *range(2 * ROWS, 3 * ROWS)) if not 10 <= k <= 19]
        expected_sum = sum(-1 if k < ROWS and k % 100 == 0 else k * 7 for k in live)
        assert (count, low, high, total) == (len(live), 0, 3 * ROWS - 1, expected_sum)
        changed = conn.execute("select k from t where s = 'changed' order by k").fetchall()
        assert changed == [(5,), (2005,), (6005,)]
        # The keys the lost loads held are free again.
        conn.execute("insert into t values (%s, 0, 'after'), (%s, 0, 'after')", (ROWS, 10 * ROWS))
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into t values (2500, 0, 'dup')")
