"""Dates and timestamps a Python ``datetime`` cannot hold (infinity, BC, years past 9999)
bound as parameters, in text and binary, prepared or not, as PostgreSQL 15 takes them;
and their ``::text`` with a BC era written last."""

from __future__ import annotations

import struct

import psycopg
import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists far_dates",
    "create table far_dates (k int primary key, d date, ts timestamp, tz timestamptz)",
]
ROWS = [
    (1, "infinity", "-infinity", "infinity"),
    (2, "0044-03-15 BC", "0044-03-15 BC", "0044-03-15 01:00 BC"),
    (3, "12000-01-01", "12000-01-01 10:00", "12000-01-01 00:00+00"),
    (4, "-infinity", "infinity", "-infinity"),
]


@pytest.fixture
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("prepare", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_far_dates_bound_as_postgres(pair, binary, prepare):
    for conn in pair:
        for row in ROWS:
            cursor = conn.cursor(binary=binary)
            cursor.execute("insert into far_dates values (%s, %s, %s, %s)", row, prepare=prepare)
    pair.check("select k, d::text, ts::text, tz::text from far_dates order by k", binary=binary)

    def sent(conn):
        # psycopg's datetime cannot load these: compare the bytes each server sends
        cursor = conn.cursor(binary=binary)
        cursor.execute("select d, ts, tz from far_dates order by k")
        result = cursor.pgresult
        return [result.get_value(row, col) for row in range(result.ntuples) for col in range(3)]

    pair.same(sent, "far dates as sent")
    for text in ("infinity", "-infinity", "0044-03-15 BC", "12000-01-01"):
        pair.check(
            "select k from far_dates where d = %s order by k",
            (text,),
            binary=binary,
            prepare=prepare,
        )
        pair.check("select %s::date::text", (text,), binary=binary, prepare=prepare)
    pair.check("select k from far_dates where ts < %s order by k", ("0001-01-01",), prepare=prepare)
    pair.check("select %s::timestamptz::text", ("0044-03-15 12:00 BC",), binary=binary)
    pair.check("select %s::timestamp::text", ("12000-01-01 10:00",), binary=binary)


def test_bc_values_cast_to_text_as_postgres(pair):
    pair.check(
        "select '0044-03-15 BC'::date::text, '0044-03-15 12:30 BC'::timestamp::text,"
        " '0044-03-15 12:30+00 BC'::timestamptz::text, cast('0001-01-01 BC'::date as varchar)"
    )
    pair.check(
        "select '0044-03-15 BC'::date::varchar(5), '0044-03-15 12:00 BC'::timestamp::varchar(30),"
        " '2024-01-02'::date::varchar(4), '0044-03-15 BC'::date::text || 'x'"
    )


def test_binary_infinity_and_far_dates_bound_as_postgres(pair):
    """date_send/timestamp_send values: int32/int64 extremes are infinity; days and micros
    outside years 1-9999 are far dates (psycopg's datetime cannot carry them: raw binds)."""
    day = -(730119 + 15766)  # 0044-11-02 BC in days from 2000-01-01
    dates = [struct.pack("!i", v) for v in (2**31 - 1, -(2**31), day, 4_000_000)]
    stamps = [struct.pack("!q", v) for v in (2**63 - 1, -(2**63), day * 86_400_000_000 + 5)]

    def read(conn):
        answers = []
        for value in dates:
            result = conn.pgconn.exec_params(b"select $1::text", [value], [1082], [1])
            answers.append(result.get_value(0, 0))
        for value in stamps:
            result = conn.pgconn.exec_params(b"select $1::text", [value], [1114], [1])
            answers.append(result.get_value(0, 0))
        return answers

    pair.same(read, "binary far dates")


@pytest.mark.parametrize("binary", [False, True])
def test_past_the_last_date_is_22008(pair, binary):
    pair.check("select '5874897-12-31'::date::text")
    pair.check("select '5874898-01-01'::date::text")
    pair.check("select %s::date::text", ("5874898-01-01",), binary=binary)
    pair.check("insert into far_dates (k, d) values (9, %s)", ("5874898-01-01",), binary=binary)


def test_timestamp_past_what_storage_holds_is_22008(nyala_server):
    """differs from PostgreSQL, which holds timestamps to 294276 AD: nyala's end at 294247
    (DuckDB's), and a later one is 22008, never XX000 (README)."""
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        for sql, params in (
            ("select '294250-01-01'::timestamp", ()),
            ("select %s::timestamp", ("294250-01-01",)),
            ("select %s::timestamptz", ("294250-01-01 00:00+00",)),
        ):
            with pytest.raises(psycopg.errors.DatetimeFieldOverflow):
                conn.execute(sql, params)
