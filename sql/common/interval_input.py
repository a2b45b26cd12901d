"""PostgreSQL's interval input forms that DuckDB does not read, as (months, days, microseconds).

DuckDB reads ``1 day 2 hours`` but not ISO 8601 (``P1Y2M3DT4H5M6S``,
``P0001-02-03T04:05:06``), SQL-standard fields (``1-2``, ``3 4:05:06``,
``-1-2 +3 -4:05:06``) nor PostgreSQL's own signed output (``-1 years -2 mons
+3 days -04:05:06``).  ``duckdb_spelling`` reads all of those as
``interval_in`` does (fractions of a unit cascade to the smaller ones: a
month is 30 days; under IntervalStyle sql_standard a leading minus applies to
every field that has no sign of its own) and spells the value as
``N months N days N microseconds``, which DuckDB reads exactly.  A text it
does not recognise is left to DuckDB unchanged.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal

_MICROS = {"H": 3_600_000_000, "M": 60_000_000, "S": 1_000_000}
_ISO_PART = re.compile(r"([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)([YMWDHS])")
_ISO_ALTERNATIVE = re.compile(r"^P([+-]?\d+)-(\d+)-(\d+)(?:T(\d+):(\d+):(\d+(?:\.\d*)?))?$")
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_YEAR_MONTH = re.compile(r"^([+-]?)(\d+)-(\d+)$")
_CLOCK = re.compile(r"^([+-]?)(\d+):(\d+)(?::(\d+(?:\.\d*)?))?$")
_UNITS = {
    "millennium": ("months", 12000), "millennia": ("months", 12000), "mil": ("months", 12000),
    "mils": ("months", 12000), "century": ("months", 1200), "centuries": ("months", 1200),
    "c": ("months", 1200), "cent": ("months", 1200), "decade": ("months", 120),
    "decades": ("months", 120), "dec": ("months", 120), "decs": ("months", 120),
    "year": ("months", 12), "years": ("months", 12), "y": ("months", 12), "yr": ("months", 12),
    "yrs": ("months", 12), "month": ("months", 1), "months": ("months", 1), "mon": ("months", 1),
    "mons": ("months", 1), "week": ("days", 7), "weeks": ("days", 7), "w": ("days", 7),
    "day": ("days", 1), "days": ("days", 1), "d": ("days", 1), "hour": ("micros", 3_600_000_000),
    "hours": ("micros", 3_600_000_000), "h": ("micros", 3_600_000_000),
    "hr": ("micros", 3_600_000_000), "hrs": ("micros", 3_600_000_000),
    "minute": ("micros", 60_000_000), "minutes": ("micros", 60_000_000),
    "min": ("micros", 60_000_000), "mins": ("micros", 60_000_000), "m": ("micros", 60_000_000),
    "second": ("micros", 1_000_000), "seconds": ("micros", 1_000_000),
    "sec": ("micros", 1_000_000), "secs": ("micros", 1_000_000), "s": ("micros", 1_000_000),
    "millisecond": ("micros", 1000), "milliseconds": ("micros", 1000), "ms": ("micros", 1000),
    "msec": ("micros", 1000), "msecs": ("micros", 1000), "microsecond": ("micros", 1),
    "microseconds": ("micros", 1), "us": ("micros", 1), "usec": ("micros", 1),
    "usecs": ("micros", 1),
}  # fmt: skip


class _Value:
    """An interval being added up; fractions of months and days cascade as interval_in's do."""

    def __init__(self) -> None:
        self.months = 0
        self.days = 0
        self.micros = Decimal(0)

    def add(self, field: str, amount: Decimal) -> None:
        if field == "months":
            whole = int(amount)
            self.months += whole
            self.add("days", (amount - whole) * 30)
        elif field == "days":
            whole = int(amount)
            self.days += whole
            self.micros += (amount - whole) * 86_400_000_000
        else:
            self.micros += amount

    def spelled(self) -> str:
        micros = int(self.micros.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
        return f"{self.months} months {self.days} days {micros} microseconds"


def duckdb_spelling(text: str, sql_standard: bool = False) -> str | None:
    """``text`` as DuckDB reads it exactly, or None to leave it as it is."""
    stripped = text.strip()
    if stripped[:1] == "P":
        return _iso_8601(stripped[1:], stripped)
    return _fields(stripped, sql_standard)


def _iso_8601(body: str, text: str) -> str | None:
    alternative = _ISO_ALTERNATIVE.match(text)
    value = _Value()
    if alternative:
        years, months, days, hours, minutes, seconds = alternative.groups()
        value.add("months", Decimal(years) * 12 + Decimal(months))
        value.add("days", Decimal(days))
        for amount, unit in ((hours, "H"), (minutes, "M"), (seconds, "S")):
            if amount:
                value.add("micros", Decimal(amount) * _MICROS[unit])
        return value.spelled()
    date_part, _, time_part = body.partition("T")
    if not body or (not date_part and not time_part):
        return None
    for part, is_time in ((date_part, False), (time_part, True)):
        if _ISO_PART.sub("", part):
            return None
        for number, unit in _ISO_PART.findall(part):
            amount = Decimal(number)
            if is_time and unit in _MICROS:
                value.add("micros", amount * _MICROS[unit])
            elif not is_time and unit in ("Y", "M", "W", "D"):
                field, factor = {"Y": ("months", 12), "M": ("months", 1), "W": ("days", 7)}.get(
                    unit, ("days", 1)
                )
                value.add(field, amount * factor)
            else:
                return None
    return value.spelled()


def _fields(text: str, sql_standard: bool) -> str | None:
    """interval_in's word and field forms; None when some word is not one of them."""
    words = text.lower().split()
    if words[:1] == ["@"]:
        words = words[1:]
    ago = words[-1:] == ["ago"]
    if ago:
        words = words[:-1]
    if not words:
        return None
    negate_all = sql_standard and words[0].startswith("-")
    value = _Value()
    index = 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else None
        if negate_all and index > 0 and word[:1] not in "+-" and word[:1].isdigit():
            word = "-" + word
        year_month, clock = _YEAR_MONTH.match(word), _CLOCK.match(word)
        if year_month:
            sign = -1 if year_month.group(1) == "-" else 1
            value.add(
                "months", sign * Decimal(int(year_month.group(2)) * 12 + int(year_month.group(3)))
            )
        elif clock:
            sign = -1 if clock.group(1) == "-" else 1
            hours, minutes, seconds = clock.group(2), clock.group(3), clock.group(4) or "0"
            micros = (int(hours) * 3600 + int(minutes) * 60) * 1_000_000
            value.add("micros", sign * (micros + Decimal(seconds) * 1_000_000))
        elif re.fullmatch(_NUMBER, word):
            amount = Decimal(word)
            unit = _UNITS.get(following) if following is not None else None
            if unit is not None:
                value.add(unit[0], amount * unit[1])
                index += 1
            elif following is not None and _CLOCK.match(following):
                value.add("days", amount)  # '3 4:05:06': a day count before the clock
            elif following is None:
                value.add("micros", amount * 1_000_000)  # a bare number is seconds
            else:
                return None
        else:
            return None
        index += 1
    if ago:
        value.months, value.days, value.micros = -value.months, -value.days, -value.micros
    return value.spelled()
