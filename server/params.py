"""Bind parameters: the bytes a client sent, in text or binary format, to Python values by OID.

Each value becomes what ``Session.execute_prepared`` takes: int, float,
Decimal, str, bytes, bool, ``datetime.date``, a naive ``datetime`` for
timestamp and a UTC-aware one for timestamptz.  Text input follows
PostgreSQL's input functions closely enough for drivers: pgjdbc's OID-0
``'2024-01-02 03:04:05+00'`` and ``'2024-01-02 +00'``, psycopg's OID-0 strings
(which stay str when the SQL layer could not infer a type), dates in the
session's DateStyle order (``01/02/2024``, via ``sql.common.date_input``), boolean
spellings and prefixes.  A BC date or a timestamptz outside 1-9999 AD in UTC is
22008: a Python datetime cannot hold it.  Values that do not parse raise PostgreSQL's
SQLSTATE: 22P02 (22007/22008 for dates and times, 22023 for bad hex), 22003
out of range, 22P03 for malformed binary.  Parameters are few, so this is
per-value Python.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import struct
import uuid
import zoneinfo
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np

from server.codec import decode_utf8
from server.pgtypes import UNKNOWN
from sql.common import date_input
from sql.common.array_input import Elements, parse_array
from sql.common.time_input import clock_text, time_spelling
from storage.errors import (
    CharacterNotInRepertoire,
    DatetimeFieldOverflow,
    FeatureNotSupported,
    InvalidBinaryRepresentation,
    InvalidDatetimeFormat,
    InvalidParameterValue,
    InvalidTextRepresentation,
    NumericValueOutOfRange,
)
from storage.type_oids import ARRAY_OID, TypeOid

_TYPE_NAMES: dict[int, str] = {
    TypeOid.BOOL: "boolean",
    TypeOid.INT2: "smallint",
    TypeOid.INT4: "integer",
    TypeOid.INT8: "bigint",
    TypeOid.FLOAT4: "real",
    TypeOid.FLOAT8: "double precision",
    TypeOid.NUMERIC: "numeric",
    TypeOid.DATE: "date",
    TypeOid.TIMESTAMP: "timestamp",
    TypeOid.TIMESTAMPTZ: "timestamp with time zone",
    TypeOid.BYTEA: "bytea",
}

_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_PG_EPOCH = dt.datetime(2000, 1, 1)


def _client_text(data: bytes) -> str:
    """A parameter's text: a NUL byte is refused (22021) as by PostgreSQL's encoding check,
    which no text value passes."""
    if b"\x00" in data:
        raise CharacterNotInRepertoire('invalid byte sequence for encoding "UTF8": 0x00')
    return decode_utf8(data)


def decode_param(
    data: bytes,
    type_oid: int,
    format_code: int,
    param_number: int = 1,
    date_order: str = "MDY",
    zone: str = "UTC",
) -> object:
    """Decode one Bind parameter (never NULL here) to the Python value the SQL layer takes;
    a date or timestamp in text is read in ``date_order`` (DateStyle's) as PostgreSQL does,
    and a timestamptz without an offset in ``zone`` (the session's TimeZone, Arrow's name).
    An array (psycopg's lists, pgjdbc's setArray) becomes a list of its elements' values."""
    element = _ARRAY_ELEMENT.get(type_oid)
    if element is not None:
        if format_code == 1:
            return _decode_array_binary(data, element, param_number)
        parsed = parse_array(_client_text(data))
        return _map_elements(parsed, lambda text: _decode_text(text, element, date_order, zone))
    if format_code == 1:
        decoder = _BINARY_DECODERS.get(type_oid)
        if decoder is None:
            raise FeatureNotSupported(
                f"binary format is not supported for parameter ${param_number} of type {type_oid}"
            )
        try:
            return decoder(data)
        except (struct.error, ValueError, OverflowError, IndexError):
            raise InvalidBinaryRepresentation(
                f"incorrect binary data format in bind parameter {param_number}"
            ) from None
    return _decode_text(_client_text(data), type_oid, date_order, zone)


@functools.lru_cache(maxsize=512)
def decoders(
    type_oids: tuple[int, ...], formats: tuple[int, ...], date_order: str, zone: str = "UTC"
) -> tuple[Callable[[bytes], object], ...]:
    """``decode_param`` for each parameter of a statement's Binds, by its OID and format code,
    chosen once per statement and formats rather than at every Bind."""
    return tuple(
        _decoder(oid, code, number, date_order, zone)
        for number, (oid, code) in enumerate(zip(type_oids, formats, strict=True), start=1)
    )


def _decoder(
    type_oid: int, format_code: int, number: int, date_order: str, zone: str
) -> Callable[[bytes], object]:
    binary = _BINARY_DECODERS.get(type_oid) if format_code == 1 else None
    if (
        type_oid in _ARRAY_ELEMENT
        or type_oid in _DATETIME_OIDS
        or (format_code == 1 and binary is None)
    ):
        return functools.partial(
            decode_param, type_oid=type_oid, format_code=format_code, param_number=number,
            date_order=date_order, zone=zone,
        )  # fmt: skip
    if binary is not None:
        decode = binary

        def from_binary(data: bytes) -> object:
            try:
                return decode(data)
            except (struct.error, ValueError, OverflowError, IndexError):
                raise InvalidBinaryRepresentation(
                    f"incorrect binary data format in bind parameter {number}"
                ) from None

        return from_binary
    from_text = _TEXT_DECODERS.get(type_oid, _identity)
    if type_oid in _INTEGER_RANGES:
        return _plain_integer(_INTEGER_RANGES[type_oid], from_text)
    return lambda data: from_text(_client_text(data))


def _plain_integer(limit: int, from_text: Callable[[str], object]) -> Callable[[bytes], object]:
    """An integer parameter's text read by ``int`` straight from its bytes when it is a plain
    in-range integer (the usual key); anything else (an underscore, which ``int`` allows and
    PostgreSQL 15 does not, a NUL, a bad or out-of-range value) takes ``from_text`` and its
    errors."""

    def decode(data: bytes) -> object:
        if b"_" not in data:
            try:
                value = int(data)
            except ValueError:
                pass
            else:
                if -limit <= value < limit:
                    return value
        return from_text(_client_text(data))

    return decode


def _decode_text(text: str, type_oid: int, date_order: str, zone: str = "UTC") -> object:
    if type_oid in _DATETIME_OIDS:
        far = _far_datetime(text, date_order)
        if far is not None:
            return far
        text = date_input.iso_spelling(text, date_order) or text
    if type_oid == TypeOid.TIMESTAMPTZ:
        return _decode_timestamptz(text, zone)
    return _TEXT_DECODERS.get(type_oid, _identity)(text)


_ARRAY_ELEMENT: dict[int, int] = {
    array: element
    for element, array in ARRAY_OID.items()
    if element in _TYPE_NAMES or element in (TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.BPCHAR)
}
"""The array types whose parameters are decoded to lists, by their element type."""


def _map_elements(value: Elements, decode: Callable[[str], object]) -> list[object]:
    return [
        _map_elements(item, decode) if isinstance(item, list)
        else None if item is None
        else decode(item)
        for item in value
    ]  # fmt: skip


def _decode_array_binary(data: bytes, element: int, param_number: int) -> list[object]:
    """array_recv's layout: dimensions, a NULL flag, the element OID, each dimension's length
    and lower bound, then each element as a length (-1 for NULL) and its binary value."""
    decoder = _BINARY_DECODERS.get(element)
    try:
        ndim, _flags, sent_element = struct.unpack_from("!iii", data)
        if decoder is None or (sent_element != element and sent_element != 0):
            raise FeatureNotSupported(
                f"binary format is not supported for parameter ${param_number} of type "
                f"{_TYPE_NAMES.get(element, str(element))}[]"
            )
        if not 0 <= ndim <= 6:
            raise ValueError("bad dimensions")
        dims = [struct.unpack_from("!ii", data, 12 + 8 * i)[0] for i in range(ndim)]
        position = 12 + 8 * ndim
        flat: list[object] = []
        for _ in range(int(np.prod(dims)) if dims else 0):
            (length,) = struct.unpack_from("!i", data, position)
            position += 4
            if length < 0:
                flat.append(None)
                continue
            flat.append(decoder(data[position : position + length]))
            position += length
        if position != len(data) or any(d < 0 for d in dims):
            raise ValueError("trailing bytes")
    except (struct.error, ValueError, OverflowError, IndexError):
        raise InvalidBinaryRepresentation(
            f"incorrect binary data format in bind parameter {param_number}"
        ) from None
    for length in reversed(dims[1:]):
        flat = [flat[i : i + length] for i in range(0, len(flat), length)]
    return flat


_DATETIME_OIDS = frozenset((TypeOid.DATE, TypeOid.TIMESTAMP, TypeOid.TIMESTAMPTZ))
_ERA = re.compile(r"\b(BC|AD)\s*$", re.IGNORECASE)
_INFINITIES = {"infinity": "infinity", "+infinity": "infinity", "-infinity": "-infinity"}
_FAR_YEAR = re.compile(r"\s*\+?\d{5,}-")


def _far_datetime(text: str, date_order: str) -> str | None:
    """A date or timestamp a Python ``datetime`` cannot hold (infinity, BC, past 9999) as the
    text DuckDB reads, which the statement casts; None for any other."""
    special = _INFINITIES.get(text.strip().lower())
    if special is not None:
        return special
    if _ERA.search(text) and _ERA.search(text).group(1).upper() == "BC":  # type: ignore[union-attr]
        return date_input.iso_spelling(text, date_order) or text
    if _FAR_YEAR.match(text):
        return date_input.iso_spelling(text, date_order) or text.strip().lstrip("+")
    return None


def _identity(text: str) -> str:
    return text


def _invalid(type_oid: int, text: str) -> InvalidTextRepresentation:
    return InvalidTextRepresentation(
        f'invalid input syntax for type {_TYPE_NAMES[type_oid]}: "{text}"'
    )


_BOOL_WORDS = (
    ("true", True, 1),
    ("false", False, 1),
    ("yes", True, 1),
    ("no", False, 1),
    ("on", True, 2),
    ("off", False, 2),
    ("1", True, 1),
    ("0", False, 1),
)


def _decode_bool(text: str) -> bool:
    word = text.strip().lower()
    for spelling, value, shortest in _BOOL_WORDS:
        if len(word) >= shortest and spelling.startswith(word):
            return value
    raise _invalid(TypeOid.BOOL, text)


_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_INTEGER_RANGES: dict[int, int] = {TypeOid.INT2: 2**15, TypeOid.INT4: 2**31, TypeOid.INT8: 2**63}


def _decode_int(type_oid: int) -> Callable[[str], int]:
    limit = _INTEGER_RANGES[type_oid]

    def decode(text: str) -> int:
        if not _INTEGER.fullmatch(text):
            raise _invalid(type_oid, text)
        value = int(text)
        if not -limit <= value < limit:
            raise NumericValueOutOfRange(
                f'value "{text}" is out of range for type {_TYPE_NAMES[type_oid]}'
            )
        return value

    return decode


_FLOAT = re.compile(
    r"\s*[+-]?(?:(?P<digits>\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*", re.IGNORECASE
)


def _decode_float(type_oid: int) -> Callable[[str], float]:
    def decode(text: str) -> float:
        match = _FLOAT.fullmatch(text)
        if match is None:
            raise _invalid(type_oid, text)
        value = float(text)
        digits = match.group("digits")
        if digits is not None:
            if type_oid == TypeOid.FLOAT4:
                with np.errstate(over="ignore"):
                    value = float(np.float32(value))
            underflow = value == 0 and digits.strip("0.") != ""
            if not np.isfinite(value) or underflow:
                raise NumericValueOutOfRange(
                    f'"{text}" is out of range for type {_TYPE_NAMES[type_oid]}'
                )
        return value

    return decode


_NUMERIC = re.compile(
    r"\s*(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|[+-]?inf|[+-]?infinity)\s*",
    re.IGNORECASE,
)


def _decode_numeric(text: str) -> Decimal:
    if not _NUMERIC.fullmatch(text):
        raise _invalid(TypeOid.NUMERIC, text)
    word = text.strip().lower().lstrip("+")
    if word in ("inf", "-inf"):
        word += "inity"
    return Decimal(word)


def _decode_bytea(text: str) -> bytes:
    """byteain: ``\\x`` hex (whitespace allowed between digit pairs) or the escape format."""
    if text.startswith("\\x"):
        hex_digits = "".join(text[2:].split())
        bad = re.search(r"[^0-9a-fA-F]", hex_digits)
        if bad:
            raise InvalidParameterValue(f'invalid hexadecimal digit: "{bad.group()}"')
        if len(hex_digits) % 2:
            raise InvalidParameterValue("invalid hexadecimal data: odd number of digits")
        return bytes.fromhex(hex_digits)
    out = bytearray()
    raw = text.encode("utf-8")
    pos = 0
    while pos < len(raw):
        if raw[pos] != 0x5C:
            out.append(raw[pos])
            pos += 1
        elif raw[pos + 1 : pos + 2] == b"\\":
            out.append(0x5C)
            pos += 2
        elif re.fullmatch(rb"[0-3][0-7][0-7]", raw[pos + 1 : pos + 4]):
            out.append(int(raw[pos + 1 : pos + 4], 8))
            pos += 4
        else:
            raise InvalidTextRepresentation("invalid input syntax for type bytea")
    return bytes(out)


_DATETIME = re.compile(
    r"\s*(?:(?P<year>\d{4,})-(?P<month>\d{1,2})-(?P<day>\d{1,2})|(?P<compact>\d{8}))"
    r"(?:(?:[ T]|\s+)(?P<hour>\d{1,2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:\.(?P<fraction>\d*))?)?)?"
    r"\s*(?P<zone>Z|UTC|GMT|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?|(?!(?:BC|AD)\b)[A-Za-z][\w/+-]*)?"
    r"\s*(?P<era>BC|AD)?\s*",
    re.IGNORECASE,
)


def _parse_datetime(text: str, type_oid: int) -> tuple[dt.datetime, dt.tzinfo | None]:
    """Parse an ISO date or timestamp; returns the local wall time and its zone, if one was given."""
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise InvalidDatetimeFormat(
            f'invalid input syntax for type {_TYPE_NAMES[type_oid]}: "{text}"'
        )
    if (match.group("era") or "").upper() == "BC":
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
    fraction = Decimal("0." + (match.group("fraction") or "0"))
    micros = int(fraction.scaleb(6).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    hour, minute = int(match.group("hour") or 0), int(match.group("minute") or 0)
    second = int(match.group("second") or 0)
    try:
        if hour > 24 or minute > 59 or second > 60 or (hour == 24 and (minute or second or micros)):
            raise ValueError("time of day out of range")
        compact = match.group("compact")
        if compact:
            ymd = (int(compact[:4]), int(compact[4:6]), int(compact[6:]))
        else:
            ymd = (int(match.group("year")), int(match.group("month")), int(match.group("day")))
        day = dt.datetime(*ymd)
        wall = day + dt.timedelta(hours=hour, minutes=minute, seconds=second, microseconds=micros)
    except (ValueError, OverflowError):
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"') from None
    return wall, _zone(match.group("zone"))


def _zone(spelling: str | None) -> dt.tzinfo | None:
    if spelling is None:
        return None
    if spelling.upper() in ("Z", "UTC", "GMT"):
        return dt.UTC
    if spelling[0] in "+-":
        digits = spelling[1:].replace(":", "")
        if len(digits) <= 2:
            hours, minutes, seconds = int(digits), 0, 0
        elif len(digits) <= 4:
            hours, minutes, seconds = int(digits[:-2]), int(digits[-2:]), 0
        else:
            hours, minutes, seconds = int(digits[:-4]), int(digits[-4:-2]), int(digits[-2:])
        offset = dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)
        return dt.timezone(-offset if spelling[0] == "-" else offset)
    try:
        return zoneinfo.ZoneInfo(spelling)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidParameterValue(f'time zone "{spelling}" not recognized') from None


def _decode_date(text: str) -> dt.date:
    return _parse_datetime(text, TypeOid.DATE)[0].date()


def _decode_timestamp(text: str) -> dt.datetime:
    return _parse_datetime(text, TypeOid.TIMESTAMP)[0]


def _decode_timestamptz(text: str, session_zone: str = "UTC") -> dt.datetime:
    wall, zone = _parse_datetime(text, TypeOid.TIMESTAMPTZ)
    try:
        if zone is None:
            return _in_zone(wall, _tzinfo(session_zone)).astimezone(dt.UTC)
        return wall.replace(tzinfo=zone).astimezone(dt.UTC)
    except OverflowError:
        # The instant falls outside 1-9999 AD in UTC, which a Python datetime cannot hold.
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"') from None


@functools.lru_cache(maxsize=64)
def _tzinfo(name: str) -> dt.tzinfo:
    """The zone Arrow names ``name``: an IANA name, UTC, or a fixed ``+HH:MM`` offset."""
    if name == "UTC":
        return dt.UTC
    if name[0] in "+-":
        hours, minutes = name[1:].split(":")
        offset = dt.timedelta(hours=int(hours), minutes=int(minutes))
        return dt.timezone(-offset if name[0] == "-" else offset)
    return zoneinfo.ZoneInfo(name)


def _in_zone(wall: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """``wall`` read in ``zone`` as PostgreSQL reads it: a time a clock shows twice (the
    autumn change) is the later one, a time it skips (spring) is read with the offset
    before the change, so it lands past the gap."""
    early, late = wall.replace(tzinfo=zone, fold=0), wall.replace(tzinfo=zone, fold=1)
    early_offset, late_offset = early.utcoffset(), late.utcoffset()
    if early_offset is not None and late_offset is not None and early_offset > late_offset:
        return late
    return early


def _decode_time(with_zone: bool) -> Callable[[str], object]:
    """time_in and timetz_in: PostgreSQL's spellings as the text DuckDB reads (``24:00:00``
    too, which a ``datetime.time`` cannot hold); a text neither reads is DuckDB's to refuse."""

    def decode(text: str) -> object:
        return time_spelling(text, with_zone=with_zone) or text

    return decode


def _decode_time_binary(data: bytes) -> str:
    """time_recv: microseconds since midnight, as text (24:00:00 included)."""
    (micros,) = struct.unpack(">q", data)
    if not 0 <= micros <= 86_400_000_000:
        raise ValueError("time out of range")
    return clock_text(micros)


def _decode_timetz_binary(data: bytes) -> str:
    """timetz_recv: microseconds of the local time, then seconds west of UTC."""
    micros, west = struct.unpack(">qi", data)
    if not 0 <= micros <= 86_400_000_000 or abs(west) >= 16 * 3600:
        raise ValueError("time with time zone out of range")
    hours, rest = divmod(abs(west), 3600)
    minutes, seconds = divmod(rest, 60)
    zone = f"{'-' if west > 0 else '+'}{hours:02d}:{minutes:02d}" + (
        f":{seconds:02d}" if seconds else ""
    )
    return clock_text(micros) + zone


_TEXT_DECODERS: dict[int, Callable[[str], object]] = {
    TypeOid.BOOL: _decode_bool,
    TypeOid.BYTEA: _decode_bytea,
    TypeOid.INT2: _decode_int(TypeOid.INT2),
    TypeOid.INT4: _decode_int(TypeOid.INT4),
    TypeOid.INT8: _decode_int(TypeOid.INT8),
    TypeOid.FLOAT4: _decode_float(TypeOid.FLOAT4),
    TypeOid.FLOAT8: _decode_float(TypeOid.FLOAT8),
    TypeOid.NUMERIC: _decode_numeric,
    TypeOid.DATE: _decode_date,
    TypeOid.TIMESTAMP: _decode_timestamp,
    TypeOid.TIMESTAMPTZ: _decode_timestamptz,
    TypeOid.TIME: _decode_time(with_zone=False),
    TypeOid.TIMETZ: _decode_time(with_zone=True),
}


def _unpack(fmt: str) -> Callable[[bytes], object]:
    layout = struct.Struct(fmt)

    def decode(data: bytes) -> object:
        return layout.unpack(data)[0]

    return decode


def _decode_numeric_binary(data: bytes) -> Decimal:
    ndigits, weight, sign, dscale = struct.unpack_from("!hhHh", data)
    groups = struct.unpack_from(f"!{ndigits}h", data, 8)
    if len(data) != 8 + 2 * ndigits or any(not 0 <= g < 10000 for g in groups):
        raise ValueError("malformed numeric")
    if sign == 0xC000:
        return Decimal("NaN")
    if sign in (0xD000, 0xF000):
        return Decimal("Infinity" if sign == 0xD000 else "-Infinity")
    if sign not in (0, 0x4000):
        raise ValueError("invalid numeric sign")
    digits = "".join(f"{g:04d}" for g in groups) or "0"
    exponent = 4 * (weight - ndigits + 1) if ndigits else 0
    if exponent > -dscale:
        digits += "0" * (exponent + dscale)
        exponent = -dscale
    while exponent < -dscale and len(digits) > 1 and digits.endswith("0"):
        digits = digits[:-1]
        exponent += 1
    return Decimal((1 if sign else 0, tuple(int(c) for c in digits), exponent))


def _zoned_utc(value: dt.datetime | str) -> dt.datetime | str:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC)
    return value if value.endswith("infinity") else value + "+00"


_INT32_RANGE = (-(2**31), 2**31 - 1)
_INT64_RANGE = (-(2**63), 2**63 - 1)


def _decode_date_binary(data: bytes) -> dt.date | str:
    """date_recv; infinity and dates a ``datetime.date`` cannot hold as DuckDB's text."""
    (days,) = struct.unpack("!i", data)
    if days in _INT32_RANGE:
        return "-infinity" if days < 0 else "infinity"
    try:
        return _PG_EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        return _far_text(np.datetime64("2000-01-01", "D") + np.timedelta64(days, "D"))


def _decode_timestamp_binary(data: bytes) -> dt.datetime | str:
    """timestamp_recv; infinity and times a ``datetime`` cannot hold as DuckDB's text."""
    (micros,) = struct.unpack("!q", data)
    if micros in _INT64_RANGE:
        return "-infinity" if micros < 0 else "infinity"
    try:
        return _PG_EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        instant = np.datetime64("2000-01-01", "us") + np.timedelta64(micros, "us")
        return f"{_far_text(instant.astype('datetime64[D]'))} {str(instant).split('T')[1]}"


def _far_text(day: np.datetime64) -> str:
    """A numpy day outside years 1-9999 as DuckDB's ISO text (astronomical year: 1 BC is 0)."""
    year = int(day.astype("datetime64[Y]").astype(np.int64)) + 1970
    month_start = day.astype("datetime64[M]")
    month = int(month_start.astype(np.int64)) % 12 + 1
    mday = int((day - month_start.astype("datetime64[D]")).astype(np.int64)) + 1
    return f"{'-' if year < 0 else ''}{abs(year):04d}-{month:02d}-{mday:02d}"


def _decode_bool_binary(data: bytes) -> bool:
    if len(data) != 1:
        raise ValueError("bool is one byte")
    return data != b"\x00"


def _decode_jsonb_binary(data: bytes) -> str:
    if data[:1] != b"\x01":
        raise ValueError("unsupported jsonb version")
    return _client_text(data[1:])


_BINARY_DECODERS: dict[int, Callable[[bytes], object]] = {
    UNKNOWN: _client_text,
    TypeOid.BOOL: _decode_bool_binary,
    TypeOid.BYTEA: bytes,
    TypeOid.INT2: _unpack("!h"),
    TypeOid.INT4: _unpack("!i"),
    TypeOid.INT8: _unpack("!q"),
    TypeOid.FLOAT4: _unpack("!f"),
    TypeOid.FLOAT8: _unpack("!d"),
    TypeOid.NUMERIC: _decode_numeric_binary,
    TypeOid.TEXT: _client_text,
    TypeOid.VARCHAR: _client_text,
    TypeOid.BPCHAR: _client_text,
    TypeOid.NAME: _client_text,
    TypeOid.DATE: _decode_date_binary,
    TypeOid.TIMESTAMP: _decode_timestamp_binary,
    TypeOid.TIMESTAMPTZ: lambda data: _zoned_utc(_decode_timestamp_binary(data)),
    TypeOid.TIME: _decode_time_binary,
    TypeOid.TIMETZ: _decode_timetz_binary,
    TypeOid.UUID: lambda data: str(uuid.UUID(bytes=data)),
    TypeOid.JSONB: _decode_jsonb_binary,
    TypeOid.JSON: _client_text,
}
