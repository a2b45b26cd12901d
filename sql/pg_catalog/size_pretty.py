"""pg_size_pretty: PostgreSQL 15's rendering of a byte count, for bigint and numeric.

The catalog DuckDB passes the value as text with DuckDB's type name, so one
function serves both of PostgreSQL's: integers are divided as int8 is, a
DECIMAL as numeric is (exact, truncating division; its fraction shown while
the unit is bytes).  A DOUBLE has no pg_size_pretty (42883), and an untyped
literal, NULL or an integer narrower than bigint fits both (42725), as in
PostgreSQL.
"""

from __future__ import annotations

import decimal
from typing import NamedTuple

from storage.errors import AmbiguousFunction, UndefinedFunction


class _Unit(NamedTuple):
    name: str
    limit: int
    """Use this unit below this size (in the previous unit's halves, when it rounds)."""
    rounds: bool
    bits: int


_UNITS = (
    _Unit("bytes", 10 * 1024, False, 0),
    _Unit("kB", 20 * 1024 - 1, True, 10),
    _Unit("MB", 20 * 1024 - 1, True, 20),
    _Unit("GB", 20 * 1024 - 1, True, 30),
    _Unit("TB", 20 * 1024 - 1, True, 40),
    _Unit("PB", 20 * 1024 - 1, True, 50),
)
_AMBIGUOUS = {
    "VARCHAR": "unknown", "NULL": "unknown", '"NULL"': "unknown", "INTEGER": "integer",
    "SMALLINT": "smallint", "TINYINT": "smallint", "UTINYINT": "smallint",
    "USMALLINT": "integer",
}  # fmt: skip
"""Types PostgreSQL casts implicitly to both bigint and numeric: which to call is unclear."""


def _truncated(value: int, divisor: int) -> int:
    """C's integer division: toward zero."""
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient


def _pretty(size: int | decimal.Decimal) -> str:
    for index, unit in enumerate(_UNITS):
        magnitude = -size if size < 0 else size
        if index == len(_UNITS) - 1 or magnitude < unit.limit:
            if unit.rounds:
                size = _truncated(int(size) + (1 if size >= 0 else -1), 2)
            text = format(size.normalize(), "f") if isinstance(size, decimal.Decimal) else str(size)
            return f"{text} {unit.name}"
        following = _UNITS[index + 1]
        bits = following.bits - unit.bits - following.rounds + unit.rounds
        size = _truncated(int(size), 1 << bits)  # numeric_div_trunc drops the fraction
    raise AssertionError("the last unit always answers")


def size_pretty(text: str | None, duck_type: str | None) -> str | None:
    """pg_size_pretty of a value DuckDB computed as ``duck_type`` and gave as ``text``."""
    kind = (duck_type or "NULL").upper()
    if kind in _AMBIGUOUS:
        raise AmbiguousFunction(f"function pg_size_pretty({_AMBIGUOUS[kind]}) is not unique")
    if text is None:
        return None
    if kind in ("BIGINT", "UINTEGER"):
        return _pretty(int(text))
    if kind.startswith("DECIMAL") or kind in ("HUGEINT", "UBIGINT"):
        return _pretty(decimal.Decimal(text))
    name = "double precision" if kind == "DOUBLE" else kind.lower()
    raise UndefinedFunction(f"function pg_size_pretty({name}) does not exist")
