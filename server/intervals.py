"""``interval`` results on the wire: PostgreSQL's text spelling (IntervalStyle postgres) and
its binary form, from Arrow's month-day-nanosecond intervals.

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


def text_interval(array: pa.Array, style: str = "postgres") -> pa.Array:
    fields = interval_fields(array)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    return pa.array(
        [
            interval_text(int(f["months"]), int(f["days"]), int(f["nanos"]) // 1000) if ok else None
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
