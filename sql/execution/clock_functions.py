"""The wall clock for ``clock_timestamp()`` and ``timeofday()``, which PostgreSQL reads anew
on every call (each row of a statement gets its own time), unlike ``now()``.

DuckDB has no volatile clock, so these are Python functions DuckDB may not fold or cache
(``side_effects``); the transpiler turns the microseconds into a timestamptz.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
import zoneinfo

import duckdb

from sql.planner.transpile import CLOCK_FUNCTION, TIMEOFDAY_FUNCTION


def _clock_micros() -> int:
    return time.time_ns() // 1000


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def _timeofday(zone: str) -> str:
    """PostgreSQL's timeofday() text in the session's TimeZone, with its abbreviation."""
    return dt.datetime.now(_zone(zone)).strftime("%a %b %d %H:%M:%S.%f %Y %Z")


def register(duck: duckdb.DuckDBPyConnection) -> None:
    duck.create_function(CLOCK_FUNCTION, _clock_micros, [], "BIGINT", side_effects=True)
    duck.create_function(TIMEOFDAY_FUNCTION, _timeofday, ["VARCHAR"], "VARCHAR", side_effects=True)
