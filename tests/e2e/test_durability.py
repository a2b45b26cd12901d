"""Committed data survives a crash (SIGKILL) and a clean stop; uncommitted data does not.

Each test has a server of its own (``fresh_nyala_server``) and restarts it
on the same data directory, so what it reads afterwards can only come from
the WAL and the files the first process left behind.
"""

from __future__ import annotations

import contextlib

import psycopg
import pytest

from tests.support.servers import NyalaServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AUTOCOMMIT_ROWS = 200  # one WAL record each
BULK_ROWS = 2_000  # one statement, in an explicit transaction
LEDGER_ROWS = AUTOCOMMIT_ROWS + BULK_ROWS


def _write_committed_and_uncommitted(server: NyalaServer) -> psycopg.Connection:
    """Commit rows every way psycopg can, then leave a transaction open; return its connection."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table accounts (region text, id bigint, owner varchar(20), balance numeric(12,2), "
            "primary key (region, id))"
        )
        conn.execute("create table ledger (seq integer primary key, note text)")
        conn.execute(
            "insert into accounts values ('eu', 1, 'ada', 10.50), ('eu', 2, 'bob', 20), "
            "('us', 1, 'cy', 30)"
        )
        conn.execute("update accounts set balance = balance + 1 where region = 'eu'")
        conn.execute("delete from accounts where region = 'us' and id = 1")
        with conn.cursor() as cur:
            cur.executemany(
                "insert into ledger values (%s, %s)",
                [(seq, f"autocommit {seq}") for seq in range(AUTOCOMMIT_ROWS)],
            )

    with psycopg.connect(server.dsn) as conn:  # explicit transactions
        conn.execute("insert into accounts values ('us', 2, 'dee', 40)")
        values = ", ".join(f"({seq}, 'bulk {seq}')" for seq in range(AUTOCOMMIT_ROWS, LEDGER_ROWS))
        conn.execute(f"insert into ledger values {values}")
        conn.execute("update ledger set note = 'updated in a transaction' where seq < 10")
        conn.commit()
        with conn.transaction():
            conn.execute("delete from ledger where seq >= %s", (LEDGER_ROWS - 5,))
        conn.execute("insert into accounts values ('xx', 99, 'rolled back', 0)")
        conn.rollback()

    open_txn = psycopg.connect(server.dsn)
    open_txn.execute("insert into accounts values ('zz', 1, 'uncommitted', 1)")
    open_txn.execute("update accounts set owner = 'uncommitted' where region = 'eu'")
    open_txn.execute("delete from ledger where seq < 100")
    open_txn.execute("insert into ledger values (%s, 'uncommitted')", (LEDGER_ROWS * 2,))
    return open_txn


EXPECTED_ACCOUNTS = [
    ("eu", 1, "ada", "11.50"),
    ("eu", 2, "bob", "21.00"),
    ("us", 2, "dee", "40.00"),
]


def _assert_committed_state(server: NyalaServer) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        accounts = conn.execute(
            "select region, id, owner, balance::text from accounts order by region, id"
        ).fetchall()
        assert accounts == EXPECTED_ACCOUNTS
        count, low, high, updated = conn.execute(
            "select count(*), min(seq), max(seq), "
            "count(*) filter (where note = 'updated in a transaction') from ledger"
        ).fetchone()
        assert (count, low, high, updated) == (LEDGER_ROWS - 5, 0, LEDGER_ROWS - 6, 10)


def _close_quietly(conn: psycopg.Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.close()


def test_kill9_keeps_every_committed_row_and_no_uncommitted_one(fresh_nyala_server):
    server = fresh_nyala_server
    open_txn = _write_committed_and_uncommitted(server)
    try:
        server.kill9()
    finally:
        _close_quietly(open_txn)
    server.start()
    _assert_committed_state(server)


def test_writes_after_recovery_survive_a_second_crash(fresh_nyala_server):
    server = fresh_nyala_server
    _close_quietly(_write_committed_and_uncommitted(server))
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("insert into accounts values ('us', 3, 'eve', 50)")
        conn.execute("create table later (id integer primary key)")
        conn.execute("insert into later values (1), (2)")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute(
            "select owner from accounts where region = 'us' order by id"
        ).fetchall() == [
            ("dee",),
            ("eve",),
        ]
        assert conn.execute("select id from later order by id").fetchall() == [(1,), (2,)]


def test_sigterm_stops_cleanly_and_data_is_there_after_start(fresh_nyala_server):
    server = fresh_nyala_server
    open_txn = _write_committed_and_uncommitted(server)
    try:
        assert server.stop() == 0, server.log_tail()
    finally:
        _close_quietly(open_txn)
    server.start()
    _assert_committed_state(server)
    assert server.stop() == 0, server.log_tail()
    server.start()
    _assert_committed_state(server)
