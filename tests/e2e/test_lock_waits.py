"""A burst of row-lock waiters never starves the rest of the server.

Each waiting statement holds only its own connection's thread, so hundreds of
sessions queued behind one row lock leave the holder able to COMMIT and new
clients able to connect, and every waiter finishes once the lock is released,
re-reading the row as READ COMMITTED does.  The waiters stand in line on the
row (storage/row_lock_queue.py), so each release wakes one of them, not all.
"""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e

CONNECTIONS = 400
WAITERS = 300


async def _connect(dsn: str) -> psycopg.AsyncConnection:
    return await psycopg.AsyncConnection.connect(dsn, autocommit=True)


def test_three_hundred_waiters_on_one_row_all_finish_and_new_clients_are_served(
    nyala_server_factory,
):
    # More sessions than the default max_connections (100), as PostgreSQL would need too.
    server = nyala_server_factory(extra_args=("--max-connections", str(CONNECTIONS + 50)))
    asyncio.run(_lock_burst(server.dsn))


async def _lock_burst(dsn: str) -> None:
    setup = await _connect(dsn)
    await setup.execute("create table counter (k int primary key, v bigint)")
    await setup.execute("insert into counter values (1, 0), (2, 0)")
    holder = await psycopg.AsyncConnection.connect(dsn)
    await holder.execute("update counter set v = v + 1 where k = 1")  # opens a block: holds k=1

    clients = await asyncio.gather(*(_connect(dsn) for _ in range(CONNECTIONS)))
    waiters = [
        asyncio.create_task(_fetch(c, "update counter set v = v + 1 where k = 1 returning v"))
        for c in clients[:WAITERS]
    ]
    await asyncio.sleep(2)
    assert not any(w.done() for w in waiters), "nobody gets past a held row lock"

    # The other connections, and brand-new ones, are served while the waiters wait.
    others = clients[WAITERS:]
    answers = await asyncio.wait_for(
        asyncio.gather(*(_fetch(c, "select v from counter where k = 2") for c in others)), 30
    )
    assert answers == [(0,)] * len(others)
    for _ in range(5):
        late = await asyncio.wait_for(_connect(dsn), 10)
        assert await asyncio.wait_for(_fetch(late, "select count(*) from counter"), 10) == (2,)
        await late.close()

    await asyncio.wait_for(holder.commit(), 10)
    await asyncio.wait_for(asyncio.gather(*waiters), 120)
    # Each waiter re-read the newest version: every increment is seen exactly once.
    assert sorted(w.result() for w in waiters) == [(v,) for v in range(2, WAITERS + 2)]
    assert await _fetch(setup, "select v from counter where k = 1") == (WAITERS + 1,)
    for conn in [setup, holder, *clients]:
        await conn.close()


async def _fetch(conn: psycopg.AsyncConnection, sql: str) -> tuple[object, ...] | None:
    cursor = await conn.execute(sql)
    return await cursor.fetchone()


@pytest.mark.parametrize("system", ["nyala", "postgres"])
def test_lock_timeout_statement_timeout_and_cancel_end_a_waiting_statement(
    system, fresh_nyala_server, postgres_server
):
    server = fresh_nyala_server if system == "nyala" else postgres_server
    asyncio.run(_timeouts_on_a_wait(server.dsn))


async def _timeouts_on_a_wait(dsn: str) -> None:
    setup = await _connect(dsn)
    await setup.execute("drop table if exists hot")
    await setup.execute("create table hot (k int primary key, v int)")
    await setup.execute("insert into hot values (1, 0)")
    holder = await psycopg.AsyncConnection.connect(dsn)
    await holder.execute("update hot set v = 1 where k = 1")

    waiter = await _connect(dsn)
    await waiter.execute("set lock_timeout = '200ms'")
    with pytest.raises(errors.LockNotAvailable):
        await waiter.execute("update hot set v = 2 where k = 1")
    await waiter.execute("set lock_timeout = 0")
    await waiter.execute("set statement_timeout = '300ms'")
    with pytest.raises(errors.QueryCanceled):
        await waiter.execute("update hot set v = 3 where k = 1")
    await waiter.execute("set statement_timeout = 0")

    task = asyncio.create_task(waiter.execute("update hot set v = 4 where k = 1"))
    await asyncio.sleep(0.5)
    waiter.cancel()
    with pytest.raises(errors.QueryCanceled):
        await asyncio.wait_for(task, 10)

    await holder.commit()
    assert await _fetch(setup, "select v from hot") == (1,)
    await setup.execute("drop table hot")
    for conn in (setup, holder, waiter):
        await conn.close()
