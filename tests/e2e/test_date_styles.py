"""DateStyle and IntervalStyle through psycopg and psql, side by side with PostgreSQL 15.

The corpus (tests/sql/corpus/datetime_styles.sql) compares the text of query
results; these tests cover what it cannot see: the ParameterStatus a SET and a
startup option send, binary results (unaffected by either style), COPY's
text, and libpq's PGDATESTYLE.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess

import psycopg
import pytest

pytestmark = pytest.mark.e2e

TABLE = """
create table styled (id int primary key, d date, ts timestamp, tz timestamptz)
"""
ROWS = """
insert into styled values
  (1, '2024-01-02', '2024-01-02 03:04:05.5', '2024-07-02 03:04:05+00'),
  (2, '0044-03-15 BC', '0044-03-15 12:00:00 BC', '4713-01-01 00:00:00+00 BC'),
  (3, 'infinity', '-infinity', 'infinity'),
  (4, null, null, null)
"""
INTERVALS = """
select x from (values (interval '1 year 2 mons 3 days 04:05:06.5'), ('-1 day +02:00:00'::interval),
  ('-3 years -4 mons'::interval), ('P1Y2M3DT4H5M6.25S'::interval), ('0'::interval), (null)) v(x)
"""
STYLES = ["ISO, MDY", "SQL, DMY", "Postgres, MDY", "German", "SQL, YMD"]
INTERVAL_STYLES = ["postgres", "postgres_verbose", "sql_standard", "iso_8601"]


@pytest.fixture
def both(nyala_server, postgres_server):
    conns = []
    for server in (nyala_server, postgres_server):
        conn = psycopg.connect(server.dsn, autocommit=True)
        conn.execute("drop table if exists styled")
        conn.execute(TABLE)
        conn.execute(ROWS)
        conn.execute("set timezone = 'America/New_York'")
        conns.append(conn)
    yield conns
    for conn in conns:
        conn.execute("drop table if exists styled")
        conn.close()


def _text_rows(conn: psycopg.Connection, sql: str) -> list[tuple[str | None, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        result = cur.pgresult
        assert result is not None
        return [
            tuple(
                None if (v := result.get_value(r, c)) is None else v.decode()
                for c in range(result.nfields)
            )
            for r in range(result.ntuples)
        ]


@pytest.mark.parametrize("style", STYLES)
def test_set_date_style_reports_and_spells_as_postgresql(both, style):
    answers = []
    for conn in both:
        conn.execute(f"set datestyle = '{style}'")
        answers.append(
            (
                conn.info.parameter_status("DateStyle"),
                _text_rows(conn, "select id, d, ts, tz from styled order by id"),
            )
        )
    assert answers[0] == answers[1]
    assert answers[0][0] == style if "," in style else answers[0][0].startswith(style)


@pytest.mark.parametrize("style", INTERVAL_STYLES)
def test_set_interval_style_reports_and_spells_as_postgresql(both, style):
    answers = []
    for conn in both:
        conn.execute(f"set intervalstyle = '{style}'")
        answers.append(
            (
                conn.info.parameter_status("IntervalStyle"),
                _text_rows(conn, INTERVALS),
            )
        )
    assert answers[0] == answers[1]
    assert answers[0][0] == style


def test_binary_results_do_not_follow_the_styles(both):
    answers = []
    for conn in both:
        conn.execute("set datestyle = 'Postgres, DMY'")
        conn.execute("set intervalstyle = 'sql_standard'")
        with conn.cursor(binary=True) as cur:
            cur.execute("select id, d, ts, tz from styled where id in (1, 4) order by id")
            answers.append(cur.fetchall())
    assert answers[0] == answers[1]
    assert answers[0][0][1].isoformat() == "2024-01-02"


def test_bc_values_in_binary_are_postgresql_bytes(both):
    """Binary date and timestamp values count days and microseconds from 2000-01-01, BC too;
    the raw bytes are compared (Python's dates cannot hold a BC date)."""
    answers = []
    for conn in both:
        with conn.cursor(binary=True) as cur:
            cur.execute("select d, ts, tz from styled where id = 2")
            result = cur.pgresult
            assert result is not None
            answers.append([result.get_value(0, c) for c in range(3)])
    assert answers[0] == answers[1]
    assert int.from_bytes(answers[0][0], "big", signed=True) < -730_000


def test_copy_to_stdout_text_follows_date_style(both):
    outputs = []
    for conn in both:
        conn.execute("set datestyle = 'SQL, DMY'")
        query = "copy (select id, d, ts, tz from styled order by id) to stdout"
        with conn.cursor() as cur, cur.copy(query) as copy:
            outputs.append(b"".join(bytes(block) for block in copy))
    assert outputs[0] == outputs[1]
    assert b"02/01/2024" in outputs[0]


@pytest.mark.parametrize("how", ["options", "PGDATESTYLE"])
def test_date_style_at_connection_start(nyala_server, postgres_server, psql, how):
    answers = []
    for server in (nyala_server, postgres_server):
        env = dict(os.environ)
        if how == "options":
            env["PGOPTIONS"] = "-c DateStyle=German -c IntervalStyle=iso_8601"
        else:
            env["PGDATESTYLE"] = "Postgres, DMY"
        fields = dict(part.split("=", 1) for part in server.dsn.split())
        done = subprocess.run(
            [
                psql, "-X", "-A", "-t", "-h", fields["host"], "-p", fields["port"],
                "-U", fields["user"], "-d", fields["dbname"], "-c",
                "show datestyle", "-c", "select '2024-01-02 03:04:05'::timestamp, "
                "'01/02/2024'::date, interval '1 day 2 hours'",
            ],
            env=env, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        answers.append(done.stdout)
    assert answers[0] == answers[1]


@pytest.mark.parametrize("style", ["ISO, MDY", "SQL, DMY", "German, YMD"])
def test_text_parameters_are_read_in_the_date_order(both, style):
    """A bind parameter's text is read as the date or timestamp type PostgreSQL infers, in
    DateStyle's field order (22008 where that order makes it impossible, as there)."""
    values = ["01/02/03", "02.01.2024 10:00", "Jan 2 2024 10:00 UTC", "2024-01-02", "13/01/2024"]
    types = ["date", "timestamp", "timestamptz", "date", "date"]
    answers = []
    for conn in both:
        conn.execute(f"set datestyle = '{style}'")
        outcomes: list[object] = []
        for value, type_name in zip(values, types, strict=True):
            try:
                with conn.cursor(binary=True) as cur:
                    cur.execute(f"select %s::{type_name}", [value])
                    outcomes.append(cur.fetchone())
            except psycopg.Error as exc:
                outcomes.append(exc.sqlstate)
        conn.execute("insert into styled values (10, %s, %s, null)", ["03/04/05", "05/06/07 07:08"])
        with conn.cursor(binary=True) as cur:
            cur.execute("select d, ts from styled where id = 10")
            outcomes.append(cur.fetchone())
        conn.execute("delete from styled where id = 10")
        answers.append(outcomes)
    assert answers[0] == answers[1]
    assert answers[0][4] == ((dt.date(2024, 1, 13),) if "DMY" in style else "22008")


def test_parameter_status_follows_set_local_set_config_rollback_and_reset(both):
    answers = []
    for conn in both:
        seen = [conn.info.parameter_status("DateStyle")]
        with conn.transaction():
            conn.execute("set local datestyle = 'German'")
            seen.append(conn.info.parameter_status("DateStyle"))
        seen.append(conn.info.parameter_status("DateStyle"))
        conn.execute("select set_config('DateStyle', 'SQL, DMY', false)")
        seen.append(conn.info.parameter_status("DateStyle"))
        conn.execute("begin")
        conn.execute("set datestyle = 'Postgres'")
        seen.append(conn.info.parameter_status("DateStyle"))
        conn.execute("rollback")
        seen.append(conn.info.parameter_status("DateStyle"))
        conn.execute("reset all")
        seen.append(conn.info.parameter_status("DateStyle"))
        answers.append(seen)
    assert answers[0] == answers[1]
    assert answers[0][1:5] == ["German, DMY", "ISO, MDY", "SQL, DMY", "Postgres, DMY"]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_time_results_are_postgresqls_time_in_every_style(both, binary):
    answers = []
    for conn in both:
        conn.execute("set datestyle = 'Postgres, DMY'")
        with conn.cursor(binary=binary) as cur:
            cur.execute(
                "select '12:34:56.5'::time, '00:00'::time, '2024-01-02 03:04:05.25'::timestamp::time,"
                " null::time"
            )
            answers.append((cur.fetchone(), [d.type_code for d in cur.description]))
    assert answers[0] == answers[1]
    assert answers[0][1] == [1083] * 4
