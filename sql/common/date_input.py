"""PostgreSQL's non-ISO date input, read with the session's DateStyle field order.

DuckDB reads only ISO dates (``2024-01-02``); PostgreSQL also reads
``01/02/2024``, ``02.01.2024``, ``Jan 2, 2024``, ``2 Jan 2024``,
``20240102`` and its own Postgres-style output (``Tue Jan 02 03:04:05 2024 EST``),
taking three numeric fields as month/day/year, day/month/year or
year/month/day as ``DateStyle`` orders them (a first field of more than two
digits is always a year), and a two-digit year as 1970-2069.  ``iso_spelling``
rewrites such a value to the ISO spelling DuckDB reads, keeping the time, zone
and zone words; a day or month out of range fails with 22008 as there.  A ``BC``
date (``0044-03-15 BC``) becomes DuckDB's astronomical year (``-0043-03-15``: 1 BC
is year 0), and one before 4714-11-24 BC, where PostgreSQL's dates begin, is 22008, as is one after 5874897-12-31, where they end.  Anything it does not recognise is left to DuckDB unchanged.
"""

from __future__ import annotations

import calendar
import re

from storage.errors import DatetimeFieldOverflow

_MONTHS = {
    name: number
    for number in range(1, 13)
    for name in (calendar.month_name[number].lower(), calendar.month_abbr[number].lower())
}
_MONTHS["sept"] = 9
_WEEKDAYS = {
    name
    for day in range(7)
    for name in (calendar.day_name[day].lower(), calendar.day_abbr[day].lower())
} | {"tues", "wednes", "thur", "thurs"}
_ISO_START = re.compile(r"^\s*[+-]?\d{3,}-\d{1,2}-\d{1,2}(?:$|[\sT])")
_YEAR_ZERO = re.compile(r"^\s*0+-")
"""PostgreSQL has no year 0 (1 BC precedes 1 AD); DuckDB would read it as 1 BC."""
_TIME = re.compile(r"^\d{1,2}:\d\d(?::\d\d(?:\.\d*)?)?(?:[+-]\d{1,2}(?::?\d\d){0,2})?$")
_ZONE = re.compile(r"^(?:[+-]\d{1,2}(?::?\d\d){0,2}|[a-z][a-z0-9_/+-]*)$", re.IGNORECASE)
_SEPARATED = re.compile(r"^[a-z0-9]+(?:[/.-][a-z0-9]+){1,2}$", re.IGNORECASE)
_FIRST_DAY = (-4713, 11, 24)
"""4714-11-24 BC, the first day PostgreSQL's dates and timestamps hold (Julian day 0)."""
_LAST_DAY = (5874897, 12, 31)
"""PostgreSQL's last date (DuckDB's dates go on to 5881580; its timestamps stop at 294247)."""
_ISO_DAY = re.compile(r"^\s*\+?(\d+)-(\d{1,2})-(\d{1,2})")
_SPECIAL = {"now", "today", "tomorrow", "yesterday", "epoch", "infinity", "-infinity", "allballs"}


def iso_spelling(text: str, order: str) -> str | None:
    """``text`` spelt as ISO for DuckDB, or None to leave it as it is."""
    words = text.replace(",", " ").split()
    if _ISO_START.match(text) and not any(w.lower() == "bc" for w in words):
        if _YEAR_ZERO.match(text):
            raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
        iso = _ISO_DAY.match(text)
        if iso is not None and tuple(int(f) for f in iso.groups()) > _LAST_DAY:
            raise DatetimeFieldOverflow(f'date out of range: "{text}"')
        return text.strip() if text != text.strip() else None
    if not words or any(w.lower() in _SPECIAL for w in words):
        return None
    fields: list[str] = []
    month: int | None = None
    time, zone, era = "", "", ""
    for word in words:
        lower = word.lower()
        if lower in _WEEKDAYS:
            continue
        if lower in ("bc", "ad"):
            era = " BC" if lower == "bc" else ""
        elif lower in _MONTHS and month is None:
            month = _MONTHS[lower]
        elif _TIME.match(word) and not time:
            time = word
        elif word.isdigit() or (_SEPARATED.match(word) and not fields):
            for part in re.split(r"[/.-]", word):
                if part.lower() in _MONTHS and month is None:
                    month = _MONTHS[part.lower()]
                elif part.isdigit():
                    fields.append(part)
                else:
                    return None
        elif _ZONE.match(word) and time and not zone:
            zone = word
        else:
            return None
    if month is None and len(fields) == 1 and len(fields[0]) <= 2:
        _lone_field(int(fields[0]), order, text)
    ymd = _date_fields(fields, month, order, text, adjust_years=not era)
    if ymd is None:
        return None
    year, mon, day = ymd
    if not 1 <= mon <= 12 or not 1 <= day <= _days_in(year, mon, bool(era)):
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
    if era:
        year = 1 - year  # DuckDB counts years astronomically: 1 BC is year 0
    if not _FIRST_DAY <= (year, mon, day) <= _LAST_DAY:
        raise DatetimeFieldOverflow(f'date out of range: "{text}"')
    spelled = (
        f"{year:04d}-{mon:02d}-{day:02d}" if year >= 0 else f"-{-year:04d}-{mon:02d}-{day:02d}"
    )
    return spelled + (f" {time}" if time else "") + (f" {zone}" if zone else "")


def _lone_field(value: int, order: str, text: str) -> None:
    """A date of one short number (``'41'``): PostgreSQL takes it as DateStyle's first
    field and refuses a month or day out of range with 22008 before it misses the others
    (22007, left to the caller)."""
    if (order == "MDY" and not 1 <= value <= 12) or (order == "DMY" and not 1 <= value <= 31):
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')


def _date_fields(
    fields: list[str], month: int | None, order: str, text: str, adjust_years: bool
) -> tuple[int, int, int] | None:
    """Year, month and day; ``adjust_years`` reads a two-digit year as 1970-2069 (not BC)."""

    def _year(digits: str) -> int:
        year = int(digits)
        if len(digits) <= 2 and adjust_years:
            year += 2000 if year < 70 else 1900
        return year

    if month is not None and len(fields) == 2:
        first, second = fields
        if len(first) > 2 or (order == "YMD" and len(second) <= 2):
            return _year(first), month, int(second)
        return _year(second), month, int(first)
    if month is None and len(fields) == 1 and len(fields[0]) in (6, 8):
        digits = fields[0]
        return _year(digits[:-4]), int(digits[-4:-2]), int(digits[-2:])
    if month is not None or len(fields) != 3:
        return None
    first, second, third = fields
    if len(first) > 2 or order == "YMD":
        if order == "YMD" and len(first) <= 2 and len(third) > 2:
            raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
        return _year(first), int(second), int(third)
    if order == "DMY":
        return _year(third), int(second), int(first)
    return _year(third), int(first), int(second)


def _days_in(year: int, month: int, before_christ: bool) -> int:
    astronomical = 1 - year if before_christ else year
    if month == 2:
        leap = astronomical % 4 == 0 and (astronomical % 100 != 0 or astronomical % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31
