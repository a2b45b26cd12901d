"""Time and timetz input and output as PostgreSQL 15's: ``24:00:00``, undelimited ``1230``,
``12:30 pm``, a zone on a time without seconds, and timetz values keeping their zone, in
text and binary results."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

TIMES = [
    "24:00:00",
    "24:00",
    "1230",
    "083015",
    "083015.25",
    "12:30 pm",
    "12:30 am",
    "12:30:00.5 AM",
    "0:30 am",
    "5 pm",
    "13:30 pm",
    "12:30 z",
    "12:30+02",
    "  12:30  ",
    "T1230",
    "2024-01-02 12:30",
    "allballs",
    "12:30:00.123456789",
    "23:59:59.9999999",
    "12:30:60",
    "12",
]
ZONED = ["12:30+02", "12:30:15.25-05:30", "1230+0200", "12:30 pm +02", "0:00-14", "12:30:00+05:45"]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("text", TIMES)
def test_time_literal_read_as_postgres(pair, text):
    pair.check(f"select '{text}'::time::text")
    pair.check(f"select '{text}'::time = time '12:30'")


@pytest.mark.parametrize("text", TIMES)
def test_time_parameter_read_as_postgres(pair, text):
    pair.check("select %s::time::text", (text,))


@pytest.mark.parametrize("binary", [False, True])
def test_end_of_day_time_sent_as_postgres(pair, binary):
    pair.check("select '24:00'::time::text, extract(hour from '24:00'::time)", binary=binary)

    def sent(conn):
        # psycopg cannot load 24:00:00 as a datetime.time: compare the bytes sent
        cursor = conn.cursor(binary=binary)
        cursor.execute("select '24:00:00'::time, '23:00:00.25'::time, '24:00+03'::timetz")
        return [cursor.pgresult.get_value(0, column) for column in range(3)]

    pair.same(sent, "24:00:00 as sent")


@pytest.mark.parametrize("binary", [False, True])
def test_time_parameters_sent_binary_read_as_postgres(pair, binary):
    values = [dt.time(12, 30, 0, 500000), dt.time(0, 0), dt.time(23, 59, 59, 999999)]
    for value in values:
        pair.check("select %s::text, %s + interval '1 minute'", (value, value), binary=binary)
    zoned = dt.time(12, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30)))
    pair.check("select %s::text", (zoned,), binary=binary)
    pair.check("select extract(timezone from %s)", (zoned,), binary=binary)


@pytest.mark.parametrize("text", ZONED)
@pytest.mark.parametrize("binary", [False, True])
def test_timetz_read_and_sent_as_postgres(pair, text, binary):
    pair.check(f"select '{text}'::timetz", binary=binary)
    pair.check(f"select '{text}'::timetz::text, extract(timezone from '{text}'::timetz)")
    pair.check(f"select extract(hour from '{text}'::timetz), '{text}'::timetz as z, 1 as n")


def test_timetz_zone_out_of_range(pair):
    # differs from PostgreSQL in the code only: 22008 for its 22009 (no such class yet)
    for conn in pair:
        with pytest.raises(Exception) as raised:
            conn.execute("select '12:30+16'::timetz")
        assert raised.value.sqlstate in ("22008", "22009")  # type: ignore[attr-defined]


def test_now_as_timetz_has_postgres_shape(pair):
    def shape(conn):
        conn.execute("set timezone = 'UTC'")
        value = conn.execute("select now()::timetz").fetchone()[0]
        described = conn.execute("select now()::timetz").description[0].type_code
        return type(value), value.utcoffset(), described

    assert pair.same(shape)[1] == dt.timedelta(0)


@pytest.mark.parametrize(
    "sql",
    [
        "select '12:30:00'::time = '12:30 pm'",
        "select '12:30:00'::time in ('1230', '0:00')",
        "select '12:30+02'::timetz = '1230+0200'",
        "select '12:30:00'::time between '0:00 am' and '12:30 pm'",
        "select '12:30:00'::time < '13:30 pm'",
    ],
)
def test_time_compared_with_string_constant_as_postgres(pair, sql):
    pair.check(sql)
