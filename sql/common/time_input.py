"""PostgreSQL's time and timetz input, spelt as the ``HH:MM:SS[.ffffff][+HH:MM]`` DuckDB reads.

DuckDB reads only ``[date ]HH:MM:SS[.frac]`` (with a zone for timetz); PostgreSQL's
time_in also takes ``HH:MM`` with a zone, the undelimited ``1230`` and ``083015.25``,
``12:30 pm``, a leading ``T``, a date before the time, ``allballs``, and ``24:00:00``
(the end of the day, kept as such).  ``time_spelling`` rewrites such a value so DuckDB
reads what PostgreSQL reads: fractions rounded to microseconds, AM/PM applied, a
zone dropped for ``time`` and kept for ``timetz``.  A value whose fields are well formed
but out of range (``13:30 pm``, ``24:00:01``) fails with 22008 as there; anything
else it does not recognise is left to DuckDB unchanged.
"""

from __future__ import annotations

import re

from storage.errors import DatetimeFieldOverflow

_TIME = re.compile(
    r"""
    (?:\d{3,}-\d{1,2}-\d{1,2}[\sT]+)?          # a date PostgreSQL reads and drops
    t?
    (?:
        (?P<h>\d{1,2}):(?P<m>\d{1,2})(?::(?P<s>\d{1,2})(?P<f>\.\d*)?)?
      | (?P<hh>\d\d)(?P<mm>\d\d)(?:(?P<ss>\d\d)(?P<ff>\.\d*)?)?
    )
    \s*(?P<meridiem>am|pm)?
    \s*(?P<zone>z|utc|gmt|zulu|[+-]\d{1,2}(?::?\d\d){0,2})?
    """,
    re.VERBOSE,
)
_DAY_MICROS = 86_400_000_000


def time_spelling(text: str, *, with_zone: bool) -> str | None:
    """``text`` as DuckDB's ``time`` (or ``timetz`` with ``with_zone``) input, or None to
    leave it to DuckDB."""
    lowered = text.strip().lower()
    if lowered == "allballs":
        return "00:00:00+00" if with_zone else "00:00:00"
    match = _TIME.fullmatch(lowered)
    if match is None:
        return None
    hour = int(match["h"] or match["hh"])
    minute = int(match["m"] or match["mm"])
    second = int(match["s"] or match["ss"] or 0)
    fraction = match["f"] or match["ff"] or ""
    meridiem = match["meridiem"]
    if meridiem is not None:
        if hour > 12:
            raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
        hour = hour % 12 + (12 if meridiem.startswith("p") else 0)
    micros = round(float("0" + fraction) * 1_000_000) if fraction not in ("", ".") else 0
    total = ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros
    if minute > 59 or second > 60 or total > _DAY_MICROS:
        raise DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
    spelt = clock_text(total)
    zone = match["zone"]
    if with_zone and zone is not None:
        spelt += _offset(zone)
    return spelt


def clock_text(micros: int) -> str:
    """Microseconds since midnight as ``HH:MM:SS[.ffffff]`` (24:00:00 at the day's end)."""
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    spelt = f"{hour:02d}:{minute:02d}:{second:02d}"
    return spelt + f".{fraction:06d}".rstrip("0") if fraction else spelt


def _offset(zone: str) -> str:
    """A zone as ``+HH:MM[:SS]`` (DuckDB does not read ``+0200``)."""
    if zone[0] not in "+-":
        return "+00"
    digits = zone[1:].replace(":", "")
    if ":" in zone[1:]:
        parts = zone[1:].split(":")
    elif len(digits) <= 2:
        parts = [digits]
    else:
        hours_width = len(digits) - (4 if len(digits) > 4 else 2)
        parts = [
            digits[:hours_width],
            digits[hours_width : hours_width + 2],
            digits[hours_width + 2 :],
        ]
    hours, *rest = (int(p) for p in parts if p)
    if hours > 15 or any(v > 59 for v in rest):
        raise DatetimeFieldOverflow(f'time zone displacement out of range: "{zone}"')
    return zone[0] + ":".join(f"{v:02d}" for v in (hours, *rest))
