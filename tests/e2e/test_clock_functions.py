"""statement_timestamp(), transaction_timestamp(), clock_timestamp() and timeofday(), on
nyala as on PostgreSQL 15: inside a transaction block now() and transaction_timestamp()
stay at its start while statement_timestamp() moves with each statement and stays fixed
within one; clock_timestamp() and timeofday() move within a statement, row by row."""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.support.differential import both_connected, outcome

pytestmark = pytest.mark.e2e

ONE_STATEMENT = [
    "select statement_timestamp() >= now(), clock_timestamp() >= statement_timestamp(), "
    "transaction_timestamp() = now()",
    "select count(distinct statement_timestamp()), count(distinct now()) "
    "from generate_series(1, 2000)",
    "select count(distinct clock_timestamp()) > 1, count(distinct timeofday()) > 1 "
    "from generate_series(1, 2000)",
    "select pg_typeof(statement_timestamp())::text, pg_typeof(clock_timestamp())::text, "
    "pg_typeof(transaction_timestamp())::text, pg_typeof(timeofday())::text",
    "select timeofday() like '% UTC', timeofday()::timestamptz <= clock_timestamp()",
    "select clock_timestamp() >= now(), statement_timestamp() >= now() from pg_class limit 1",
    "select statement_timestamp(1)",
]


def _scenario(conn: psycopg.Connection) -> list:
    conn.execute("set timezone = 'UTC'")
    steps = [outcome(conn, sql) for sql in ONE_STATEMENT]
    with conn.transaction():
        first = outcome(conn, "select now(), statement_timestamp(), clock_timestamp()")[0]
        time.sleep(0.01)
        second = outcome(conn, "select now(), transaction_timestamp(), statement_timestamp()")[0]
    steps.append(
        [
            first[1] >= first[0],  # the block's first statement: at or after its start
            first[2] >= first[1],
            second[0] == first[0] == second[1],  # now() is the transaction's
            second[2] > first[1],  # a later statement's own time
            second[2] > second[0],
        ]
    )
    return steps


def test_clock_functions_as_postgres(nyala_server, postgres_server):
    steps = both_connected(_scenario, nyala_server.dsn, postgres_server.dsn)
    assert steps[-1] == [True] * 5
