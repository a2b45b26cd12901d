"""Cancel and timeouts through psycopg, side by side with PostgreSQL 15.

A CancelRequest (psycopg's ``Connection.cancel()``) stops the running
statement with 57014 and the connection carries on; ``statement_timeout``
does the same with its own message; ``idle_in_transaction_session_timeout``
ends the connection with FATAL 25P03; a message over the configured size cap
is refused from its header.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


def test_cancel_stops_the_running_statement_and_the_connection_stays_usable(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        try:
            with pytest.raises(errors.QueryCanceled) as info:
                conn.execute("select pg_sleep(30)")
        finally:
            timer.cancel()
        assert info.value.sqlstate == "57014"
        assert str(info.value).startswith("canceling statement due to user request")
        assert conn.execute("select 41 + 1").fetchone() == (42,)


def test_cancel_inside_a_transaction_block_fails_the_block(dsn):
    with psycopg.connect(dsn) as conn:
        conn.execute("select 1")
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        try:
            with pytest.raises(errors.QueryCanceled):
                conn.execute("select pg_sleep(30)")
        finally:
            timer.cancel()
        with pytest.raises(errors.InFailedSqlTransaction):
            conn.execute("select 1")
        conn.rollback()
        assert conn.execute("select 2").fetchone() == (2,)


def test_statement_timeout_cancels_with_its_own_message(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("set statement_timeout = '200ms'")
        with pytest.raises(errors.QueryCanceled) as info:
            conn.execute("select pg_sleep(30)")
        assert str(info.value).startswith("canceling statement due to statement timeout")
        assert conn.execute("select 1").fetchone() == (1,)
        conn.execute("set statement_timeout = 0")
        assert conn.execute("select pg_sleep(0.3)").fetchone() is not None


def test_statement_timeout_in_the_extended_protocol(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("set statement_timeout = 200")
        with pytest.raises(errors.QueryCanceled) as info:
            conn.execute("select pg_sleep(%s)", (30,), prepare=True)
        assert str(info.value).startswith("canceling statement due to statement timeout")
        assert conn.execute("select %s::int", (5,)).fetchone() == (5,)


def test_idle_in_transaction_timeout_ends_the_connection_with_25p03(dsn):
    with psycopg.connect(dsn) as conn:
        conn.execute("set idle_in_transaction_session_timeout = '300ms'")
        conn.execute("select 1")
        time.sleep(1.0)
        with pytest.raises(psycopg.Error) as info:
            conn.execute("select 1")
        assert info.value.sqlstate == "25P03"
        assert "idle-in-transaction timeout" in str(info.value)
        assert conn.broken


def test_idle_outside_a_transaction_is_not_ended(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("set idle_in_transaction_session_timeout = 200")
        time.sleep(0.6)
        assert conn.execute("select 3").fetchone() == (3,)


def test_idle_in_transaction_timeout_fatal_is_sent_before_closing(nyala_server):
    """Read the raw FATAL message: psycopg may only notice the closed socket."""
    conn = psycopg.connect(nyala_server.dsn)
    try:
        conn.execute("set idle_in_transaction_session_timeout = 200")
        conn.execute("select 1")
        sock = socket.socket(fileno=conn.fileno())
        try:
            sock.settimeout(30)
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
        finally:
            sock.detach()
    finally:
        conn.close()
    assert data[:1] == b"E"
    fields = data[5:].split(b"\0")
    assert b"SFATAL" in fields and b"C25P03" in fields
    assert b"Mterminating connection due to idle-in-transaction timeout" in fields


def test_message_over_the_size_cap_is_refused_from_its_header(nyala_server_factory):
    server = nyala_server_factory(extra_args=["--max-message-size-bytes", "4096"])
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("select %s::text", ("x" * 1000,)).fetchone() == ("x" * 1000,)
        sock = socket.socket(fileno=conn.fileno())
        try:
            # Only the header of a 1 GiB Query is sent: the answer cannot wait for the body.
            sock.sendall(b"Q" + struct.pack("!I", 1 << 30))
            sock.settimeout(30)
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
        finally:
            sock.detach()
    fields = data[5:].split(b"\0")
    assert data[:1] == b"E" and b"SFATAL" in fields and b"C08P01" in fields


def test_statement_timeout_from_the_options_startup_parameter(dsn):
    with psycopg.connect(dsn, autocommit=True, options="-c statement_timeout=200") as conn:
        assert conn.execute("show statement_timeout").fetchone() == ("200ms",)
        with pytest.raises(errors.QueryCanceled, match="statement timeout"):
            conn.execute("select pg_sleep(30)")


def test_cancel_during_copy_from_stdin_writes_nothing(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists cancel_copy")
        conn.execute("create table cancel_copy (id int primary key)")
        timer = threading.Timer(0.3, conn.cancel)
        timer.start()
        try:
            with (
                pytest.raises(errors.QueryCanceled),
                conn.cursor().copy("copy cancel_copy from stdin") as copy,
            ):
                for start in range(0, 30_000, 1000):
                    copy.write("".join(f"{i}\n" for i in range(start, start + 1000)))
                    time.sleep(0.05)
        finally:
            timer.cancel()
        assert conn.execute("select count(*) from cancel_copy").fetchone() == (0,)


def test_statement_timeout_during_copy_from_stdin(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists timeout_copy")
        conn.execute("create table timeout_copy (id int primary key)")
        conn.execute("set statement_timeout = '300ms'")
        with (
            pytest.raises(errors.QueryCanceled, match="statement timeout"),
            conn.cursor().copy("copy timeout_copy from stdin") as copy,
        ):
            for start in range(0, 30_000, 1000):
                copy.write("".join(f"{i}\n" for i in range(start, start + 1000)))
                time.sleep(0.05)
        assert conn.execute("select count(*) from timeout_copy").fetchone() == (0,)
