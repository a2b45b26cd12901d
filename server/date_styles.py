"""Dates and timestamps in the session's ``DateStyle`` other than ISO, as PostgreSQL writes them.

The ISO text (``pgtypes``) is taken apart once with a regex kernel and put
back together in the style's order: SQL ``01/02/2024 03:04:05.5 EST``, German
``02.01.2024 03:04:05.5 EST``, Postgres ``Tue Jan 02 03:04:05.5 2024 EST``
(a date alone ``01-02-2024``), DMY swapping day and month.  A ``timestamptz``
shows its zone's abbreviation instead of the offset, looked up once per
distinct offset.  ``infinity`` and ``-infinity`` are the same in every style.
Binary output never changes with the style.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql.common.date_styles import DateStyle

_ISO = (
    r"^(?P<y>\d{4,})-(?P<m>\d\d)-(?P<d>\d\d)"
    r"(?: (?P<t>\d\d:\d\d:\d\d(?:\.\d+)?)(?P<z>[+-]\d\d(?::\d\d){0,2})?)?(?P<bc> BC)?$"
)
_MONTHS = pa.array(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
)
_EARLIEST_MICROS = (
    dt.datetime(1, 1, 2, tzinfo=dt.UTC) - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
) // dt.timedelta(microseconds=1)
_WEEKDAYS = pa.array(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"])


def restyle(
    iso: pa.Array, style: DateStyle, is_date: bool, zone: str | None, micros: np.ndarray | None
) -> pa.Array:
    """``iso`` (ISO text, offsets on timestamptz values) in ``style``.

    ``zone`` and ``micros`` (the UTC instants) name a timestamptz column's
    zone abbreviations; both None for ``date`` and ``timestamp``.
    """
    if style.style == "ISO" or len(iso) == 0:
        return iso
    parts = pc.extract_regex(iso, _ISO)
    matched = pc.is_valid(parts)
    if not pc.any(matched).as_py():
        return iso
    y, m, d, t, z, bc = (pc.fill_null(pc.struct_field(parts, i), "") for i in range(6))
    sp = pa.scalar(" ")
    time = _prefixed(" ", t)
    zone_part = _prefixed(" ", _abbreviations(z, zone, micros))
    if style.style == "Postgres" and is_date:
        first, second = (d, m) if style.order == "DMY" else (m, d)
        pieces = [first, "-", second, "-", y]
    elif style.style == "Postgres":
        month = _names(_MONTHS, _integers(m) - 1)
        day_month = [d, sp, month] if style.order == "DMY" else [month, sp, d]
        weekday = _names(_WEEKDAYS, _weekdays(_integers(y), _integers(m), _integers(d), bc))
        pieces = [weekday, sp, *day_month, time, sp, y]
    elif style.style == "German":
        pieces = [d, ".", m, ".", y, time]
    else:
        first, second = (d, m) if style.order == "DMY" else (m, d)
        pieces = [first, "/", second, "/", y, time]
    styled = pc.binary_join_element_wise(*pieces, zone_part, bc, "")
    return pc.if_else(matched, styled, iso)


def _prefixed(prefix: str, text: pa.Array) -> pa.Array:
    """``prefix + text`` where text is not empty, else empty."""
    return pc.if_else(pc.equal(text, ""), "", pc.binary_join_element_wise(prefix, text, ""))


def _integers(text: pa.Array) -> np.ndarray:
    numbers = pc.cast(pc.if_else(pc.equal(text, ""), "1", text), pa.int64())
    return np.asarray(numbers.to_numpy(zero_copy_only=False), dtype=np.int64)


def _names(names: pa.Array, index: np.ndarray) -> pa.Array:
    return names.take(pa.array(np.clip(index, 0, len(names) - 1)))


def _weekdays(year: np.ndarray, month: np.ndarray, day: np.ndarray, bc: pa.Array) -> np.ndarray:
    """Day of the week (0 Sunday) of proleptic Gregorian dates, BC years counted astronomically."""
    is_bc = np.asarray(pc.not_equal(bc, "").to_numpy(zero_copy_only=False), dtype=bool)
    year = np.where(is_bc, 1 - year, year)
    year = year - (month <= 2)
    era = np.floor_divide(year, 400)
    year_of_era = year - era * 400
    day_of_year = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days_since_1970 = era * 146_097 + day_of_era - 719_468
    return np.asarray((days_since_1970 + 4) % 7, dtype=np.int64)


def _abbreviations(offsets: pa.Array, zone: str | None, micros: np.ndarray | None) -> pa.Array:
    """Each row's zone abbreviation (``EST``, ``LMT``), computed once per distinct offset."""
    if zone is None or micros is None:
        return offsets
    distinct = pc.unique(offsets)
    index = np.asarray(pc.index_in(offsets, distinct).to_numpy(zero_copy_only=False))
    names = []
    for position, offset in enumerate(distinct.to_pylist()):
        rows = np.flatnonzero(index == position)
        names.append(_abbreviation(offset, zone, int(micros[rows[0]])) if offset else "")
    return pa.array(names, pa.string()).take(pa.array(index))


def _abbreviation(offset: str, zone: str, micros: int) -> str:
    if zone == "UTC":
        return "UTC"
    # Python's datetimes begin at 1 AD; before it a zone keeps its earliest rule (LMT).
    micros = max(micros, _EARLIEST_MICROS)
    try:
        instant = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros)
        name = instant.astimezone(zoneinfo.ZoneInfo(zone)).tzname()
    except (ValueError, OverflowError, zoneinfo.ZoneInfoNotFoundError):
        name = None
    return name or offset
