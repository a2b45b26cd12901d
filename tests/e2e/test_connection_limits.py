"""max_connections and superuser_reserved_connections: beyond them a client gets FATAL 53300.

As in PostgreSQL, the last ``superuser_reserved_connections`` slots are for
superusers only, so an administrator can still connect to a server that
ordinary clients have filled; a slot is free again once its session ends.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import psycopg
import pytest

from server import codec
from server import messages as m
from tests.support.servers import NyalaServer


@pytest.fixture
def small_server(nyala_server_factory: Callable[..., NyalaServer]) -> NyalaServer:
    server: NyalaServer = nyala_server_factory(
        extra_args=("--max-connections", "4", "--superuser-reserved-connections", "1")
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE ROLE worker LOGIN")
    return server


def _connect(server: NyalaServer, user: str = "nyala") -> psycopg.Connection:
    return psycopg.connect(f"{server.dsn} user={user}", autocommit=True, connect_timeout=20)


def _connect_when_free(server: NyalaServer, user: str) -> psycopg.Connection:
    """Connect once the server has ended a closed session (it does so after the client left)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return _connect(server, user)
        except psycopg.OperationalError:
            assert time.monotonic() < deadline, "the closed session's slot was never freed"
            time.sleep(0.1)


def _sqlstate_of_refusal(server: NyalaServer, user: str) -> str | None:
    """The SQLSTATE of the FATAL a start-up as ``user`` gets (libpq hides it; the wire has it)."""
    assert server.port is not None
    startup = m.StartupMessage(parameters={"user": user, "database": "nyala"})
    decoder = codec.BackendDecoder()
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(codec.encode_frontend(startup))
        while data := sock.recv(65536):
            decoder.feed(data)
            for message in decoder:
                if isinstance(message, m.ErrorResponse):
                    fields = dict(message.fields)
                    assert fields["S"] == "FATAL"
                    return fields["C"]
                if isinstance(message, m.ReadyForQuery):
                    return None  # admitted
    return None


def test_show_and_pg_settings_report_the_flags(small_server: NyalaServer) -> None:
    with _connect(small_server) as conn:
        assert conn.execute("SHOW max_connections").fetchone() == ("4",)
        assert conn.execute("SHOW superuser_reserved_connections").fetchone() == ("1",)
        assert conn.execute(
            "SELECT setting FROM pg_settings WHERE name = 'max_connections'"
        ).fetchone() == ("4",)
        with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
            conn.execute("SET max_connections = 10")


def test_connections_beyond_the_limit_are_refused_with_53300(small_server: NyalaServer) -> None:
    workers = [_connect(small_server, "worker") for _ in range(3)]
    try:
        assert _sqlstate_of_refusal(small_server, "worker") == "53300"
        admin = _connect(small_server)  # the reserved slot
        try:
            assert admin.execute("SELECT 1").fetchone() == (1,)
            assert _sqlstate_of_refusal(small_server, "nyala") == "53300"
        finally:
            admin.close()
        workers.pop().close()
        again = _connect_when_free(small_server, "worker")
        workers.append(again)
        assert again.execute("SELECT 2").fetchone() == (2,)
        for conn in workers:
            assert conn.execute("SELECT 3").fetchone() == (3,)
    finally:
        for conn in workers:
            conn.close()


def test_a_query_over_the_memory_limit_fails_with_53200(
    nyala_server_factory: Callable[..., NyalaServer],
) -> None:
    server = nyala_server_factory(extra_args=("--query-memory-limit-mb", "64"))
    with _connect(server) as conn:
        with pytest.raises(psycopg.errors.OutOfMemory):
            conn.execute(
                "SELECT string_agg(repeat('x', 1000), ',') FROM generate_series(1, 300000)"
            )
        assert conn.execute("SELECT count(*) FROM generate_series(1, 1000)").fetchone() == (1000,)
        with _connect(server) as other:
            assert other.execute("SELECT 1").fetchone() == (1,)


def test_a_statement_buffering_more_rows_than_the_limit_fails_with_53200(
    nyala_server_factory: Callable[..., NyalaServer],
) -> None:
    server = nyala_server_factory(extra_args=("--buffered-rows-limit", "1000"))
    with _connect(server) as conn:
        conn.execute("CREATE TABLE big (k int PRIMARY KEY, v int)")
        conn.execute("INSERT INTO big SELECT g, 0 FROM generate_series(1, 900) g")
        with pytest.raises(psycopg.errors.OutOfMemory):
            conn.execute("INSERT INTO big SELECT g, 0 FROM generate_series(1001, 3000) g")
        conn.execute("INSERT INTO big SELECT g, 1 FROM generate_series(901, 1900) g")
        with pytest.raises(psycopg.errors.OutOfMemory):
            conn.execute("UPDATE big SET v = v + 1")
        # Nothing of the failed statements was written; results still stream past the limit.
        assert conn.execute("SELECT count(*), sum(v) FROM big").fetchone() == (1900, 1000)
        assert len(conn.execute("SELECT * FROM big").fetchall()) == 1900
        conn.execute("UPDATE big SET v = 2 WHERE k <= 500")
        assert conn.execute("SELECT sum(v) FROM big").fetchone() == (2000,)
