"""A pipelined batch's parameters decoded column by column.

A run of Binds (pgjdbc's ``executeBatch``, Spark's JDBC writer: thousands of rows a
run) decoded one value at a time spent most of the batch's server time in
``params.decode_param`` (60 µs a text timestamp).  Here each parameter's values
are checked against the plainest spelling of their type with one regular
expression over the whole column and converted by the C-level constructors
(``int``, ``float``, ``datetime.fromisoformat``); a column with any other
spelling, or a value those constructors refuse, is decoded value by value by
``params.decode_param``, which gives PostgreSQL's answer (and error) for each.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from collections.abc import Callable, Sequence

from server import params
from storage.type_oids import TypeOid

_INT_LIMITS = {TypeOid.INT2: 1 << 15, TypeOid.INT4: 1 << 31, TypeOid.INT8: 1 << 63}


def _column_of(value: bytes) -> re.Pattern[bytes]:
    """Values spelled as ``value``, joined by newlines."""
    return re.compile(b"(?:" + value + b"\n)*" + value)


_INTEGERS = _column_of(rb"-?\d{1,19}")
_FLOATS = _column_of(rb"-?\d{1,300}(?:\.\d{1,300})?(?:[eE][+-]?\d{1,3})?")
_TIMESTAMPS = _column_of(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?(?:[+-]\d\d(?::\d\d)?)?")
_ZONED_TIMESTAMPS = _column_of(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?[+-]\d\d(?::\d\d)?")
_ZONE = re.compile(rb"[+-]\d\d(?::\d\d)?$")
_AS_IS = frozenset((TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.BPCHAR))
"""Text types whose value is the client's text itself (``params._identity``)."""


def decode_column(
    raws: Sequence[bytes | None],
    oid: int,
    fmt: int,
    number: int,
    date_order: str,
    zone: str = "UTC",
) -> list[object]:
    """Parameter ``number`` (1-based) of every Bind of a run, NULL as None; raises what
    ``params.decode_param`` raises for the first value it refuses."""
    fast = _FAST.get((oid, fmt))
    if fast is not None:
        present = [raw for raw in raws if raw is not None]
        decoded = fast(present, oid)
        if decoded is not None:
            if len(present) == len(raws):
                return decoded
            values = iter(decoded)
            return [None if raw is None else next(values) for raw in raws]
    decode = params.decode_param
    return [
        None if raw is None else decode(raw, oid, fmt, number, date_order, zone) for raw in raws
    ]


def _spelled(pattern: re.Pattern[bytes], raws: list[bytes]) -> bool:
    """Whether every value is spelled as ``pattern`` wants (one match over the column)."""
    if not raws:
        return True
    joined = b"\n".join(raws)
    return joined.count(b"\n") == len(raws) - 1 and pattern.fullmatch(joined) is not None


def _integers(raws: list[bytes], oid: int) -> list[object] | None:
    if not _spelled(_INTEGERS, raws):
        return None
    values = [int(raw) for raw in raws]
    limit = _INT_LIMITS[TypeOid(oid)]
    if values and not (-limit <= min(values) and max(values) < limit):
        return None  # out of range (22003): one by one
    return [*values]


def _floats(raws: list[bytes], oid: int) -> list[object] | None:
    if not _spelled(_FLOATS, raws):
        return None
    values: list[object] = [float(raw) for raw in raws]
    # Zero may be an underflow and infinity an overflow (both 22003): decided one by one.
    for index, value in enumerate(values):
        if value == 0.0 or not math.isfinite(value):  # type: ignore[arg-type]  # floats
            values[index] = params.decode_param(raws[index], oid, 0)
    return values


def _timestamps(raws: list[bytes], oid: int) -> list[object] | None:
    if not _spelled(_TIMESTAMPS, raws):
        return None
    # A timestamp without time zone ignores a zone given with it, as PostgreSQL does.
    strip = _ZONE.sub
    try:
        return [dt.datetime.fromisoformat(strip(b"", raw).decode()) for raw in raws]
    except ValueError:
        return None  # 24:00:00, a leap second or a day past the month's end: one by one


def _zoned_timestamps(raws: list[bytes], oid: int) -> list[object] | None:
    """timestamptz values that each carry their UTC offset (pgjdbc's ``setTimestamp``), as
    UTC instants; a value without one is read in the session's zone, one by one."""
    if not _spelled(_ZONED_TIMESTAMPS, raws):
        return None
    try:
        return [dt.datetime.fromisoformat(raw.decode()).astimezone(dt.UTC) for raw in raws]
    except (ValueError, OverflowError):
        return None  # 24:00:00, a day past the month's end, an instant past 9999: one by one


def _texts(raws: list[bytes], oid: int) -> list[object] | None:
    """Decoded as one string split at NULs (which UTF-8 has only for NUL itself, so a
    column whose values hold none splits back into them; one that holds a NUL goes one by
    one, where it is refused with 22021)."""
    try:
        values: list[object] = [*b"\0".join(raws).decode().split("\0")] if raws else []
    except UnicodeDecodeError:
        return None
    return values if len(values) == len(raws) else None


def _binary(layout: str, size: int) -> Callable[[list[bytes], int], list[object] | None]:
    def decode(raws: list[bytes], oid: int) -> list[object] | None:
        if any(len(raw) != size for raw in raws):
            return None
        return [value for (value,) in struct.iter_unpack(layout, b"".join(raws))]

    return decode


_FAST: dict[tuple[int, int], Callable[[list[bytes], int], list[object] | None]] = {
    **{(oid, 0): _integers for oid in _INT_LIMITS},
    (TypeOid.FLOAT8, 0): _floats,
    (TypeOid.TIMESTAMP, 0): _timestamps,
    (TypeOid.TIMESTAMPTZ, 0): _zoned_timestamps,
    **{(oid, 0): _texts for oid in _AS_IS},
    (TypeOid.INT2, 1): _binary("!h", 2),
    (TypeOid.INT4, 1): _binary("!i", 4),
    (TypeOid.INT8, 1): _binary("!q", 8),
    (TypeOid.FLOAT8, 1): _binary("!d", 8),
}
