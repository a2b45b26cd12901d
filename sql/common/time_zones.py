"""Session time zones as PostgreSQL names them: IANA names, and fixed offsets from ``SET TIME
ZONE -5``.

A zone is checked and given PostgreSQL's display form here (``SHOW TimeZone``),
and translated to the names the engines take: DuckDB's ICU zone (which casts,
``date_trunc``, ``extract``, ``AT TIME ZONE`` and interval arithmetic follow,
DST included) and Arrow's (which the wire encoder formats ``timestamptz`` in).
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from dataclasses import dataclass

from storage.errors import InvalidParameterValue

UTC = "UTC"
_UTC_ALIASES = {"utc", "z", "zulu", "universal", "+00", "+00:00", "0", "etc/utc", "uct"}
_NUMERIC = re.compile(r"^[+-]?\d+(\.\d+)?$")
_SHOWN_OFFSET = re.compile(r"^<([+-])(\d\d)(?::(\d\d))?>[+-]\d\d(?::\d\d)?$")


@dataclass(frozen=True, slots=True)
class SessionZone:
    """A checked zone: SHOW's text, DuckDB's zone name and Arrow's tz string."""

    display: str
    duckdb: str
    arrow: str

    @property
    def is_utc(self) -> bool:
        return self.arrow == UTC


UTC_ZONE = SessionZone(UTC, UTC, UTC)


@functools.cache
def _by_lower_name() -> dict[str, str]:
    names = zoneinfo.available_timezones()
    return {name.lower(): name for name in names}


def _fixed(hours: float) -> SessionZone:
    """``SET TIME ZONE -5``: hours east of Greenwich, shown as PostgreSQL's POSIX form."""
    seconds = round(hours * 3600)
    if abs(seconds) >= 15 * 3600 or seconds % 60:
        raise InvalidParameterValue(f'invalid value for parameter "TimeZone": "{hours:g}"')
    sign = "+" if seconds >= 0 else "-"
    hh, mm = divmod(abs(seconds) // 60, 60)
    clock = f"{hh:02d}" + (f":{mm:02d}" if mm else "")
    posix_sign = "-" if sign == "+" else "+"
    display = f"<{sign}{clock}>{posix_sign}{clock}"
    offset = f"{sign}{hh:02d}:{mm:02d}"
    return SessionZone(display, f"GMT{offset}", offset)


@functools.lru_cache(maxsize=256)
def session_zone(value: str) -> SessionZone:
    """The zone ``SET TimeZone`` names; 22023 for a name PostgreSQL would not know."""
    text = value.strip()
    if text.lower() in _UTC_ALIASES:
        return UTC_ZONE if text.lower() != "etc/utc" else SessionZone("Etc/UTC", UTC, UTC)
    if _NUMERIC.match(text):
        return _fixed(float(text))
    shown = _SHOWN_OFFSET.match(text)
    if shown:  # SHOW's own spelling of a fixed offset, set again
        sign, hours, minutes = shown.groups()
        return _fixed((int(hours) + int(minutes or 0) / 60) * (-1 if sign == "-" else 1))
    name = _by_lower_name().get(text.lower())
    if name is None:
        raise InvalidParameterValue(f'invalid value for parameter "TimeZone": "{value}"')
    return SessionZone(name, name, name)
