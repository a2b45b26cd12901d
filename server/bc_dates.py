"""Dates and timestamps before 1 AD in text: PostgreSQL's ``0044-03-15 BC``.

Arrow spells such a value with its astronomical year (``-0043-03-15``: 1 BC is
year 0); PostgreSQL writes the year counted back from 1 AD and ``BC`` after
everything else, the zone offset included.  Only the rows whose text starts
with a year at or below zero are respelt, one by one: such values are rare,
and the check costs the others one prefix match.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

_ASTRONOMICAL = re.compile(r"^(-?)(\d{4,})(-.*)$")
_AT_OR_BELOW_ZERO = r"^(-\d|0000-)"


def with_era(text: pa.Array) -> pa.Array:
    """``text`` (ISO spellings) with years at or below zero written as PostgreSQL's BC years."""
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
