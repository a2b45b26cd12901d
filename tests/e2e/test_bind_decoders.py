"""The parameter decoders a connection keeps per statement name and Bind format codes are
chosen again when they would be stale: a statement Parsed again under the same name with
other parameter types, and a SET of DateStyle (or TimeZone) between two Binds of one
statement.  Driven through libpq's own Parse/Bind/Execute, against PostgreSQL 15."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import pq

from tests.support.differential import Pair
from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def pair(nyala_server: NyalaServer, postgres_server: PostgresServer) -> Iterator[Pair]:
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


def _bind(conn: psycopg.Connection[Any], name: bytes, value: bytes) -> Any:
    """Execute prepared ``name`` with one text parameter: its value, or the SQLSTATE."""
    result = conn.pgconn.exec_prepared(name, [value])
    if result.status != pq.ExecStatus.TUPLES_OK:
        return result.error_field(pq.DiagnosticField.SQLSTATE)
    return result.get_value(0, 0)


def _prepare(conn: psycopg.Connection[Any], name: bytes, sql: bytes) -> None:
    result = conn.pgconn.prepare(name, sql)
    assert result.status == pq.ExecStatus.COMMAND_OK, result.error_message


def test_a_statement_parsed_again_under_its_name_decodes_by_its_new_types(pair: Pair) -> None:
    def read(conn: psycopg.Connection[Any]) -> list[Any]:
        found = []
        for name in (b"", b"again"):
            _prepare(conn, name, b"select ($1::int4 + 1)::text")
            found.append(_bind(conn, name, b"41"))
            found.append(_bind(conn, name, b"2024-01-02"))  # 22P02 as an int4
            if name:
                conn.execute(f"deallocate {name.decode()}")
            _prepare(conn, name, b"select $1::date::text")
            found.append(_bind(conn, name, b"2024-01-02"))
            found.append(_bind(conn, name, b"x41"))  # 22007 as a date
            if name:
                conn.execute(f"deallocate {name.decode()}")
        return found

    expected = [b"42", b"22P02", b"2024-01-02", b"22007"]
    assert pair.same(read) == expected * 2


def test_a_set_datestyle_between_binds_reads_the_next_date_its_way(pair: Pair) -> None:
    def read(conn: psycopg.Connection[Any]) -> list[Any]:
        conn.execute("set datestyle to 'ISO, MDY'")
        _prepare(conn, b"day", b"select $1::date::text")
        found = [_bind(conn, b"day", b"01/02/2024")]
        conn.execute("set datestyle to 'ISO, DMY'")
        found.append(_bind(conn, b"day", b"01/02/2024"))
        conn.execute("set datestyle to 'ISO, MDY'")
        found.append(_bind(conn, b"day", b"01/02/2024"))
        conn.execute("deallocate day")
        return found

    assert pair.same(read) == [b"2024-01-02", b"2024-02-01", b"2024-01-02"]


def test_a_set_timezone_between_binds_reads_the_next_timestamptz_in_it(pair: Pair) -> None:
    def read(conn: psycopg.Connection[Any]) -> list[Any]:
        conn.execute("set timezone to 'UTC'")
        _prepare(conn, b"at", b"select extract(epoch from $1::timestamptz)::int8::text")
        found = [_bind(conn, b"at", b"2024-01-02 00:00:00")]
        conn.execute("set timezone to 'Asia/Tokyo'")
        found.append(_bind(conn, b"at", b"2024-01-02 00:00:00"))
        conn.execute("deallocate at")
        conn.execute("reset timezone")
        return found

    assert pair.same(read) == [b"1704153600", b"1704121200"]
