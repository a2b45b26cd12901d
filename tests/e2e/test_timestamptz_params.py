"""A timestamptz parameter given without an offset is read in the session's TimeZone, as
PostgreSQL reads it: one by one, in a pipelined batch (psycopg's executemany), inside an
array, and at the clock changes (a time shown twice is the later one, a skipped time lands
past the gap).  A parameter with its own offset keeps it.  Run on nyala and PostgreSQL 15.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e

ZONES = ("America/New_York", "Asia/Kolkata", "UTC", "-5", "Australia/Lord_Howe")
WALLS = (
    "2024-01-01 10:00:00",
    "2024-07-01 10:00:00.25",
    "2024-11-03 01:30:00",  # New York shows it twice
    "2024-03-10 02:30:00",  # New York skips it
    "2024-04-07 01:45:00",  # Lord Howe's half-hour change
    "2024-01-01 10:00:00+02",
    "2024-01-01",
)


def _answers(dsn: str) -> list[Any]:
    out: list[Any] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists tz_params")
        conn.execute("create table tz_params (id int primary key, zone text, at timestamptz)")
        rows = [(i, zone, wall) for i, (zone, wall) in enumerate(
            (zone, wall) for zone in ZONES for wall in WALLS
        )]  # fmt: skip
        for zone in ZONES:
            conn.execute(f"set time zone '{zone}'" if zone[0] != "-" else f"set time zone {zone}")
            mine = [row for row in rows if row[1] == zone]
            first, rest = mine[0], mine[1:]
            conn.execute("insert into tz_params values (%s, %s, %s)", first, prepare=False)
            with conn.cursor() as cur:
                cur.executemany("insert into tz_params values (%s, %s, %s)", rest)
            for wall in WALLS:
                for prepare in (False, True):
                    out.append(
                        conn.execute(
                            "select %s::timestamptz = at, extract(epoch from %s::timestamptz) "
                            "from tz_params where zone = %s and at = %s",
                            (wall, wall, zone, wall), prepare=prepare,
                        ).fetchall()
                    )  # fmt: skip
            out.append(
                conn.execute("select %s::timestamptz[]::text", (list(WALLS[:4]),)).fetchall()
            )
        conn.execute("set time zone 'UTC'")
        out.append(
            conn.execute("select id, extract(epoch from at) from tz_params order by id").fetchall()
        )
    return out


def test_zone_less_timestamptz_parameters_read_in_the_session_zone(
    nyala_server: NyalaServer, postgres_server: PostgresServer
) -> None:
    assert _answers(nyala_server.dsn) == _answers(postgres_server.dsn)
