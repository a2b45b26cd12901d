"""CHECKPOINT flushes tables to DiskRowSets; a kill -9 before, during or after it loses nothing.

The server writes a flush under ``rowset-<id>.tmp`` and names it in the
tablet metadata only once it is whole, so the test watches the data
directory for that temporary directory and kills the server the moment it
appears: the restarted server must open with every committed row and
nothing else.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROWS = 60_000


def _load(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create table big (id bigint primary key, color text, n integer)")
        conn.execute(
            "insert into big select i, case when i % 3 = 0 then 'red' else 'blue' end, i % 100 "
            f"from generate_series(1, {ROWS}) as s(i)"
        )
        conn.execute("update big set n = -1 where id <= 10")
        conn.execute("delete from big where id > %s", (ROWS - 5,))


def _check(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("select count(*), sum(id) from big").fetchone() == (
            ROWS - 5,
            sum(range(1, ROWS - 4)),
        )
        assert conn.execute("select count(*) from big where n = -1").fetchone() == (10,)
        assert conn.execute("select count(*) from big where color = 'red'").fetchone() == (
            (ROWS - 5) // 3,
        )
        conn.execute("insert into big values (%s, 'green', 1)", (ROWS,))
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into big values (1, 'dup', 1)")


def test_checkpoint_then_kill9_keeps_every_row_and_frees_wal(fresh_nyala_server):
    server = fresh_nyala_server
    _load(server.dsn)
    wal_before = sum(p.stat().st_size for p in (server.data_dir / "wal").iterdir())
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("checkpoint").statusmessage == "CHECKPOINT"
    wal_after = sum(p.stat().st_size for p in (server.data_dir / "wal").iterdir())
    assert wal_after < wal_before
    assert list((server.data_dir / "tablets").glob("*/rowset-*/col-*.cfile"))
    server.kill9()
    server.start()
    _check(server.dsn)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("update big set color = 'after' where id = 2")
        conn.execute("delete from big where id = 3")
        conn.execute("insert into big values (3, 'reinserted', 0)")
        conn.execute("checkpoint")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        rows = conn.execute("select id, color from big where id in (2, 3) order by id").fetchall()
        assert rows == [(2, "after"), (3, "reinserted")]


def test_kill9_during_a_flush_opens_with_every_committed_row(fresh_nyala_server):
    server = fresh_nyala_server
    _load(server.dsn)
    tablets = server.data_dir / "tablets"
    errors: list[BaseException] = []

    def checkpoint() -> None:
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                conn.execute("checkpoint")
        except psycopg.Error as exc:
            errors.append(exc)

    runner = threading.Thread(target=checkpoint)
    runner.start()
    seen_tmp = False
    while runner.is_alive() and not seen_tmp:
        seen_tmp = any(tablets.glob("*/rowset-*.tmp"))
        time.sleep(0.001)
    server.kill9()
    runner.join()
    server.start()
    assert not any(tablets.glob("*/rowset-*.tmp")), "a half-written rowset is removed on open"
    _check(server.dsn)
