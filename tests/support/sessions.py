"""Fixtures for scenarios of several psycopg sessions run on nyala and on PostgreSQL 15 alike:
a module imports them (``from tests.support.sessions import connect, pool, server, table``)
and sets ``TABLE_PREFIX`` so its tables do not meet another module's on the shared servers.

A statement that must block is started on ``pool`` and checked with ``blocked``: still
running a moment later, since it would have finished at once had it not waited.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg
import pytest


@pytest.fixture(params=["nyala", "postgres"])
def server(request: pytest.FixtureRequest, nyala_server, postgres_server):  # noqa: ANN001
    return nyala_server if request.param == "nyala" else postgres_server


@pytest.fixture
def connect(server) -> Iterator[Callable[[], psycopg.Connection]]:  # noqa: ANN001
    opened: list[psycopg.Connection] = []

    def make() -> psycopg.Connection:
        conn = psycopg.connect(server.dsn, autocommit=True)
        opened.append(conn)
        return conn

    yield make
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


def blocked(future: Future[Any], seconds: float) -> bool:
    """Whether ``future`` is still waiting ``seconds`` after the check starts."""
    try:
        future.result(timeout=seconds)
    except TimeoutError:
        return True
    return False
