"""A prepared read by key or index, framed from its rows' values (``server.value_rows``),
gives PostgreSQL 15's bytes: every column type such a read returns, in text and binary,
with NULLs, under each extra_float_digits, DateStyle, bytea_output and TimeZone, by key
and through an index, before and after CHECKPOINT and inside a transaction that wrote."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists sr_types",
    "create table sr_types (id int primary key, code int, i2 smallint, i8 bigint, b boolean,"
    " t text, v varchar(12), f4 real, f8 double precision, d date, ts timestamp,"
    " tz timestamptz, by bytea, n numeric(10, 2), c char(4))",
    "create index sr_types_code on sr_types (code)",
    "insert into sr_types values"
    " (1, 7, -32768, 9223372036854775807, true, 'é漢字', 'var', 0.1, 0.1, '2000-01-01',"
    "  '2024-02-29 13:05:07.12', '2024-02-29 13:05:07.5+00', '\\x00ff5c', 12.5, 'ab'),"
    " (2, 7, 1, -9223372036854775808, false, '', '', 1e6, 1e15, '0001-01-01',"
    "  '1969-07-20 20:17:40.0005', '1999-12-31 23:00:00+00', '', -0.01, ''),"
    " (3, 8, null, null, null, null, null, null, null, null, null, null, null, null, null),"
    " (4, 9, 0, 0, true, 'x', 'y', 'NaN', '-Infinity', '9999-12-31', '2000-01-01',"
    "  '2000-01-01 00:00:00.000001+00', 'a\\\\b', 0, 'abcd'),"
    " (5, 9, 2, 3, false, 'a b', 'c', -0.0, 1.25e-11, '1970-01-01', '0001-01-01 00:00:00',"
    "  '2038-01-19 03:14:07+00', '\\x01', 99999999.99, 'z'),"
    " (6, 10, 3, 4, true, 'bc', 'bc', 123456.7, 123456789012345.6, '4713-01-01 BC',"
    "  '20000-06-01 10:00:00', 'infinity', '\\x02', 1, 'q')",
]
STATEMENTS = [
    "select i2, i8, b, t, v, f4, f8, d, ts, by from sr_types where id = $1",
    "select id, i2, i8, b, t, v, f4, f8, d, ts, by from sr_types where code = $1",
    "select tz, n, c, id from sr_types where id = $1",
    "select t, id, t from sr_types where code = $1",
]
SETTINGS = [
    {},
    {"extra_float_digits": "0"},
    {"extra_float_digits": "3", "DateStyle": "SQL, DMY"},
    {"extra_float_digits": "-3", "DateStyle": "German", "bytea_output": "escape"},
    {"DateStyle": "Postgres, MDY", "TimeZone": "Asia/Kolkata"},
    {"TimeZone": "America/St_Johns", "bytea_output": "hex"},
]


def _answers(conn: psycopg.Connection) -> list[object]:
    pgconn = conn.pgconn
    out: list[object] = []
    for number, sql in enumerate(STATEMENTS):
        name = f"sr{number}".encode()
        pgconn.prepare(name, sql.encode())
        for settings in SETTINGS:
            for key, value in settings.items():
                conn.execute(f"set {key} = '{value}'")
            for value in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11):
                for result_format in (0, 1):
                    result = pgconn.exec_prepared(
                        name, [str(value).encode()], result_format=result_format
                    )
                    assert result.status == psycopg.pq.ExecStatus.TUPLES_OK, result.error_message
                    rows = sorted(
                        tuple(result.get_value(r, c) for c in range(result.nfields))
                        for r in range(result.ntuples)
                    )
                    out.append((sql, settings, value, result_format, rows))
            conn.execute("reset all")
        pgconn.exec_(b"deallocate " + name)
    return out


def _scenario(conn: psycopg.Connection) -> list[object]:
    for sql in SETUP:
        conn.execute(sql)
    answers = _answers(conn)
    conn.execute("checkpoint")
    answers += _answers(conn)
    with conn.transaction():
        conn.execute("update sr_types set t = 'own', f8 = 2.5 where id = 2")
        conn.execute("insert into sr_types (id, code, t) values (12, 7, 'new')")
        answers += _answers(conn)
        raise psycopg.Rollback
    return answers


def test_short_rows_match_postgresql(nyala_server, postgres_server):
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as nyala,
        psycopg.connect(postgres_server.dsn, autocommit=True) as postgres,
    ):
        mine, theirs = _scenario(nyala), _scenario(postgres)
    assert len(mine) == len(theirs)
    for got, want in zip(mine, theirs, strict=True):
        assert got == want
