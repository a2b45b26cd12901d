"""log_lock_waits with deadlock_timeout: a long row-lock wait is logged as PostgreSQL 15 logs it.

The same wait (one session holds a row, another waits for it, then gets it)
is made on nyala and on PostgreSQL; both logs must say the same, pids and
transaction ids aside.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

import psycopg
import pytest

from tests.support.servers import run_on_each

pytestmark = pytest.mark.e2e

_WAIT_S = 10.0
_LINES = re.compile(
    r"process (\d+) (still waiting for|acquired) ShareLock on transaction (\d+) after [\d.]+ ms"
    r"(?:\s*\(detail: |\n[^\n]*DETAIL:\s+)?(Process holding the lock: \d+\. Wait queue: \d+\.)?"
)


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _wait_lines(server) -> list[str]:
    run_on_each(
        [server],
        [
            "drop table if exists lock_log",
            "create table lock_log (id int primary key, v int)",
            "insert into lock_log values (1, 0)",
        ],
    )
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn) as holder,
        psycopg.connect(server.dsn, autocommit=True) as waiter,
    ):
        waiter.execute("set log_lock_waits = on")
        waiter.execute("set deadlock_timeout = '200ms'")
        holder.execute("update lock_log set v = 1 where id = 1")
        xid = monitor.execute(
            "select transactionid::text from pg_locks where locktype = 'transactionid'"
            " and granted and pid = %s",
            (holder.info.backend_pid,),
        ).fetchone()[0]
        done = threading.Event()
        thread = threading.Thread(
            target=lambda: (waiter.execute("update lock_log set v = 2 where id = 1"), done.set()),
            daemon=True,
        )
        thread.start()
        labels = {
            str(holder.info.backend_pid): "holder",
            str(waiter.info.backend_pid): "waiter",
            xid: "xid",
        }

        def logged(kind: str) -> list[str]:
            return [
                re.sub(
                    r"\d+",
                    lambda number: labels.get(number.group(), number.group()),
                    " ".join(part for part in match.groups() if part),
                )
                for match in _LINES.finditer(server.log)
                if match.group(3) == xid and match.group(2) == kind
            ]

        _until(lambda: bool(logged("still waiting for")), "the wait to be logged")
        holder.commit()
        _until(done.is_set, "the waiter to get the row")
        _until(lambda: bool(logged("acquired")), "the acquired line")
        thread.join(_WAIT_S)
        return logged("still waiting for") + logged("acquired")


def test_a_long_lock_wait_is_logged_as_in_postgresql(nyala_server, postgres_server):
    nyala = _wait_lines(nyala_server)
    assert nyala == _wait_lines(postgres_server)
    assert nyala == [
        "waiter still waiting for xid Process holding the lock: holder. Wait queue: waiter.",
        "waiter acquired xid",
    ]


def test_short_waits_and_the_setting_off_log_nothing(nyala_server):
    with (
        psycopg.connect(nyala_server.dsn) as holder,
        psycopg.connect(nyala_server.dsn, autocommit=True) as waiter,
    ):
        run_on_each(
            [nyala_server],
            [
                "drop table if exists lock_quiet",
                "create table lock_quiet (id int primary key, v int)",
                "insert into lock_quiet values (1, 0), (2, 0)",
            ],
        )
        before = len(_LINES.findall(nyala_server.log))
        waiter.execute("set log_lock_waits = off")
        waiter.execute("set deadlock_timeout = '10ms'")
        holder.execute("update lock_quiet set v = 1 where id = 1")
        thread = threading.Thread(
            target=lambda: waiter.execute("update lock_quiet set v = 2 where id = 1"), daemon=True
        )
        thread.start()
        time.sleep(0.5)
        holder.commit()
        thread.join(_WAIT_S)
        waiter.execute("set log_lock_waits = on")
        waiter.execute("set deadlock_timeout = '1h'")
        holder.execute("update lock_quiet set v = 1 where id = 2")
        thread = threading.Thread(
            target=lambda: waiter.execute("update lock_quiet set v = 2 where id = 2"), daemon=True
        )
        thread.start()
        time.sleep(0.5)
        holder.commit()
        thread.join(_WAIT_S)
    assert len(_LINES.findall(nyala_server.log)) == before
