"""LISTEN, NOTIFY and UNLISTEN across connections through psycopg, side by side with
PostgreSQL 15: notifications are sent when the notifying transaction commits (identical ones
once, none after a rollback), reach an idle listener at once, and wait while it is in a
transaction block."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


def _drain(conn: psycopg.Connection, timeout: float = 1.0) -> list[tuple[str, str, int]]:
    return [(n.channel, n.payload, n.pid) for n in conn.notifies(timeout=timeout)]


def test_notifications_are_sent_at_commit(dsn):
    channel = f"jobs_{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(dsn, autocommit=True) as listener,
        psycopg.connect(dsn, autocommit=True) as sender,
    ):
        listener.execute(f"listen {channel}")
        pid = sender.info.backend_pid
        sender.execute(f"notify {channel}, 'one'")
        with sender.transaction():
            sender.execute(f"notify {channel}, 'two'")
            sender.execute(f"notify {channel}, 'two'")  # identical: sent once
            sender.execute("select pg_notify(%s, %s)", (channel, "three"))
        with pytest.raises(errors.DivisionByZero), sender.transaction():
            sender.execute(f"notify {channel}, 'rolled back'")
            sender.execute("select 1 / 0")
        sender.execute(f"notify {channel}")
        assert _drain(listener) == [
            (channel, "one", pid),
            (channel, "two", pid),
            (channel, "three", pid),
            (channel, "", pid),
        ]
        listener.execute(f"unlisten {channel}")
        sender.execute(f"notify {channel}, 'after unlisten'")
        assert _drain(listener, 0.5) == []


def test_a_listener_in_a_block_gets_them_when_it_ends(dsn):
    channel = f"q_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn) as listener, psycopg.connect(dsn, autocommit=True) as sender:
        listener.execute(f"listen {channel}")
        listener.commit()
        listener.execute("select 1")  # in a block now
        sender.execute(f"notify {channel}, 'x'")
        listener.execute("select 2")
        assert [n.payload for n in listener.notifies(timeout=0.3)] == []
        listener.commit()
        assert [n.payload for n in listener.notifies(timeout=1)] == ["x"]


def test_listen_rolled_back_does_not_listen(dsn):
    channel = f"r_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn) as listener, psycopg.connect(dsn, autocommit=True) as sender:
        listener.execute(f"listen {channel}")
        listener.rollback()
        sender.execute(f"notify {channel}, 'nobody'")
        assert _drain(listener, 0.5) == []
        with pytest.raises(errors.InvalidParameterValue):
            sender.execute(f"notify {channel}, '{'x' * 8000}'")
