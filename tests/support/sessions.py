"""Fixtures for scenarios of several psycopg sessions run on nyala and on PostgreSQL 15 alike:
a module imports them (``from tests.support.sessions import connect, pool, server, table``)
and sets ``TABLE_PREFIX`` so its tables do not meet another module's on the shared servers.

A statement that must block is started on ``pool`` and checked with ``blocked``: the
server shows one of the test's sessions newly waiting for a lock, or it is still running
a second later (it would have finished at once had it not waited).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

_watched: list[tuple[psycopg.Connection, str]] = []
"""The current test's sessions made by ``connect``, with their server's DSN."""
_seen_waits: set[tuple[str, int, object]] = set()
"""The lock waits ``blocked`` already answered for: (DSN, pid, query_start)."""


@pytest.fixture(params=["nyala", "postgres"])
def server(request: pytest.FixtureRequest, nyala_server, postgres_server):  # noqa: ANN001
    return nyala_server if request.param == "nyala" else postgres_server


@pytest.fixture
def connect(server) -> Iterator[Callable[[], psycopg.Connection]]:  # noqa: ANN001
    opened: list[psycopg.Connection] = []

    def make() -> psycopg.Connection:
        conn = psycopg.connect(server.dsn, autocommit=True)
        opened.append(conn)
        _watched.append((conn, server.dsn))
        return conn

    yield make
    _watched.clear()
    _seen_waits.clear()
    for conn in opened:
        conn.close()


@pytest.fixture
def table(connect, request: pytest.FixtureRequest) -> str:  # noqa: ANN001
    """A fresh ``(id int primary key, v int not null)`` table holding (1,1), (2,2), (3,3)."""
    prefix = request.module.TABLE_PREFIX
    name = prefix + request.node.name.split("[")[0].removeprefix("test_")[:40]
    conn = connect()
    conn.execute(f"drop table if exists {name}")
    conn.execute(f"create table {name} (id int primary key, v int not null)")
    conn.execute(f"insert into {name} values (1, 1), (2, 2), (3, 3)")
    return name


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=4) as executor:
        yield executor


BLOCKED_CHECK_S = 1.0
_POLL_S = 0.02


def blocked(future: Future[Any], seconds: float = BLOCKED_CHECK_S) -> bool:
    """Whether ``future`` waits: True as soon as pg_stat_activity shows a session of the test
    waiting for a lock in a statement no earlier check answered for; otherwise whether it
    is still running ``seconds`` after the check starts."""
    deadline = time.monotonic() + seconds
    observers: dict[str, psycopg.Connection] = {}
    try:
        while True:
            try:
                future.result(timeout=_POLL_S)
            except TimeoutError:
                pass
            else:
                return False
            if _new_lock_wait(observers) or time.monotonic() >= deadline:
                return not future.done()
    finally:
        for observer in observers.values():
            observer.close()


def _new_lock_wait(observers: dict[str, psycopg.Connection]) -> bool:
    by_dsn: dict[str, list[int]] = {}
    for conn, dsn in _watched:
        if not conn.closed:
            by_dsn.setdefault(dsn, []).append(conn.info.backend_pid)
    for dsn, pids in by_dsn.items():
        if dsn not in observers:
            observers[dsn] = psycopg.connect(dsn, autocommit=True)
        waiting = f"wait_event_type = 'Lock' and pid in ({', '.join(map(str, pids))})"
        query = f"select pid, query_start from pg_stat_activity where {waiting}"
        rows = observers[dsn].execute(query).fetchall()
        for pid, query_start in rows:
            if (dsn, pid, query_start) not in _seen_waits:
                _seen_waits.add((dsn, pid, query_start))
                return True
    return False
