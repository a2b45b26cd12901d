"""NaN and Infinity into numeric(p,s), on every write and cast path.

PostgreSQL 15 stores 'NaN' in a numeric(p,s) and refuses Infinity (22003).  nyala's
decimal storage has no NaN, so it refuses 'NaN' as an unsupported value (0A000) on the
key-write path, the general insert path, a literal cast and a parameter, rather than as
an overflow (22003) or bad input (22P02), and writes nothing.  Infinity agrees (22003).
"""

from __future__ import annotations

import decimal

import psycopg
import pytest

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists nan_keyed, nan_heap, nan_key",
    "create table nan_keyed (k int primary key, n numeric(5,2))",
    "create table nan_heap (n numeric(5,2))",
    "create table nan_key (n numeric(5,2) primary key)",
]
NAN_WRITES = [
    ("insert into nan_keyed values (1, 'NaN')", ()),
    ("insert into nan_keyed values (2, 1.5), (3, ' nan ')", ()),
    ("insert into nan_keyed values (4, %s)", (decimal.Decimal("NaN"),)),
    ("insert into nan_keyed values (5, %s)", ("NaN",)),
    ("insert into nan_heap values ('NaN'), (2)", ()),
    ("insert into nan_heap values (%s)", (decimal.Decimal("NaN"),)),
    ("insert into nan_key values ('NaN')", ()),
]
NAN_CASTS = [
    ("select 'NaN'::numeric(5,2)", ()),
    ("select 'NaN'::numeric", ()),
    ("select %s::numeric(5,2)", ("NaN",)),
    ("select %s::numeric(5,2)", (decimal.Decimal("NaN"),)),
    ("select 'NaN'::float8::numeric(5,2)", ()),
]
INFINITY = [
    "select 'Infinity'::numeric(5,2)",
    "select '-inf'::numeric(5,2)",
    "select 'inf'::float8::numeric(5,2)",
    "insert into nan_keyed values (9, 'Infinity')",
    "insert into nan_heap values ('-Infinity')",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize(("sql", "params"), NAN_WRITES + NAN_CASTS)
def test_nan_is_refused_as_unsupported(pair, sql, params):
    pair.postgres.execute(sql, params)  # PostgreSQL 15 takes it
    assert _error(pair.nyala, sql, params) == (
        "0A000",
        "numeric value 'NaN' is not supported",
        None,
    )


def test_a_refused_nan_writes_nothing(pair):
    for sql, params in NAN_WRITES:
        assert _error(pair.nyala, sql, params)[0] == "0A000"
    for table in ("nan_keyed", "nan_heap", "nan_key"):
        assert outcome(pair.nyala, f"select count(*) from {table}") == [(0,)]


@pytest.mark.parametrize("sql", INFINITY)
def test_infinity_overflows_as_in_postgres(pair, sql):
    assert _error(pair.nyala, sql)[0] == _error(pair.postgres, sql)[0] == "22003"


def test_other_bad_numeric_text_stays_22p02(pair):
    assert pair.check("select 'nanx'::numeric(5,2)") == "22P02"


def _error(conn, sql, params=()):
    try:
        conn.execute(sql, params)
    except psycopg.Error as exc:
        return exc.sqlstate, exc.diag.message_primary, exc.diag.message_detail
    raise AssertionError(f"{sql} succeeded")
