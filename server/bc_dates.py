"""Dates and timestamps before 1 AD in text: PostgreSQL's ``0044-03-15 BC``.

Arrow spells such a value with its astronomical year (``-0043-03-15``: 1 BC is
year 0); PostgreSQL writes the year counted back from 1 AD and ``BC`` after
everything else, the zone offset included.  Only the rows whose text starts
with a year at or below zero are respelt, one by one: such values are rare,
and a column without any value near 1 AD (its minimum, on the numbers) is not
looked at.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ASTRONOMICAL = re.compile(r"^(-?)(\d{4,})(-.*)$")
_AT_OR_BELOW_ZERO = r"^(-\d|0000-)"


FIRST_AD_DAY = -719_162
"""0001-01-01 in days since 1970-01-01."""
FIRST_AD_MICROS = FIRST_AD_DAY * 86_400_000_000
_ZONE_MARGIN_MICROS = 86_400_000_000
"""A day: a UTC instant early on 1 January 1 AD is still 1 BC in a zone west of Greenwich."""


def date_candidates(days: np.ndarray) -> bool:
    return bool(len(days)) and bool(days.min() < FIRST_AD_DAY)


def timestamp_candidates(micros: np.ndarray) -> bool:
    return bool(len(micros)) and bool(micros.min() < FIRST_AD_MICROS + _ZONE_MARGIN_MICROS)


def with_era(text: pa.Array, candidates: bool = True) -> pa.Array:
    """``text`` (ISO spellings) with years at or below zero written as PostgreSQL's BC years;
    ``candidates`` False (no value near or before 1 AD, checked on the numbers) skips it."""
    if not candidates:
        return text
    early = pc.fill_null(pc.match_substring_regex(text, _AT_OR_BELOW_ZERO), False)
    if not pc.any(early).as_py():
        return text
    spelled = [_bc(value) for value in text.filter(early).to_pylist()]
    return pc.replace_with_mask(text, early, pa.array(spelled, text.type))


def _bc(value: str) -> str:
    match = _ASTRONOMICAL.match(value)
    if match is None:
        return value
    sign, digits, rest = match.groups()
    year = 1 + int(digits) if sign else 1 - int(digits)
    return f"{year:04d}{rest} BC"
