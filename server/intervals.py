"""``interval`` results on the wire: PostgreSQL's text spelling in each IntervalStyle
(postgres, postgres_verbose, sql_standard, iso_8601, as ``EncodeInterval``) and its binary form, from Arrow's month-day-nanosecond intervals.

Arrow stores each value as (months int32, days int32, nanoseconds int64); both
encodings read those three fields straight from the buffer as numpy columns.
The text form is built per value (no kernel spells ``1 year 2 mons``), as
``interval_out`` does: the fields that are not zero, a ``+`` before a
positive field that follows a negative one, then ``hh:mm:ss[.ffffff]`` when
there is a time part or nothing else.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_FIELDS = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])
_WIRE = np.dtype([("micros", ">i8"), ("days", ">i4"), ("months", ">i4")])


def interval_fields(array: pa.Array) -> np.ndarray:
    """The values as a numpy record array of months, days and nanoseconds (NULL slots arbitrary)."""
    if not pa.types.is_interval(array.type):
        array = array.cast(pa.month_day_nano_interval())
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(len(array), dtype=_FIELDS)
    return np.frombuffer(buffer, dtype=_FIELDS)[array.offset : array.offset + len(array)]


def _part(value: int, unit: str, state: list[bool]) -> str:
    """AddPostgresIntPart: ``state`` is [nothing written yet, last field was negative]."""
    if value == 0:
        return ""
    text = ("" if state[0] else " ") + ("+" if state[1] and value > 0 else "")
    text += f"{value} {unit}{'' if value == 1 else 's'}"
    state[0], state[1] = False, value < 0
    return text


def interval_text(months: int, days: int, micros: int) -> str:
    """One interval as PostgreSQL 15 writes it with IntervalStyle postgres."""
    state = [True, False]
    years, mons = abs(months) // 12, abs(months) % 12
    sign = -1 if months < 0 else 1
    text = _part(sign * years, "year", state) + _part(sign * mons, "mon", state)
    text += _part(days, "day", state)
    if state[0] or micros:
        minus = micros < 0
        seconds, fraction = divmod(abs(micros), 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        text += ("" if state[0] else " ") + ("-" if minus else "+" if state[1] else "")
        text += f"{hour:02d}:{minute:02d}:{second:02d}"
        if fraction:
            text += f".{fraction:06d}".rstrip("0")
    return text


def _seconds(seconds: int, fraction: int, zero_fill: bool) -> str:
    """AppendSeconds: whole seconds (two digits when ``zero_fill``), then the fraction's
    significant digits."""
    text = f"{seconds:02d}" if zero_fill else str(seconds)
    return text + (f".{fraction:06d}".rstrip("0") if fraction else "")


def _clock(micros: int) -> tuple[int, int, int, int]:
    """Hours, minutes, seconds, microseconds of a time, each with the time's sign."""
    sign = -1 if micros < 0 else 1
    seconds, fraction = divmod(abs(micros), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return sign * hour, sign * minute, sign * second, sign * fraction


def _month_parts(months: int) -> tuple[int, int]:
    """Years and months with the sign of ``months`` (C's truncating division)."""
    sign = -1 if months < 0 else 1
    return sign * (abs(months) // 12), sign * (abs(months) % 12)


def verbose_text(months: int, days: int, micros: int) -> str:
    """IntervalStyle postgres_verbose: ``@ 1 year 2 mons -3 days 4 hours ago``."""
    year, mon = _month_parts(months)
    hour, minute, sec, fsec = _clock(micros)
    state = {"zero": True, "before": False}
    text = "@"
    for value, unit in (
        (year, "year"),
        (mon, "mon"),
        (days, "day"),
        (hour, "hour"),
        (minute, "min"),
    ):
        if value == 0:
            continue
        if state["zero"]:
            state["before"], value = value < 0, abs(value)
        elif state["before"]:
            value = -value
        text += f" {value} {unit}{'' if value == 1 else 's'}"
        state["zero"] = False
    if sec or fsec:
        text += " "
        if sec < 0 or (sec == 0 and fsec < 0):
            if state["zero"]:
                state["before"] = True
            elif not state["before"]:
                text += "-"
        elif state["before"]:
            text += "-"
        text += _seconds(abs(sec), abs(fsec), False)
        text += f" sec{'s' if abs(sec) != 1 or fsec else ''}"
        state["zero"] = False
    if state["zero"]:
        text += " 0"
    return text + (" ago" if state["before"] else "")


def sql_standard_text(months: int, days: int, micros: int) -> str:
    """IntervalStyle sql_standard: ``1-2``, ``3 4:05:06``, ``+1-2 -3 +4:05:06`` when mixed."""
    year, mon = _month_parts(months)
    hour, minute, sec, fsec = _clock(micros)
    fields = (year, mon, days, hour, minute, sec, fsec)
    negative, positive = any(f < 0 for f in fields), any(f > 0 for f in fields)
    year_month, day_time = bool(year or mon), bool(days or micros)
    standard = not (negative and positive) and not (year_month and day_time)
    if not negative and not positive:
        return "0"
    if not standard:
        year_sign = "-" if year < 0 or mon < 0 else "+"
        day_sign = "-" if days < 0 else "+"
        time_sign = "-" if micros < 0 else "+"
        return (
            f"{year_sign}{abs(year)}-{abs(mon)} {day_sign}{abs(days)} "
            f"{time_sign}{abs(hour)}:{abs(minute):02d}:{_seconds(abs(sec), abs(fsec), True)}"
        )
    sign = "-" if negative else ""
    if year_month:
        return f"{sign}{abs(year)}-{abs(mon)}"
    clock = f"{abs(hour)}:{abs(minute):02d}:{_seconds(abs(sec), abs(fsec), True)}"
    return f"{sign}{abs(days)} {clock}" if days else f"{sign}{clock}"


def iso_8601_text(months: int, days: int, micros: int) -> str:
    """IntervalStyle iso_8601: ``P1Y2M3DT4H5M6.5S``, ``PT0S`` for zero."""
    year, mon = _month_parts(months)
    hour, minute, sec, fsec = _clock(micros)
    if not (months or days or micros):
        return "PT0S"
    text = "P" + "".join(f"{v}{u}" for v, u in ((year, "Y"), (mon, "M"), (days, "D")) if v)
    if micros:
        text += "T" + "".join(f"{v}{u}" for v, u in ((hour, "H"), (minute, "M")) if v)
    if sec or fsec:
        text += ("-" if sec < 0 or fsec < 0 else "") + _seconds(abs(sec), abs(fsec), False) + "S"
    return text


_STYLES = {
    "postgres": interval_text,
    "postgres_verbose": verbose_text,
    "sql_standard": sql_standard_text,
    "iso_8601": iso_8601_text,
}


def text_interval(array: pa.Array, style: str = "postgres") -> pa.Array:
    """The values in IntervalStyle ``style``."""
    spell = _STYLES[style]
    fields = interval_fields(array)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    return pa.array(
        [
            spell(int(f["months"]), int(f["days"]), int(f["nanos"]) // 1000) if ok else None
            for f, ok in zip(fields, valid, strict=True)
        ],
        pa.string(),
    )


def binary_interval(array: pa.Array) -> np.ndarray:
    """interval_send's 16 bytes per value: microseconds, days, months, big-endian."""
    fields = interval_fields(array)
    wire = np.empty(len(fields), dtype=_WIRE)
    wire["micros"] = fields["nanos"] // 1000
    wire["days"] = fields["days"]
    wire["months"] = fields["months"]
    return wire
